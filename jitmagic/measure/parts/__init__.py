"""The parts measured after flat against nested, and :func:`add_parts`, which runs them in the order
of :data:`jitmagic.model.parts.PARTS` under the measurement's one checkpoint."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ...model import parts as table
from ...model.comparison import Comparison
from ...model.notes import Warned
from ..lines.tables import add_lines
from ..scratch import ScratchFolderError
from . import advice, effort, orderings, second_start, xla_passes
from .constants import arguments as constant_arguments
from .run import PartRun


def _lines(result: Comparison, run: PartRun) -> Comparison:
    """``--lines``: the per-line tables, counted on what the comparison traced and lowered."""
    return add_lines(result, dict(run.prepared), run.built, check=run.check)


#: Each part's measurer by its name in the table of parts (the advice's is the attribution's).
MEASURERS: dict[str, Callable[[Comparison, PartRun], Comparison]] = {
    "orderings": orderings.add_part,
    "attribution": advice.add_part,
    "constant_arguments": constant_arguments.add_part,
    "second_start": second_start.add_part,
    "xla_passes": xla_passes.add_part,
    "effort": effort.add_part,
    "lines": _lines,
}


def add_parts(result: Comparison, run: PartRun) -> Comparison:
    """``result`` with every part ``run.options`` ask for, in order, until one stops."""
    for part in table.PARTS:
        if result.stopped_anywhere:
            break
        measure = MEASURERS.get(part.name)
        if measure is not None and part.asked(run.options):
            try:
                result = measure(result, run)
            except ScratchFolderError as exc:
                result = dataclasses.replace(result, warned=(
                    *result.warned, Warned("part_not_measured", part.name, str(exc))))
    return result

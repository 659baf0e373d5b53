"""The parts after flat against nested, measured in the table's order.

What each part is lives in the one table (:data:`jitmagic.model.parts.PARTS`); this
module runs it: every part the options ask for (or, for a part the comparison finds
wanted, whose measurer then decides) gets the comparison so far and one
:class:`PartRun`, under the measurement's one checkpoint. Once anything stops, nothing
after it starts. A part that cannot make its scratch folder (the temp folder is not
usable: :class:`~.scratch.ScratchFolderError`) is skipped with a note saying why and
what to do; the comparison and the other parts stand.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...model import parts as table
from ...model.comparison import Comparison
from ...model.notes import Warned
from ...options import Options
from ..sampling.lockstep import lockstep_of
from ..sampling.rounds import FEWEST
from ..sampling.stops import Checkpoint
from ..scratch import ScratchFolderError
from ..variants.rows import Prepared
from ..variants.rows import Staged


@dataclass(frozen=True)
class PartRun:
    """What a part's measurer may read: the prepared variants, the programs the
    comparison traced and lowered (``built``, by variant), the batch for ``--vmap``
    (None without it), the options and the measurement's checkpoint."""

    prepared: Mapping[str, Prepared]
    built: Mapping[str, Staged]
    batched: Any
    options: Options
    check: Checkpoint

    @property
    def flat(self) -> Prepared:
        return self.prepared["flat"]


#: The most rounds a part after the comparison takes (its share of the time stays small):
#: as many as the comparison's cold runs (:func:`rounds_like`), from auto's fewest.
MOST_PART_ROUNDS = 5


def rounds_like(result: Comparison) -> int:
    """As many rounds as ``result``'s cold runs, from ``-r auto``'s fewest (the rule
    decides nothing with fewer) to :data:`MOST_PART_ROUNDS`."""
    runs = max((len(v.samples.get("first_call_s", [])) for v in result.variants.values()),
               default=0)
    return min(MOST_PART_ROUNDS, max(FEWEST, runs))


def add_parts(result: Comparison, run: PartRun) -> Comparison:
    """``result`` with every part ``run.options`` ask for measured into it, in the
    table's order, until one stops (its record then says so)."""
    for part in table.PARTS:
        measure = part.measurer()
        if result.stopped_anywhere:
            break
        if measure is not None and part.asked(run.options):
            try:
                result = measure(result, run)
            except ScratchFolderError as exc:
                result = dataclasses.replace(result, warned=(
                    *result.warned, Warned("part_not_measured", part.name, str(exc))))
    return result


def in_one_process_only(part: table.Part, check: Checkpoint) -> Warned | None:
    """The note of a found part left out because several processes share the
    measurement (None: it runs): one that runs in one process only cannot be measured
    in step with the others."""
    processes = lockstep_of(check).count
    if processes <= 1 or part.processes != table.ONE_PROCESS:
        return None
    return Warned("one_process_only", part.name, processes)


def later_labels(options: Options, found: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The parts still to run after the comparison, as progress lists them."""
    return table.later_labels(options, found)

"""``--lines``: the table of parts' entry for the per-line tables
(:mod:`jitmagic.measure.lines`, which ``jitmagic.lines`` also calls on its own)."""

from __future__ import annotations

from ...model.comparison import Comparison
from ..lines.tables import add_lines
from .run import PartRun


def add_part(result: Comparison, run: PartRun) -> Comparison:
    """The table of parts' entry (:data:`jitmagic.model.parts.PARTS`): the per-line
    tables, counted on what the comparison traced and lowered."""
    return add_lines(result, dict(run.prepared), run.built, check=run.check)

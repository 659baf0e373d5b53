"""What every part after flat against nested is given (:class:`PartRun`) and shares: the one rule
for its rounds (:func:`part_rounds`), and whether it runs under several processes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...model import parts as table
from ...model.comparison import Comparison
from ...model.notes import Warned
from ...options import Options
from ...options.values import AUTO
from ..sampling.lockstep import lockstep_of
from ..sampling.rounds import FEWEST, Rounds, budget_of
from ..sampling.stops import Checkpoint
from ..variants.rows import Prepared, Staged


@dataclass(frozen=True)
class PartRun:
    """What a part's measurer may read: variants, traced programs, batch, options, checkpoint."""

    prepared: Mapping[str, Prepared]
    built: Mapping[str, Staged]
    batched: Any
    options: Options
    check: Checkpoint

    @property
    def flat(self) -> Prepared:
        return self.prepared["flat"]


#: The most rounds a part after the comparison takes (its share of the time stays small).
MOST_PART_ROUNDS = 5


def part_rounds(result: Comparison, options: Options) -> Rounds:
    """The rounds of every part: ``-r auto``'s, capped, while time allows (``decided``: its own)."""
    runs = max((len(v.samples.get("first_call_s", [])) for v in result.variants.values()),
               default=0)
    return Rounds(AUTO, budget_s=budget_of(options), cap=min(MOST_PART_ROUNDS, max(FEWEST, runs)))


def in_one_process_only(part: table.Part, check: Checkpoint) -> Warned | None:
    """The note of a part left out because several processes share the measurement, or None."""
    processes = lockstep_of(check).count
    if processes <= 1 or part.processes != table.ONE_PROCESS:
        return None
    return Warned("one_process_only", part.name, processes)

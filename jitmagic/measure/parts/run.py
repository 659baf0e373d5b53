"""What every part after flat against nested is given and shares: the measurement's
inputs (:class:`PartRun`), the one rule for a part's rounds and budget
(:func:`part_rounds`), and whether it runs under several processes. The parts are run
in the table's order by :func:`jitmagic.measure.parts.add_parts`.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...model import parts as table
from ...model.comparison import Comparison
from ...model.notes import Warned
from ...options import Options
from ...options.values import AUTO
from ..sampling.lockstep import lockstep_of
from ..sampling.rounds import FEWEST
from ..sampling.rounds import Rounds
from ..sampling.rounds import budget_of
from ..sampling.stops import Checkpoint
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


def part_rounds(result: Comparison, options: Options,
                decided: Callable[[], bool] = lambda: False) -> Rounds:
    """The one rule for the rounds of every part after the comparison (``--effort``,
    ``--cache``'s second start, the big constants passed as arguments; in a sweep, at
    each value that runs them): ``-r auto``'s, at least its fewest rounds, then one more
    while ``decided()`` says the samples so far do not settle the part, up to
    :func:`rounds_like` ``result``, and none that would take the part past ``--budget``
    seconds at its pace so far (:func:`~.sampling.rounds.budget_of`: as given, else
    the backend's), as the comparison's own rounds read it. Its ``ended`` then says why
    the rounds ended (the part's record keeps it: ``rounds_ended``)."""
    return Rounds(AUTO, decided, budget_s=budget_of(options), cap=rounds_like(result))


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

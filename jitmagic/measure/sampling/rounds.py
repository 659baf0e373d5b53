"""How many rounds a sampler takes: a fixed ``-r N``, or ``-r auto``'s rule.

``-r auto`` takes at least :data:`FEWEST` rounds, then one more at a time until the
significance rule decides (:attr:`~jitmagic.model.stats.rule.Difference.decided`), up to
:data:`MOST` rounds (:data:`MOST_BUSY` on a busy machine, where CPU time decides and
each run tells less) or until the next round would overrun its time budget. The rule
is sequential: its false differences stay under 1% over all these looks
(docs/significance.md), so asking it after every round is honest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Protocol

from ... import backends
from ...backends import CPU
from ...model.stats.rule import MAX_PAIRS
from ...model.stats.rule import MAX_PAIRS_BUSY
from ...model.stats.rule import MIN_PAIRS
from ...model.stats.verdicts import BUDGET
from ...model.stats.verdicts import DECIDED
from ...model.stats.verdicts import MOST_ROUNDS
from ...options import Options
from ...options.values import AUTO
from . import clocks


class Shares(Protocol):
    """What rounds need of several processes measuring in step: one decision for all
    (:class:`~.lockstep.Lockstep` is one; nothing here imports it)."""

    def decide(self, what: str, value: Any) -> Any: ...

#: ``-r auto``: the fewest and the most rounds (on a busy machine, the most there), those
#: the rule is calibrated for.
FEWEST, MOST, MOST_BUSY = MIN_PAIRS, MAX_PAIRS, MAX_PAIRS_BUSY


@dataclass
class Rounds:
    """A sampler's rounds: ``repeat`` (a count or :data:`~jitmagic.options.values.AUTO`);
    with auto, ``decided()`` says whether the samples so far settle the question,
    ``busy()`` (asked after it) whether they were taken on a busy machine, and
    ``budget_s`` bounds the time the rounds take."""

    repeat: int | str = AUTO
    decided: Callable[[], bool] = lambda: False
    busy: Callable[[], bool] = lambda: False
    budget_s: float = CPU.budget_s
    #: Why auto's rounds ended (:data:`DECIDED`, :data:`MOST_ROUNDS`, :data:`BUDGET`);
    #: None with a fixed count, or while they run.
    ended: str | None = None
    #: Under several processes, how they share auto's decision (process 0's is taken).
    lockstep: Shares | None = None
    #: With auto, the most rounds a part takes whatever the machine (None: auto's own):
    #: a part measured after the comparison keeps its share of the time small.
    cap: int | None = None
    _began: float = field(default_factory=clocks.wall)

    @property
    def auto(self) -> bool:
        return self.repeat == AUTO

    @property
    def most(self) -> int:
        """The most rounds these can take so far (the count itself where it is fixed):
        with auto, more once the samples say the machine is busy."""
        if not self.auto:
            return int(self.repeat)
        most = MOST_BUSY if self.busy() else MOST
        return most if self.cap is None else min(most, self.cap)

    def start(self) -> None:
        self._began, self.ended = clocks.wall(), None

    def ends(self) -> float:
        """When (``clocks.wall()``) no further round may start: the budget's end."""
        return self._began + self.budget_s if self.auto else float("inf")

    def another(self, done: int) -> bool:
        """Whether to take round ``done + 1`` after ``done`` rounds (sets ``ended``)."""
        if not self.auto:
            return done < self.most
        if done < FEWEST:
            return True
        if self.decided():
            self.ended = DECIDED
        elif done >= self.most:
            self.ended = MOST_ROUNDS
        elif (clocks.wall() - self._began) * (done + 1) / done > self.budget_s:
            self.ended = BUDGET  # one more round at the pace so far would overrun
        if self.lockstep is not None:
            self.ended = self.lockstep.decide("whether to take another round", self.ended)
        return self.ended is None


def rounds_for(options: Options, decided: Callable[[], bool] = lambda: False,
               lockstep: Shares | None = None,
               busy: Callable[[], bool] = lambda: False) -> Rounds:
    """The one way a sampler's rounds are made: ``options``' repeat and budget, and with
    ``-r auto`` ``decided`` (whether the samples so far settle the question) and ``busy``
    (whether they were taken on a busy machine, as ``decided`` last found)."""
    return Rounds(options.repeat, decided, busy, budget_of(options), lockstep=lockstep)


def budget_of(options: Options) -> float:
    """``--budget``'s seconds: as given, else the running backend's."""
    return options.budget if options.budget is not None else backends.running().budget_s


def rounds_of(repeat: int | str | Rounds) -> Rounds:
    """``repeat`` as :class:`Rounds` (a bare count or ``"auto"`` decides nothing)."""
    return repeat if isinstance(repeat, Rounds) else Rounds(repeat)

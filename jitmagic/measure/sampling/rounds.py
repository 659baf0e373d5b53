"""How many rounds a sampler takes: a fixed ``-r N``, or ``-r auto``'s rule.

``-r auto`` takes at least :data:`FEWEST` rounds, then one at a time until the
significance rule decides, up to :data:`MOST` (:data:`MOST_BUSY` on a busy machine) or
until the next round would overrun the budget. The rule is sequential (false
differences under 1% over all looks, docs/significance.md), so asking after every
round is honest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ... import backends
from ...backends import CPU
from ...model.stats.rule import MAX_PAIRS, MAX_PAIRS_BUSY, MIN_PAIRS
from ...model.stats.verdicts import BUDGET, DECIDED, MOST_ROUNDS
from ...options import Options
from ...options.values import AUTO
from . import clocks, fresh


class Shares(Protocol):
    """One decision for all processes measuring in step (:class:`~.lockstep.Lockstep`)."""

    def decide(self, what: str, value: Any) -> Any: ...


#: ``-r auto``'s fewest and most rounds (and most on a busy machine), as the rule is
#: calibrated.
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
        """The most rounds so far (a fixed count itself; auto's grows on a busy machine)."""
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
    """A sampler's rounds from ``options``' repeat and budget, with ``decided`` and
    ``busy`` as :class:`Rounds` takes them."""
    return Rounds(options.repeat, decided, busy, budget_of(options), lockstep=lockstep)


def budget_of(options: Options) -> float:
    """``--budget``'s seconds: as given, else where fresh processes take the samples
    (:mod:`.fresh`) their budget, else the running backend's."""
    if options.budget is not None:
        return options.budget
    return backends.FRESH_BUDGET_S if fresh.children() else backends.running().budget_s


def rounds_of(repeat: int | str | Rounds) -> Rounds:
    """``repeat`` as :class:`Rounds` (a bare count or ``"auto"`` decides nothing)."""
    return repeat if isinstance(repeat, Rounds) else Rounds(repeat)

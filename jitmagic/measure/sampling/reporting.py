"""Where a measurement is and how long it has left (from the pace so far): the
:class:`~jitmagic.model.progress.Progress` a front end's ``draw`` is told before each
stage."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...model.progress import Draw, Progress
from . import clocks
from .rounds import FEWEST


@dataclass(frozen=True)
class Position:
    """The part being measured (``what``), its ``row`` and round ``round`` of ``rounds``."""

    what: str = "comparison"
    row: str | None = None
    round: int = 0
    rounds: int = 0
    noun: str = "variant"  # what a row is called in a stop reason
    at_most: bool = False  # ``rounds`` is the most rounds (-r auto), not the count


@dataclass(frozen=True)
class PartPace:
    """One part's pace: when it began, units done of units in all."""

    what: str = ""
    began: float = 0.0
    done: int = 0
    total: int = 0


@dataclass(frozen=True)
class SweepPace:
    """A sweep's pace: when it began, points done of points in all, when this point began."""

    began: float
    done: int
    count: int
    point_began: float


@dataclass
class Reporter:
    """Tells ``draw`` where the measurement of ``entry`` is (nothing without one)."""

    entry: str = ""
    started: float = field(default_factory=clocks.wall)
    draw: Draw | None = None
    point: str | None = None  # a sweep's current value
    where: Position = field(default_factory=Position)
    part: PartPace = field(default_factory=PartPace)
    sweep: SweepPace | None = None
    #: The parts to run after the comparison, in order (told with every progress line).
    parts: tuple[str, ...] = ()
    #: With -r auto: when no further round starts (``clocks.wall()``), the budget's end.
    budget_ends: float = float("inf")
    #: Where set, the stage told whatever stage runs (an untimed run's: ``WARM_UP``).
    told_as: str | None = None

    def at(self, what: str, row: str | None = None, round: int = 0, rounds: int = 0,
           noun: str = "variant", units: tuple[int, int] = (0, 0),
           at_most: bool = False) -> None:
        """Where the measurement is: ``what`` part, ``row``, round ``round`` of ``rounds``
        (``at_most``: of at most that many); ``units`` (done, in all) of the part."""
        self.where = Position(what, row, round, rounds, noun, at_most)
        began = clocks.wall() if self.part.what != what or units[0] == 0 \
            else self.part.began
        self.part = PartPace(what, began, *units)

    def sweep_at(self, label: str, index: int, count: int) -> None:
        """A sweep is about to measure its value ``index`` (from 0) of ``count``."""
        now = clocks.wall()
        began = now if self.sweep is None else self.sweep.began
        self.sweep = SweepPace(began, index, count, now)
        self.point = f"{label} {index + 1}/{count}"

    def position(self) -> str:
        """Where it is, as a stop reason says it: ``the flat variant's run 2 of 3``."""
        w = self.where
        if w.row is None:
            return f"the {w.what}"
        return f"the {w.row} {w.noun}'s {self.run()}"

    def run(self) -> str:
        """``run 2 of 3``, or with -r auto ``run 4 of at most 9``."""
        w = self.where
        return f"run {w.round} of {'at most ' * w.at_most}{w.rounds}"

    def tell(self, stage: str) -> None:
        """Give ``draw`` a :class:`Progress` for ``stage``."""
        if self.draw is None:
            return
        w, now = self.where, clocks.wall()
        self.draw(Progress(self.entry, w.what, self.told_as or stage, now - self.started, w.row,
                           w.round, w.rounds, self._left(now), self.point, False, w.at_most,
                           self._later(), w.at_most and w.round > FEWEST))

    def _rows(self) -> int:
        """The rows of one round of the current part."""
        return self.part.total // max(self.where.rounds, 1)

    def _later(self) -> tuple[str, ...]:
        """The parts after the one now running."""
        part = self.where.what
        return self.parts[self.parts.index(part) + 1:] if part in self.parts else self.parts

    def _left(self, now: float) -> float | None:
        """Seconds left, from the pace so far: of the sweep once one point has run,
        else of the current part once one round of it has run."""
        if self.sweep is not None and self.sweep.done > 0:
            s = self.sweep
            return max(0.0, (s.point_began - s.began) / s.done * s.count - (now - s.began))
        if self.where.round < 2 or self.part.done == 0:
            return None
        total, pace = self.part.total, (now - self.part.began) / self.part.done
        if self.where.at_most and self.where.round <= FEWEST:  # -r auto: its fewest rounds
            total = min(total, self._rows() * FEWEST)
        left = pace * max(0, total - self.part.done)
        if self.where.at_most and self.where.round > FEWEST:  # undecided: to the most rounds
            left = min(left, max(0.0, self.budget_ends - now) + pace * self._rows())
        return left

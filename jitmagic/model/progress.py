"""Where a running measurement is: the one record every progress display draws.

Measuring code emits a :class:`Progress` between timed intervals (never inside
one); the front ends draw it (a notebook display updated in place, or stderr).
Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    """One step of a measurement, told before the step starts.

    ``what`` is the part being measured (comparison, orderings, attribution,
    advice, sweep); ``row`` the variant, ordering or advice set; ``round`` of
    ``rounds`` the round it is in (1-based); ``stage`` the step about to run
    (tracing, lowering, XLA compile, first call, steady state). ``left_s`` is an
    estimate of the time left, known once one round of the part has run.
    ``point`` names a sweep's value (``n=4 2/5``); ``done`` marks the last event.
    """

    entry: str
    what: str
    stage: str
    elapsed_s: float
    row: str | None = None
    round: int = 0
    rounds: int = 0
    left_s: float | None = None
    point: str | None = None
    done: bool = False
    at_most: bool = False  # ``rounds`` is the most rounds -r auto takes
    #: The parts still to run after this one (orderings, advice, lines): the estimate
    #: ``left_s`` is of this part only, and the line says what follows it.
    later: tuple[str, ...] = ()
    #: ``left_s`` is of the most rounds -r auto may still take (past its fewest rounds: it
    #: may stop sooner). An estimate from the pace so far, never a bound: a round to come
    #: may take longer than those before it, so it is said "~", not "at most" (an "at
    #: most 65 s left" rose to 67 s on the constants part).
    at_most_left: bool = False

    def line(self) -> str:
        """``jitcompare g: flat 2/3 · XLA compile · 4.1 s elapsed, ~6 s left``."""
        head = f"jitcompare {self.entry}".rstrip() + (f" [{self.point}]" if self.point else "")
        if self.done:
            return f"{head}: measured in {self.elapsed_s:.1f} s"
        where = self.what if self.what != "comparison" else ""
        if self.row is not None:
            where = f"{where} {self.row}".strip()
            most = "≤" if self.at_most else ""
            where += f" {self.round}/{most}{self.rounds}" if self.rounds else ""
        left = ""
        if self.left_s is not None:
            of_part = f" of the {self.what}" if self.later else ""
            sooner = ", less if it decides sooner" if self.at_most_left else ""
            left = f", ~{self.left_s:.0f} s left{of_part}{sooner}"
        if self.later:
            left += f", then {', '.join(self.later)}"
        parts = [p for p in (where, self.stage) if p]
        return f"{head}: {' · '.join(parts)} · {self.elapsed_s:.1f} s elapsed{left}"


#: What draws progress: called with each :class:`Progress` (front ends supply one).
Draw = Callable[[Progress], None]

"""Where a running measurement is: the one record every progress display draws.

Measuring code emits a :class:`Progress` between timed intervals (never inside
one); the front ends draw it (a notebook display updated in place, or stderr).
Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .shown import worded


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
        """The line a progress display draws (as the registered renderer words it,
        :func:`jitmagic.render.progress.line`)."""
        return worded("line", self) or self.what


#: What draws progress: called with each :class:`Progress` (front ends supply one).
Draw = Callable[[Progress], None]

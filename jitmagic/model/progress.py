"""Where a running measurement is: the one record every progress display draws; and how
a process measuring ended.

Measuring code emits a :class:`Progress` between timed intervals (never inside
one); the front ends draw it (a notebook display updated in place, or stderr). A fresh
child process (:mod:`jitmagic.measure.children` runs them) ends with its result, a
Python error, a signal, a status before its end, the timeout, or no start at all
(:data:`ChildEnd`): facts only, worded by :mod:`jitmagic.render.progress`. Standard library only.
"""

from __future__ import annotations

import re
import signal as signals
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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


#: A fatal line of Abseil's or glog's log (libtpu's and XLA's ``F1206 07:08:23.212953
#: 5415 target.cc:1735] Check failed: ...``): its severity, date, time, thread and
#: source location before ``]``.
_FATAL = re.compile(r"^F\d{4} [0-9:.]+\s+\d+ [^\]]+\] (?P<said>.+)$")


class Said:
    """``str()`` is the registered renderer's sentence (:mod:`jitmagic.render.progress`)."""

    def __str__(self) -> str:
        return worded("text", self) or type(self).__name__


@dataclass(frozen=True)
class Finished(Said):
    """It ran to its end: the entry's result (JSON's values), or a script's exit status."""

    result: Any
    stage: str | None = None  # the last stage it said it had entered


@dataclass(frozen=True)
class Failed(Said):
    """The entry raised: the exception's type and message, in the stage it was in."""

    error_type: str  # "ValueError"
    message: str
    stage: str | None = None


@dataclass(frozen=True)
class Crashed(Said):
    """A signal ended it (a segmentation fault, an abort of native code): which, the last
    stage it said it had entered, and the last lines of what it wrote on stderr."""

    signal: int
    stage: str | None = None
    stderr_tail: tuple[str, ...] = ()
    #: What native code said as it aborted (:func:`fatal_of`), None where it said nothing.
    fatal: str | None = None

    @property
    def signal_name(self) -> str:
        """``SIGSEGV``, or ``signal 77`` for one Python does not name."""
        try:
            return signals.Signals(self.signal).name
        except ValueError:
            return f"signal {self.signal}"


@dataclass(frozen=True)
class EndedEarly(Said):
    """A script ended the process before it got to its end (``os._exit`` in the code it
    ran): its exit status, and the last stage it said it had entered."""

    status: int
    stage: str | None = None


@dataclass(frozen=True)
class TimedOut(Said):
    """It ran past its time and was killed (its whole process group), in this stage."""

    seconds: float
    stage: str | None = None


@dataclass(frozen=True)
class CouldNotStart(Said):
    """No process started: the operating system's reason (no such Python)."""

    python: str
    reason: str


def fatal_of(lines: list[str]) -> str | None:
    """The last fatal log line of ``lines`` without its prefix (``Check failed:
    Topology()->chip_bounds().z == 1 (2 vs. 1)``), None where there is none."""
    for line in reversed(lines):
        found = _FATAL.match(line.strip())
        if found:
            return found["said"].strip()
    return None


#: Every way a child ends.
ChildEnd = Finished | Failed | Crashed | EndedEarly | TimedOut | CouldNotStart

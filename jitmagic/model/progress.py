"""Where a running measurement is (:class:`Progress`), and how a measuring child ended."""

from __future__ import annotations

import re
import signal as signals
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .shown import worded


@dataclass(frozen=True)
class Progress:
    """One step of a measurement, told before it starts (``done`` marks the last)."""

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
    later: tuple[str, ...] = ()  # the parts still to run after this one
    #: ``left_s`` is of the most rounds -r auto may still take (an estimate, never a bound).
    at_most_left: bool = False

    def line(self) -> str:
        """The line a progress display draws."""
        return worded("line", self) or self.what


#: The stage an untimed run is told as, whatever stages it runs.
WARM_UP = "warm-up"

#: What draws progress: called with each :class:`Progress` (front ends supply one).
Draw = Callable[[Progress], None]


#: A variant's round in a stage (``jitcompare g: nested 2/3 · first call``).
_ROUND = re.compile(r"\b(flat|nested) \d+/")
#: A fatal line of Abseil's or glog's log (``F1206 07:08:23.212953 5415 target.cc:1735]``).
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
    """A signal ended it: which, the last stage it entered, its stderr's last lines, and the
    user's frames in Python's dump of its threads (``faulthandler``'s, most recent first)."""

    signal: int
    stage: str | None = None
    stderr_tail: tuple[str, ...] = ()
    fatal: str | None = None
    frames: tuple[str, ...] = ()

    @property
    def in_variant(self) -> bool:
        """Whether it died in a round of flat or nested (``nested 1/3 · first call``), not
        in what comes before the rounds (finding helpers, the leak check's trace)."""
        return bool(_ROUND.search(self.stage or ""))

    @property
    def signal_name(self) -> str:
        """``SIGSEGV``, or ``signal 77`` for one Python does not name."""
        try:
            return signals.Signals(self.signal).name
        except ValueError:
            return f"signal {self.signal}"


@dataclass(frozen=True)
class EndedEarly(Said):
    """A script ended the process before its end (``os._exit``): its status, its stage."""

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
    """The last fatal log line of ``lines`` without its prefix (None: there is none)."""
    for line in reversed(lines):
        found = _FATAL.match(line.strip())
        if found:
            return found["said"].strip()
    return None


#: Every way a child ends.
ChildEnd = Finished | Failed | Crashed | EndedEarly | TimedOut | CouldNotStart

"""How a fresh child process ended (:mod:`jitmagic.measure.children` runs them): its
result, a Python error, a signal, the timeout, or no start at all. Facts only; the
sentences are :mod:`jitmagic.render.progress`'s. Standard library only.
"""

from __future__ import annotations

import re
import signal as signals
from dataclasses import dataclass
from typing import Any

from .shown import worded

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
ChildEnd = Finished | Failed | Crashed | TimedOut | CouldNotStart

"""Drawing progress on stderr, and choosing what draws it for the Python API.

A terminal (stderr is a TTY) gets one line redrawn in place with ``\\r``; a log
(CI, a pipe) gets at most one line per stage. The notebook display is
:mod:`jitmagic.frontends.notebook_progress`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from typing import TextIO

from ..measure.sampling.lockstep import leads
from ..model.progress import Draw
from ..model.progress import Progress


class StderrProgress:
    """Progress on a stream (stderr by default): redrawn in place on a TTY, else one
    line per stage; :meth:`close` clears the line (or, in a log, says how long it took)."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.last: Progress | None = None
        self.at = 0.0
        self.shown: tuple | None = None
        self.width = 0

    def __call__(self, p: Progress) -> None:
        self.last, self.at = p, time.perf_counter()
        if self.tty:
            line = p.line()
            self.stream.write("\r" + line.ljust(self.width))
            self.width = len(line)
        else:
            key = (p.point, p.what, p.row, p.round, p.stage)
            if key == self.shown:
                return
            self.shown = key
            self.stream.write(p.line() + "\n")
        self.stream.flush()

    def close(self, finished: bool = True) -> None:
        """Leave nothing behind on a terminal; in a log, end with the time taken (where
        the measurement ``finished``: an error says why it did not)."""
        if self.last is None:
            return
        if self.tty:
            self.stream.write("\r" + " " * self.width + "\r")
        elif finished:
            elapsed = self.last.elapsed_s + time.perf_counter() - self.at
            self.stream.write(Progress(self.last.entry, "", "", elapsed, point=self.last.point,
                                       done=True).line() + "\n")
        self.stream.flush()


def drawer(progress: bool | Draw | None) -> Any:
    """What draws ``progress``: ``True`` stderr, ``False``/``None`` nothing, or the callable."""
    if progress is True:
        return StderrProgress()
    return progress or None


def close(draw: Any, finished: bool = True) -> None:
    """Finish a drawer that has a ``close`` (the stderr one); others need nothing."""
    if hasattr(draw, "close"):
        draw.close(finished)


@contextmanager
def drawing(draw: Any) -> Iterator[Any]:
    """``draw`` while the measurement runs, closed after: as finished where it returned,
    else without the log's "measured in" line (the error that follows says what ended it).
    Nothing in a process other than the first of several: process 0 shows the progress."""
    draw = draw if leads() else None
    try:
        yield draw
    except BaseException:
        close(draw, finished=False)
        raise
    close(draw)

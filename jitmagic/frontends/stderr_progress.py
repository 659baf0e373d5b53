"""Drawing progress on stderr (a terminal: one line redrawn in place; a log: at most one line per
stage), and choosing what draws it for the Python API."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from ..measure.sampling.lockstep import leads
from ..model.progress import Progress
from ..options import Options


class StderrProgress:
    """Progress on a stream (stderr): redrawn in place on a TTY, else a line per stage."""

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
        """Clear the line on a terminal; in a log, end with the time taken."""
        if self.last is None:
            return
        if self.tty:
            self.stream.write("\r" + " " * self.width + "\r")
        elif finished:
            elapsed = self.last.elapsed_s + time.perf_counter() - self.at
            self.stream.write(Progress(self.last.entry, "", "", elapsed, point=self.last.point,
                                       done=True).line() + "\n")
        self.stream.flush()


def progress_for(options: Options) -> StderrProgress | None:
    return None if options.quiet else StderrProgress()


def close(draw: Any, finished: bool = True) -> None:
    if hasattr(draw, "close"):
        draw.close(finished)


@contextmanager
def drawing(draw: Any) -> Iterator[Any]:
    """``draw`` (``True``: on stderr) while measuring, closed after; nothing in a process but the
    first of several."""
    draw = (StderrProgress() if draw is True else draw or None) if leads() else None
    try:
        yield draw
    except BaseException:
        close(draw, finished=False)
        raise
    close(draw)

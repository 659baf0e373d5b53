"""The watch's lines: each recompile said as it happens (each of a function's first
:data:`EACH`, then the 20th, 50th, 100th, ...), and the ledger last, on streams that may be
gone, closed or never read: such a stream gets nothing more and changes neither the exit
status nor the files. A live line is written as the program's own, and never raises."""

from __future__ import annotations

import contextlib
import os
import select
import sys
import threading
from collections.abc import Callable

from ...model.ledger.compiles import Compile
from ...render.ledger.values import live_line

#: How long one piece waits for a reader that has stopped reading, in seconds.
PATIENCE = 5.0
#: A pipe takes this much at once without blocking once it is writable (POSIX: 512 at least).
PIECE = getattr(select, "PIPE_BUF", 512)


def write(text: str, name: str = "stderr", last: bool = False) -> bool:
    """Write ``text`` and a newline on stderr (or stdout); False where it could not be.
    ``last``: a reader taking nothing for :data:`PATIENCE` seconds is given up, and a failed
    stream points nowhere after."""
    stream = getattr(sys, name)
    if stream is None:
        return False
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):  # no file (a test's capture): its own write
        with contextlib.suppress(Exception):
            stream.write(text + "\n")
            stream.flush()
            return True
        return False
    data = (text + "\n").encode(getattr(stream, "encoding", None) or "utf-8", "backslashreplace")
    try:
        stream.flush()  # what the program wrote before, in its order
        if _written(fd, data, PATIENCE if last else None):
            return True
    except OSError:
        pass
    if last:  # pointed at the null device from now on
        with contextlib.suppress(OSError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)
    return False


def _written(fd: int, data: bytes, patience: float | None) -> bool:
    """Write ``data`` a piece at a time once the reader takes it; False where it did not."""
    poll = select.poll() if patience is not None and hasattr(select, "poll") else None
    if poll is not None:
        poll.register(fd, select.POLLOUT)
    while data:
        if poll is not None:
            ready = poll.poll((patience or 0) * 1000)
            if not ready or ready[0][1] & (select.POLLERR | select.POLLHUP | select.POLLNVAL):
                return False
        data = data[os.write(fd, data[:PIECE]):]
    return True


#: Recompiles that each get a line; past them, only the 20th, 50th, 100th, 200th, ...
EACH = 10


def said(n: int) -> bool:
    """Whether the ``n``-th recompile gets its line."""
    digits = str(n)
    return n <= EACH or (digits[0] in "125" and set(digits[1:]) == {"0"})


class Live:
    """Counts the run's and each function's recompiles, and writes each :func:`said` line."""

    def __init__(self, write: Callable[[str], object] = write,
                 source_file: str | None = None,
                 name: Callable[[Compile], Compile] | None = None) -> None:
        self.write, self.source_file, self.name = write, source_file, name
        self.count = 0
        self._counts: dict[tuple[str, str | None], int] = {}
        self._lock = threading.Lock()

    def __call__(self, c: Compile) -> None:
        with self._lock:
            self.count += 1
            n = self._counts[c.key] = self._counts.get(c.key, 0) + 1
            run = self.count
        if not said(n):
            return
        try:
            shown = self.name(c) if self.name is not None else c
            self.write(live_line(shown, n, run, self.source_file))
        except Exception:  # noqa: BLE001 (a line that cannot be written never breaks the run)
            pass

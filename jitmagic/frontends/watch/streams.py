"""The watch's words on a stream that may be gone, closed or never read.

The ledger is the last thing a watched program writes, and what is written must not
decide how it ends: a reader that has gone (``2> >(head -c 100)``, a harness that closed
the pipe), a stream closed at start (``2>&-``: Python then has no ``sys.stderr``, and
``print(file=None)`` writes into the program's stdout) or a pipe nobody reads (a full
pipe would hold the exit forever) get nothing more, said nowhere, and the exit status
and the report files are the same as where it was read. While the program runs, a live
line is written as the program's own lines are (it waits where they would), never into
stdout, and never raises.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys

#: How long one piece waits for a reader that has stopped reading, in seconds.
PATIENCE = 5.0
#: A pipe takes this much at once without blocking once it is writable (POSIX: 512 at least).
PIECE = getattr(select, "PIPE_BUF", 512)


def write(text: str, name: str = "stderr", last: bool = False) -> bool:
    """Write ``text`` and a newline on ``sys.stderr`` (``name="stdout"``: stdout); False
    where it could not be. ``last``: the process is ending (the ledger): a reader that
    takes nothing for :data:`PATIENCE` seconds is given up, and a stream that failed is
    sent nowhere from then on (the interpreter's own last flush then neither fails, an
    exit status of 120, nor waits). Before that a line waits, and fails, as the
    program's own writes there do."""
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
    if last:
        _nowhere(fd)
    return False


def _written(fd: int, data: bytes, patience: float | None) -> bool:
    """Write ``data`` on ``fd``, a piece at a time, each once the reader can take it
    where there is ``patience``; False where the reader has gone, or took nothing for
    ``patience`` seconds."""
    waiting = getattr(select, "poll", None) if patience is not None else None
    poll = waiting() if waiting is not None else None
    if poll is not None:
        poll.register(fd, select.POLLOUT)
    while data:
        if poll is not None and patience is not None:
            ready = poll.poll(patience * 1000)
            if not ready or ready[0][1] & (select.POLLERR | select.POLLHUP | select.POLLNVAL):
                return False
        data = data[os.write(fd, data[:PIECE]):]
    return True


def _nowhere(fd: int) -> None:
    """Point ``fd`` at the null device."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)

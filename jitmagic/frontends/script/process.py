"""The command's process: Ctrl-C (its last moments, a stretch where it is ignored, every press
counted: :class:`Presses`), and stdout and stderr made so that a finished measurement never ends in
a ``UnicodeEncodeError`` or ``BrokenPipeError``."""

from __future__ import annotations

import contextlib
import faulthandler
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, NoReturn

from ...measure import children
from ...measure.sampling.stops import ABANDON_S
from ..statuses import INTERRUPTED

#: What the command says of a Ctrl-C as its process ends.
ENDED = ("interrupted by Ctrl-C as the command ended (what it printed, and every report "
         "it wrote, is whole)")


def exit_now(status: int, line: str | None = None) -> NoReturn:
    """End the process now with ``status``, ``line`` said and output flushed."""
    ignore_ctrl_c()
    children.finished()
    if line is not None:
        with contextlib.suppress(Exception):
            print(f"jitmagic: {line}", file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


def ignore_ctrl_c() -> None:
    with contextlib.suppress(ValueError, OSError):  # ValueError: not the main thread
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def end_on_ctrl_c() -> None:
    """From now on a Ctrl-C ends the process at once with :data:`ENDED` and 130."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, lambda signum, frame: exit_now(INTERRUPTED, ENDED))


@contextlib.contextmanager
def ctrl_c_ignored() -> Iterator[None]:
    """Within: SIGINT is ignored; the handler before is put back after."""
    try:
        before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: no handler of ours can run there anyway
        yield
        return
    try:
        yield
    finally:
        if before is not None:  # None: a handler set from C, which cannot be put back
            signal.signal(signal.SIGINT, before)


class Presses:
    """When each Ctrl-C came, from a wakeup descriptor (two presses during C code reach Python as
    one)."""

    def __init__(self, fd: int | None = None) -> None:
        self._fd = fd
        self._times: list[float] = []
        self._lock = threading.Lock()

    def times(self) -> list[float]:
        with self._lock:
            self._read()
            return list(self._times)

    def last(self) -> float | None:
        times = self.times()
        return times[-1] if times else None

    def twice(self) -> bool:
        times = self.times()
        return any(b - a < ABANDON_S for a, b in zip(times, times[1:], strict=False))

    def _read(self) -> bool:
        """Read every byte there is (the lock held); True once the pipe has ended."""
        while self._fd is not None:
            try:
                data = os.read(self._fd, 512)
            except (BlockingIOError, InterruptedError):
                return False
            except OSError:
                data = b""
            if not data:
                os.close(self._fd)
                self._fd = None
                return True
            self._times += [time.monotonic()] * data.count(int(signal.SIGINT))
        return True

    def _follow(self) -> None:
        while True:
            with self._lock:
                fd = self._fd
            if fd is None:
                return
            try:
                select.select([fd], [], [])
            except (OSError, ValueError):
                return
            with self._lock:
                if self._read():
                    return


@contextlib.contextmanager
def presses_counted() -> Iterator[Presses]:
    """Within: every SIGINT counted in the :class:`Presses` given."""
    try:
        read_fd, write_fd = os.pipe()
    except OSError:
        yield Presses()
        return
    try:
        for fd in (read_fd, write_fd):
            os.set_blocking(fd, False)
        before = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except (ValueError, OSError):  # ValueError: not the main thread
        os.close(read_fd)
        os.close(write_fd)
        yield Presses()
        return
    presses = Presses(read_fd)
    threading.Thread(target=presses._follow, name="jitmagic-ctrl-c", daemon=True).start()
    try:
        yield presses
    finally:
        with contextlib.suppress(ValueError, OSError):
            signal.set_wakeup_fd(before)
        os.close(write_fd)  # the thread reads the end of the pipe and closes it


#: Characters the command's output holds: a stream that cannot write them replaces them.
OWN_CHARACTERS = "×–µ·…→≈"
#: The error handler each stream gets then (stderr's is Python's default for it).
SAFE_ERRORS = (("stdout", "replace"), ("stderr", "backslashreplace"))


def safe_output() -> None:
    """Make stdout and stderr replace what their encoding cannot write."""
    for name, errors in SAFE_ERRORS:
        _replacing(getattr(sys, name, None), errors)


def _replacing(stream: Any, errors: str) -> None:
    reconfigure = getattr(stream, "reconfigure", None)
    if not callable(reconfigure) or getattr(stream, "errors", "strict") not in (
            "strict", "surrogateescape"):
        return
    try:
        OWN_CHARACTERS.encode(getattr(stream, "encoding", None) or "ascii")
        return
    except (UnicodeError, LookupError):
        pass
    with contextlib.suppress(ValueError, OSError):
        reconfigure(errors=errors)


def show(lines: list[str]) -> bool:
    """Print ``lines`` to stdout; False where it was closed early (then pointed at the null
    device)."""
    stream = sys.stdout
    if stream is None:
        return False
    _replacing(stream, "replace")
    try:
        for line in lines:
            try:
                print(line, file=stream)
            except UnicodeEncodeError:
                encoding = getattr(stream, "encoding", None) or "ascii"
                print(line.encode(encoding, "replace").decode(encoding), file=stream)
        stream.flush()
    except BrokenPipeError:  # pointed at the null device from now on
        with contextlib.suppress(OSError, ValueError, AttributeError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)
        return False
    return True


class _Forgiving:
    """A stderr whose writes never raise: once its reader has gone, they are dropped."""

    def __init__(self, stream: Any):
        self._stream, self._gone = stream, stream is None

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return self._stream.write(text)
            except (OSError, ValueError):  # BrokenPipeError among them; a closed file
                self._gone = True
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._gone = True

    def isatty(self) -> bool:
        return not self._gone and self._stream.isatty()

    def __getattr__(self, name: str) -> Any:  # the stream's own (encoding, fileno...)
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)


def forgiving_stderr() -> None:
    """``sys.stderr`` made :class:`_Forgiving`, and native crashes' tracebacks sent there."""
    stream = sys.stderr
    sys.stderr = _Forgiving(stream)
    if stream is not None:
        with contextlib.suppress(AttributeError, OSError, RuntimeError, ValueError):
            faulthandler.enable(file=stream)

"""The command's stdout and stderr, made so that a finished measurement never ends in a
``UnicodeEncodeError`` or ``BrokenPipeError``."""

from __future__ import annotations

import contextlib
import faulthandler
import os
import sys
from typing import Any

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
    except BrokenPipeError:
        _silence(stream)
        return False
    return True


def _silence(stream: Any) -> None:
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


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

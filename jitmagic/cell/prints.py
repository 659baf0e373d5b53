"""The lines the measured code prints, counted while it runs (the setup, which runs once, left
out), for the note that says why its output repeats."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..model.notes import Ran


class _Counting:
    """A stream that counts the lines written through it (unless paused)."""

    def __init__(self, stream: Any) -> None:
        self._stream, self.lines, self.partial, self.paused = stream, 0, False, 0

    def write(self, text: str) -> int:
        if not self.paused and text:
            self.lines += text.count("\n")
            self.partial = not text.endswith("\n")
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    @property
    def count(self) -> int:
        return self.lines + (1 if self.partial else 0)


@contextmanager
def prints_counted() -> Iterator[_Counting]:
    """``sys.stdout`` wrapped to count the lines printed in the block; put back after."""
    stream = sys.stdout
    counting = _Counting(stream)
    if stream is not None:  # None (no console): print writes nothing, there is nothing to count
        sys.stdout = counting
    try:
        yield counting
    finally:
        if sys.stdout is counting:
            sys.stdout = stream


@contextmanager
def uncounted() -> Iterator[None]:
    counting = sys.stdout if isinstance(sys.stdout, _Counting) else None
    if counting is not None:
        counting.paused += 1
    try:
        yield
    finally:
        if counting is not None:
            counting.paused -= 1


def printed_note(lines: int, traces: int) -> list[Ran]:
    return [Ran("printed", lines, traces)] if lines else []

"""Wrappers that note who calls a function while a cell is measured, removable wherever they stand
in a chain."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Noting:
    """``inner`` (the function wrapped), then ``note`` with the same arguments."""

    def __init__(self, inner: Callable[..., Any], note: Callable[..., None]) -> None:
        self.inner, self.note = inner, note

    def __call__(self, *args: Any) -> Any:
        got = self.inner(*args)
        self.note(*args)
        return got

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        """As a class attribute (``os.environ``'s ``__setitem__``): bound, as a function is."""
        return self if obj is None else (lambda *args: self(obj, *args))


def unwrap(current: Any, mine: Noting, put_back: Callable[[Any], None]) -> None:
    """Take ``mine`` out of the chain of wrappers that begins at ``current``."""
    if current is mine:
        put_back(mine.inner)
        return
    while isinstance(current, Noting):
        if current.inner is mine:
            current.inner = mine.inner
            return
        current = current.inner

"""Where a helper is bound (a namespace's key, a class attribute), and swapping what
those places hold for exactly as long as the entry's Python code runs."""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

#: What a binding held where the key did not exist.
MISSING = object()


@dataclass(frozen=True, eq=False)
class Binding:
    """One place a helper is looked up: a key of a namespace dict, or a class attribute."""

    owner: Any  # dict (globals) or type
    key: str

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Binding) and self.owner is other.owner
                and self.key == other.key)

    def __hash__(self) -> int:
        return hash((id(self.owner), self.key))

    @property
    def original(self) -> Any:
        """What the place held when the helper was found (a class's raw ``__dict__`` entry)."""
        if isinstance(self.owner, dict):
            return self.owner.get(self.key, MISSING)
        return vars(self.owner).get(self.key, MISSING)

    def set(self, value: Any) -> None:
        """Hold ``value``; :data:`MISSING` removes the key."""
        if value is MISSING:
            if isinstance(self.owner, dict):
                self.owner.pop(self.key, None)
            else:
                delattr(self.owner, self.key)
        elif isinstance(self.owner, dict):
            self.owner[self.key] = value
        else:
            setattr(self.owner, self.key, value)

    @property
    def where(self) -> str:
        if isinstance(self.owner, dict):
            return f"global `{self.key}` of {self.owner.get('__name__', 'a namespace')}"
        return f"attribute `{self.key}` of class `{self.owner.__qualname__}`"


def installing(fn: Callable, swaps: list[tuple[Binding, Any, Any]]) -> Callable:
    """``fn`` with the swaps in place while it runs, restored after."""
    if not swaps:
        return _named(fn)

    @functools.wraps(fn)
    def entry(*args, **kwargs):
        with swapped(swaps):
            return fn(*args, **kwargs)

    entry.__name__ = entry.__qualname__ = short_name(getattr(fn, "__name__", "entry"))
    return entry


def _named(fn: Callable) -> Callable:
    """``fn`` itself where it has a ``__name__`` (JAX names its events by it), else a wrapper."""
    if isinstance(getattr(fn, "__name__", None), str):
        return fn

    @functools.wraps(fn)
    def entry(*args, **kwargs):
        return fn(*args, **kwargs)

    entry.__name__ = entry.__qualname__ = "entry"
    return entry


@contextmanager
def swapped(swaps: list[tuple[Binding, Any, Any]]) -> Iterator[None]:
    """Each binding holds its new value inside the block and its original after."""
    done = []
    try:
        for binding, original, new in swaps:
            binding.set(new)
            done.append((binding, original))
        yield
    finally:
        for binding, original in reversed(done):
            binding.set(original)


def jit_label(helper: str) -> str:
    """The name a helper's jit has in the program (``jit[name=mylayers.dense]``): the
    helper's own full name, so that two ``__call__`` methods are told apart."""
    return helper.replace("#", "_")


def short_name(name: str) -> str:
    return name.rsplit(".", 1)[-1].replace("#", "_")


@dataclass(frozen=True, eq=False)
class CellOf:
    """A closure cell, as a place a variant swaps (a class a parent module closes over)."""

    cell: types.CellType

    def set(self, value: Any) -> None:
        self.cell.cell_contents = value

"""Where a helper is bound, and swapping what those places hold while the entry runs,
one measurement at a time (:func:`one_measurement`), put back whatever Ctrl-C does."""

from __future__ import annotations

import functools
import threading
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ...interrupts import interrupts_held

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
            elif self.key in vars(self.owner):  # put back before it was ever set: absent
                delattr(self.owner, self.key)
        elif isinstance(self.owner, dict):
            self.owner[self.key] = value
        else:
            setattr(self.owner, self.key, value)


def installing(fn: Callable, swaps: list[tuple[Binding, Any, Any]],
               blame: str | None = None) -> Callable:
    """``fn`` with the swaps in place while it runs; ``blame`` noted on its exception."""
    name = getattr(fn, "__name__", None)
    if not swaps and isinstance(name, str):
        return fn

    @functools.wraps(fn)
    def entry(*args, **kwargs):
        try:
            with swapped(swaps):
                return fn(*args, **kwargs)
        except Exception as exc:
            if blame is not None and blame not in getattr(exc, "__notes__", ()):
                exc.add_note(blame)
            raise

    entry.__name__ = entry.__qualname__ = short_name(name if isinstance(name, str) else "entry")
    return entry


@contextmanager
def swapped(swaps: list[tuple[Binding, Any, Any]]) -> Iterator[None]:
    """Each binding holds its new value inside the block and its original after."""
    done: list[tuple[Any, Any]] = []
    try:
        for place, original, new in swaps:
            done.append((place, original))  # listed first: an interrupt after set finds it
            place.set(new)
        yield
    finally:
        put_back(done)


def put_back(done: list[tuple[Any, Any]]) -> None:
    """Put each place back, last first, SIGINT held; an exception landing redoes it all."""
    try:
        with interrupts_held():
            _set_originals(done)
    except BaseException:
        with interrupts_held():
            _set_originals(done)
        raise


def _set_originals(done: list[tuple[Any, Any]]) -> None:
    for place, original in reversed(done):
        place.set(original)


#: The one measurement of this process at a time (re-entrant, for its parts).
_MEASURING = threading.RLock()
_waits = threading.local()


@contextmanager
def one_measurement() -> Iterator[None]:
    """Within, no other thread measures (the wait kept for :func:`seconds_waited`)."""
    if not _MEASURING.acquire(blocking=False):
        begun = time.perf_counter()
        _MEASURING.acquire()
        _waits.seconds = getattr(_waits, "seconds", 0.0) + time.perf_counter() - begun
    _waits.depth = getattr(_waits, "depth", 0) + 1
    try:
        yield
    except BaseException:
        if _waits.depth == 1:  # the measurement failed: no result will say it waited
            _waits.seconds = 0.0
        raise
    finally:
        _waits.depth -= 1
        _MEASURING.release()


def seconds_waited() -> float:
    """The seconds this thread waited for another's measurement since it last asked."""
    waited, _waits.seconds = getattr(_waits, "seconds", 0.0), 0.0
    return waited


def jit_label(helper: str) -> str:
    """A helper's jit's name (``jit[name=mylayers.dense]``): its full name, told apart."""
    return helper.replace("#", "_")


def short_name(name: str) -> str:
    return name.rsplit(".", 1)[-1].replace("#", "_")


@dataclass(frozen=True, eq=False)
class CellOf:
    """A closure cell, as a place a variant swaps (a class a parent module closes over)."""

    cell: types.CellType

    def set(self, value: Any) -> None:
        self.cell.cell_contents = value

"""The row of the global random generators, kept as after one run of the cell
(:meth:`Streams.settle`: a helper draws once per trace)."""

from __future__ import annotations

import pickle
import random
from collections.abc import Collection
from typing import Any

import numpy as np

from ...model.notes import Note
from ...model.notes import PutBack


def _states() -> dict[str, Any]:
    return {"np.random": np.random.get_state(legacy=False), "random": random.getstate()}


def view() -> dict[str, Any]:
    """Each generator's state, comparable with ``==`` (numpy's holds an array)."""
    return {name: pickle.dumps(state) for name, state in _states().items()}


def _set(name: str, state: Any) -> None:
    if name == "random":
        random.setstate(state)
    else:
        np.random.set_state(state)


class Streams:
    """The generators' states before the cell, and as after one run of it."""

    def __init__(self) -> None:
        self.before = _states()
        self.once: dict[str, Any] | None = None

    def settle(self) -> None:
        if self.once is None:
            self.once = _states()

    def undo(self, leave: Collection[Any] = ()) -> list[Note]:
        kept = self.before if self.once is None else self.once
        now = view()
        changed = [name for name, state in kept.items()
                   if name not in leave and now[name] != pickle.dumps(state)]
        for name in changed:
            _set(name, kept[name])
        return [PutBack("streams_put_back", tuple(changed), self.once is not None)] \
            if changed else []

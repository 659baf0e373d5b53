"""What a cell's code changes outside its scratch namespace, put back after it is measured, with
one note per thing put back (:func:`effects_undone`); the rows are :mod:`.table`'s."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ...model.notes import Note
from ...model.notes import PutBack
from .table import Effect
from .table import effects
from .watch import NOT_THE_CELLS
from .watch import Watch

__all__ = ["NOT_THE_CELLS", "Watch", "effects_undone"]


@contextmanager
def effects_undone(namespace: dict[str, Any] | None = None, watch: Watch | None = None,
                   process: bool = True) -> Iterator[list[Note]]:
    """Snapshot every row for ``namespace`` and put back what changed on exit (but another thread's
    changes), a note per thing in the list yielded."""
    rows = effects(namespace, process)
    taken: list[tuple[str, Effect, Any]] = []
    undone: list[Note] = []
    try:
        for i, row in enumerate(rows):
            taken.append((f"row {i}", row, row.take()))
        if watch is not None:
            for key, row, before in taken:
                watch.add(key, row.view, row.label, row.identity)
                if row.settle is not None:
                    watch.once_traced(functools.partial(row.settle, before))
        yield undone
    finally:
        # the name rows first: JAX's config put back may change a logger, a process row
        for key, row, before in sorted(taken, key=lambda t: t[1].process):
            undone += _put_back(row, before, key, watch)


def _put_back(row: Effect, before: Any, key: str, watch: Watch | None) -> list[Note]:
    """``row`` put back as it was ``before``: its notes, or why it could not be."""
    try:
        return row.undo(before, watch.theirs(key) if watch is not None else frozenset())
    except Exception as exc:  # noqa: BLE001 (the next rows are put back all the same)
        return [PutBack("not_put_back", type(exc).__name__, str(exc))]

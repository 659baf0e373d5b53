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
    """Snapshot every row of the table for ``namespace`` (None: no namespace row) and put back what
    changed on exit; the list yielded then holds a note per thing put back. Without ``process`` (a
    file run) the process-wide rows are left alone; what ``watch`` finds another thread changed is
    left as it is. A row that cannot be put back is said, and the rows after it are put back all
    the same."""
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
        # The name rows first: putting JAX's config back may change process-wide state
        # (JAX drops a log handler it added for it) that the process rows then compare.
        for key, row, before in sorted(taken, key=lambda t: t[1].process):
            undone += _put_back(row, before, key, watch)


def _put_back(row: Effect, before: Any, key: str, watch: Watch | None) -> list[Note]:
    """``row`` put back as it was ``before`` (another thread's changes aside): its notes, or why
    not."""
    try:
        return row.undo(before, watch.theirs(key) if watch is not None else frozenset())
    except Exception as exc:  # noqa: BLE001 (the next rows are put back all the same)
        return [PutBack("not_put_back", type(exc).__name__, str(exc))]

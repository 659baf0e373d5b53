"""What a cell's code changes outside its scratch namespace, put back after it is
measured, with one note per thing put back for the result's warnings
(:func:`effects_undone`).

The things, one row each, are listed in :mod:`.table`, whose rows' helpers are in
:mod:`.registries` and :mod:`.settings` (process-wide state) and :mod:`.names` (JAX's
config, library modules' names, the user's modules and classes, the kernel's
namespace). :mod:`.watch` tells the cell's changes from another thread's. Ctrl-C is
held by the caller while everything is put back
(:class:`~jitmagic.interrupts.CtrlCHeld`), and the lines the measured code prints are
counted apart (:mod:`~jitmagic.cell.prints`).
"""

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
    """Snapshot every row of the table for ``namespace`` (the kernel's; None: no
    namespace row) and put back what changed on exit.

    Yields a list that, after the block, holds one note per thing put back
    (:class:`jitmagic.model.notes.PutBack`). With
    ``process`` False (a file run: the process ends after it) the process-wide rows are
    left alone. With a ``watch``, what it finds another thread changed is left as it is
    (the watch says so). The snapshot is taken with JAX imported, so its import-time
    state is part of "before". A row that cannot be put back is said, and the rows after
    it are put back all the same.
    """
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
    """``row`` put back as it was ``before`` (what ``watch`` says another thread changed
    aside): its notes, or one saying it could not be."""
    try:
        return row.undo(before, watch.theirs(key) if watch is not None else frozenset())
    except Exception as exc:  # noqa: BLE001 (the next rows are put back all the same)
        return [PutBack("not_put_back", type(exc).__name__, str(exc))]

"""Every thing a cell's code may change outside its scratch namespace (its helpers run once per
trace, so what they change would outlive the measurement), one row each: how it is snapshot, put
back, viewed between stages and named. A file run leaves the process-wide rows (:data:`PROCESS`)
alone; the name rows (:func:`name_rows`) are taken shallowly. :func:`effects_undone` puts back what
changed after the cell is measured, with one note per thing put back."""

from __future__ import annotations

import decimal
import functools
import importlib
import os
import sys
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

from ...model.notes import Note, PutBack
from . import names, settings
from .watch import NOT_THE_CELLS, Watch

__all__ = ["NOT_THE_CELLS", "Watch", "effects_undone"]

#: The key of a row that is one value (the working directory, sys.path) in its view.
WHOLE = "whole"


class Effect(NamedTuple):
    """One row: ``take`` a snapshot, ``undo`` it, ``view`` it cheaply, ``label`` a key."""

    take: Callable[[], Any]
    undo: Callable[..., list[Note]]
    view: Callable[[], dict[Any, Any]]
    label: Callable[[Any], tuple[str, str]]
    identity: bool = False  # the view's values are compared with ``is``
    process: bool = True  # a process-wide row (else a name row)
    #: what to do with the snapshot once the cell's setup and first trace have run
    settle: Callable[[Any], None] | None = None


def _whole(undo: Callable[[Any], list[Note]]) -> Callable[..., list[Note]]:
    """``undo`` of a one-value row, left alone where another thread changed it."""
    def undo_unless_left(before: Any, leave: Collection[Any] = ()) -> list[Note]:
        return [] if WHOLE in leave else undo(before)
    return undo_unless_left


def _one(take: Callable[[], Any]) -> Callable[[], dict[str, Any]]:
    return lambda: {WHOLE: take()}


def _named(row: str, key: str = "") -> Callable[[Any], tuple[str, str]]:
    return lambda _: (row, key)


def _keyed(row: str) -> Callable[[Any], tuple[str, str]]:
    return lambda key: (row, str(key))


def _sys_list(name: str) -> Effect:
    return Effect(settings.sys_list(name), _whole(settings.undo_sys_list(name)),
                  _one(settings.sys_list(name)), _named("sys_list", name))


def _setting(call: str, get: Callable[[], Any], put: Callable[[Any], Any]) -> Effect:
    return Effect(get, _whole(settings.undo_set(call, get, put)), _one(get), _named(call))


def _numpy(call: str, get: Callable[[], Mapping[str, Any]], put: Callable[..., Any]) -> Effect:
    """The row of numpy's settings that ``call(**settings)`` sets."""
    return Effect(get, _whole(settings.undo_numpy(call, get, put)),
                  _one(lambda: tuple(sorted(get().items(), key=repr))), _named(call))


#: The process-wide rows, in the order they are snapshot and put back.
PROCESS: tuple[Effect, ...] = (
    Effect(settings.take_figures, _whole(settings.undo_figures),
           _one(lambda: frozenset(settings.take_figures())), _named("figures")),
    Effect(settings.take_listeners, settings.undo_listeners, settings.view_listeners,
           _named("listeners"), identity=True),
    Effect(settings.Filters, settings.Filters.undo, settings.view_filters,
           lambda key: ("filters", "showwarning" if key == "showwarning" else "")),
    Effect(settings.take_logging, settings.undo_logging, settings.view_logging,
           _keyed("logging")),
    Effect(settings.take_rc, settings.undo_rc, lambda: settings.take_rc() or {},
           _keyed("rc")),
    _numpy("np.seterr", np.geterr, np.seterr),
    _numpy("np.set_printoptions", np.get_printoptions, np.set_printoptions),
    Effect(lambda: (decimal.getcontext(), decimal.getcontext().copy()),
           _whole(settings.undo_decimal), _one(lambda: (decimal.getcontext(), tuple(
               settings.decimal_settings(decimal.getcontext()).items()))), _named("decimal")),
    Effect(settings.Streams, settings.Streams.undo, settings.view_streams, _keyed("random"),
           settle=settings.Streams.settle),
    _setting("sys.setrecursionlimit", sys.getrecursionlimit, sys.setrecursionlimit),
    _setting("sys.setswitchinterval", sys.getswitchinterval, sys.setswitchinterval),
    _setting("sys.set_int_max_str_digits", sys.get_int_max_str_digits,
             sys.set_int_max_str_digits),
    _setting("os.umask", settings.take_umask, os.umask),
    Effect(settings.take_signals, settings.undo_signals, settings.take_signals,
           _keyed("signals"), identity=True),
    Effect(settings.Environ, settings.Environ.undo, lambda: dict(os.environ),
           _keyed("environ")),
    Effect(settings.take_cwd, _whole(settings.undo_cwd), _one(settings.take_cwd),
           _named("cwd")),
    _sys_list("argv"),
    _sys_list("path"),
    Effect(settings.view_hooks, settings.undo_hooks, settings.view_hooks, _keyed("hooks")),
)


def name_rows(namespace: dict[str, Any] | None) -> tuple[Effect, ...]:
    """JAX's config, the watched modules, the user's modules and classes, ``namespace``."""
    config = Effect(names.Config, names.Config.undo, names.take_config,
                    _keyed("config"), process=False)
    modules = tuple(_module(name) for name in names.WATCHED_MODULES)
    owners = names.user_dicts(namespace)
    own = Effect(lambda: {label: dict(vars(owner)) for label, owner in owners.items()},
                 names.undo_own(owners), names.view_own(owners),
                 lambda key: ("own", f"{key[0]}.{key[1]}"), identity=True, process=False)
    return (config, *modules, own, *(() if namespace is None else (_kernel(namespace),)))


def _module(name: str) -> Effect:
    module = importlib.import_module(name)
    return Effect(lambda: dict(vars(module)), names.undo_names(name, module),
                  names.view_names(module), lambda key: ("module", f"{name}.{key}"), identity=True,
                  process=False)


def _kernel(namespace: dict[str, Any]) -> Effect:
    return Effect(lambda: dict(namespace), names.undo_globals(namespace),
                  names.view_globals(namespace), _keyed("global"),
                  identity=True, process=False)


def effects(namespace: dict[str, Any] | None, process: bool = True) -> tuple[Effect, ...]:
    """The table for ``namespace``: the process-wide rows (where ``process``), the name rows."""
    return (*(PROCESS if process else ()), *name_rows(namespace))


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

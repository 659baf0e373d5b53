"""JAX's cache-miss explanations, read once for every watch running: one filter on its miss logger
hands each record to every :class:`Listener`; the user's handlers see what they would have."""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Any, Protocol

from ..._compat import (
    CACHE_MISS_LOGGER,
    EXPLAIN_FLAG,
    closest_explanation,
    guard_tree_differences,
    on_config_update,
)
from . import reasons
from .reasons import Miss


class Listener(Protocol):
    """A watch's recorder, as the channel calls it (on the thread JAX logged on)."""

    def on_miss(self, miss: Miss) -> None: ...

    def explanations_stopped(self) -> None: ...


class _Channel:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.listeners: list[Listener] = []
        self.undo = contextlib.ExitStack()  # what _open set, put back last first
        self.user_flag = self.user_disabled = self.stopped = False
        self.ours: int | None = None  # the thread setting the flag for the watch

    def subscribe(self, listener: Listener) -> None:
        with self.lock:
            if not self.listeners:
                try:
                    self._open()
                except BaseException:
                    self.undo.close()
                    raise
            self.listeners.append(listener)
            if self.stopped:
                listener.explanations_stopped()

    def unsubscribe(self, listener: Listener) -> None:
        with self.lock:
            if listener in self.listeners:
                self.listeners.remove(listener)
                if not self.listeners:
                    self.undo.close()

    def _open(self) -> None:
        import jax

        logger = logging.getLogger(CACHE_MISS_LOGGER)
        self.stopped = False
        self.user_flag = bool(getattr(jax.config, EXPLAIN_FLAG))
        self.user_disabled = logger.disabled
        self.undo.callback(on_config_update(EXPLAIN_FLAG, self._on_update))
        self.undo.callback(lambda: self.set_flag(self.user_flag))
        self.set_flag(True)
        self.undo.callback(guard_tree_differences(tree_difference))
        self.undo.callback(lambda: setattr(logger, "disabled", self.user_disabled))
        logger.disabled = False
        self.undo.callback(lambda: logger.__dict__.pop("isEnabledFor", None))
        setattr(logger, "isEnabledFor", lambda level: level >= logging.WARNING  # noqa: B010
                or logging.Logger.isEnabledFor(logger, level))
        self.undo.callback(lambda: logger.removeFilter(self._on_record))
        logger.addFilter(self._on_record)

    def set_flag(self, value: bool) -> None:
        import jax

        self.ours = threading.get_ident()
        try:
            jax.config.update(EXPLAIN_FLAG, value)
        finally:
            self.ours = None

    def _on_update(self, value: Any) -> None:
        if self.ours != threading.get_ident():
            self.user_flag = bool(value)

    def stop_explaining(self) -> None:
        """JAX's explanations off (not where the user has them on), every listener told."""
        with self.lock:
            if self.stopped or self.user_flag or not self.listeners:
                return
            self.stopped = True
            self.set_flag(False)
            for listener in list(self.listeners):
                listener.explanations_stopped()

    def _on_record(self, record: logging.LogRecord) -> bool:
        """Hand a record's miss to every listener; pass it on as the user's logger would."""
        try:
            miss = reasons.read(closest_explanation(record.getMessage()))
        except Exception:  # noqa: BLE001 (a record we cannot read is not ours to break)
            miss = None
        if miss is not None:
            for listener in list(self.listeners):
                listener.on_miss(miss)
        logger = logging.getLogger(CACHE_MISS_LOGGER)
        if self.user_disabled or not logging.Logger.isEnabledFor(logger, record.levelno):
            return False
        return self.user_flag or not str(record.msg).startswith(reasons.PREFIX)


_CHANNEL = _Channel()
subscribe = _CHANNEL.subscribe
unsubscribe = _CHANNEL.unsubscribe
stop_explaining = _CHANNEL.stop_explaining


#: Where a tree's node differs, as JAX writes it (its explanation reads it back).
DIFFERENT_TREE = ("different input pytree:\n  * at input path {path}, now {new} and before "
                  "{old}, so the pytree node metadata does not match")


def tree_difference(new: Any, old: Any, error: Exception) -> tuple[int, int, str]:
    """JAX's ``(severity, count, sentence)`` of the first node where ``new`` and ``old`` differ."""
    path, a, b = _first_difference(new, old, "")
    return 1, 1, DIFFERENT_TREE.format(path=path, new=_node(a), old=_node(b))


def _first_difference(a: Any, b: Any, path: str) -> tuple[str, Any, Any]:
    """(JAX's input path, each tree's ``node_data()``) of the first node that differs."""
    da, db = a.node_data(), b.node_data()
    ca, cb = a.children(), b.children()
    if da is None or db is None or len(ca) != len(cb) or not same(da, db):
        return path, da, db
    for i, (x, y) in enumerate(zip(ca, cb, strict=True)):
        if not same(x, y):
            return _first_difference(x, y, path + _key(da, i))
    return path, da, db


def _key(data: Any, i: int) -> str:
    """The ``i``-th child's part of an input path: ``['n']`` in a dict, else ``[i]``."""
    kind, meta = data
    if kind is dict and isinstance(meta, list | tuple) and i < len(meta):
        return f"[{shown(meta[i])}]"
    return f"[{i}]"


def _node(data: Any) -> str:
    if data is None:
        return "pytree leaf"
    kind, meta = data
    return f"{kind} with pytree metadata {shown(meta)}"


def shown(value: Any) -> str:
    """``repr(value)``, or its type and that it could not be shown (in ``Static(val=...)`` form)."""
    try:
        return repr(value)
    except Exception:  # noqa: BLE001 (the user's __repr__)
        val = getattr(value, "val", value) if type(value).__name__ == "Static" else value
        said = f"<a {type(val).__name__} that could not be shown>"
        return f"Static(val={said})" if val is not value else said


def same(before: Any, now: Any) -> bool:
    """Whether two values are the same (a NaN is; an ``__eq__`` that raises is not)."""
    if before is now:
        return True
    if type(before) is not type(now):
        return False
    if type(before) is tuple:
        return len(before) == len(now) and all(map(same, before, now))
    try:
        return bool(before == now) or _nan(before) and _nan(now)
    except Exception:  # noqa: BLE001 (an __eq__ that raises: it changed, to something else)
        return False


def _nan(value: Any) -> bool:
    return isinstance(value, float | complex) and value != value

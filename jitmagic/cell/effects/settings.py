"""The process-wide rows of one setting each: numpy's error handling, the recursion
limit, the environment, the working directory, ``sys.argv`` and ``sys.path``, the trace
and profile hooks and the standard streams. Each row's take, view and undo for
:mod:`.table`."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from collections.abc import Collection
from typing import Any

import numpy as np

from .sentences import said


def undo_seterr(before: dict[str, Any]) -> list[str]:
    now = np.geterr()
    if now == before:
        return []
    np.seterr(**before)
    changed = ", ".join(f"{k}={v!r}" for k, v in now.items() if before.get(k) != v)
    return [said(f"changed numpy's error handling (np.seterr({changed}))")]


def undo_recursion(before: int) -> list[str]:
    now = sys.getrecursionlimit()
    if now == before:
        return []
    sys.setrecursionlimit(before)
    return [said(f"set sys.setrecursionlimit({now}) (it was {before})")]


def take_environ() -> dict[str, str]:
    return dict(os.environ)


def undo_environ(before: dict[str, str], leave: Collection[Any] = ()) -> list[str]:
    now = dict(os.environ)
    changed = [k for k in before if now.get(k) != before[k] and k not in leave]
    added = [k for k in now if k not in before and k not in leave]
    for key in changed:
        os.environ[key] = before[key]
    for key in added:
        del os.environ[key]
    if not changed and not added:
        return []
    names = [*changed, *(f"{k} (added)" for k in added)]
    return [said(f"changed environment variables {', '.join(names)}")]


def take_cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # it was removed
        return None


def undo_cwd(before: str | None) -> list[str]:
    now = take_cwd()
    if before is None or now == before:
        return []
    os.chdir(before)
    return [said(f"changed the working directory to {now!r} (it was {before!r})")]


def sys_list(name: str) -> Callable[[], tuple[list, list]]:
    """How to take ``sys.<name>``: (the list itself, a copy of it)."""
    return lambda: (getattr(sys, name), list(getattr(sys, name)))


def undo_sys_list(name: str) -> Callable[[tuple[list, list]], list[str]]:
    """How to put ``sys.<name>`` back: the same list object, with its contents."""
    def undo(before: tuple[list, list]) -> list[str]:
        kept, was = before
        if getattr(sys, name) is kept and kept == was:
            return []
        setattr(sys, name, kept)
        kept[:] = was
        return [said(f"changed sys.{name}")]
    return undo


def _set_profile(profiler: Any) -> None:
    """``sys.setprofile`` again; a C-level profiler (``cProfile``: the object is not
    callable) is put back by its own ``enable()``, keeping what it collected."""
    if profiler is not None and not callable(profiler) and hasattr(profiler, "enable"):
        sys.setprofile(None)
        profiler.enable()
    else:
        sys.setprofile(profiler)


#: (what the sentence names, how to read it, how to set it back)
_HOOKS: tuple[tuple[str, Callable[[], Any], Callable[[Any], Any]], ...] = (
    ("sys.settrace's hook (a debugger's or coverage's)", sys.gettrace, sys.settrace),
    ("sys.setprofile's hook (a profiler's)", sys.getprofile, _set_profile),
    ("threading.settrace's hook", threading.gettrace, threading.settrace),
    ("threading.setprofile's hook", threading.getprofile, threading.setprofile),
    ("sys.stdout", lambda: sys.stdout, lambda s: setattr(sys, "stdout", s)),
    ("sys.stderr", lambda: sys.stderr, lambda s: setattr(sys, "stderr", s)),
)


def take_hooks() -> list[Any]:
    return [get() for _, get, _ in _HOOKS]


def view_hooks() -> dict[str, Any]:
    return {what: get() for what, get, _ in _HOOKS}


def undo_hooks(before: list[Any], leave: Collection[Any] = ()) -> list[str]:
    changed = []
    for (what, get, put), was in zip(_HOOKS, before, strict=True):
        if what not in leave and get() is not was:
            put(was)
            changed.append(what)
    return [said(f"changed {', '.join(changed)}")] if changed else []

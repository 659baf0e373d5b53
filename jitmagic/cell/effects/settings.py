"""The process-wide rows: what libraries keep and code adds to (figures, ``rcParams``, listeners,
warnings filters, loggers; a library's own additions are kept), and one setting each (numpy,
decimal, sys limits, ``umask``, signals, the environment, the folder, ``sys.argv``/``path``, hooks,
streams, the random generators)."""

from __future__ import annotations

import decimal
import functools
import logging
import os
import pickle
import random
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Collection, Mapping, MutableMapping
from typing import Any

import numpy as np

from ..._compat import (
    add_filter_hook,
    backend_started,
    filters_mutated,
    monitoring_lists,
    set_add_filter_hook,
)
from ...model.notes import Note, PutBack
from ...usercode import called_by_user, user_file
from ..prelude import JAX_ENVIRONMENT
from .watch import Noting, differs, unwrap

# --- matplotlib: figures and rcParams ------------------------------------------------


def _pyplot() -> Any:
    return sys.modules.get("matplotlib.pyplot")


def take_figures() -> set[int]:
    plt = _pyplot()
    return set(plt.get_fignums()) if plt is not None else set()


def undo_figures(before: set[int]) -> list[Note]:
    plt = _pyplot()
    opened = [n for n in plt.get_fignums() if n not in before] if plt is not None else []
    for number in opened:
        plt.close(number)
    return [PutBack("figures_closed", len(opened))] if opened else []


def take_rc() -> dict[str, Any] | None:
    mpl = sys.modules.get("matplotlib")
    rc = getattr(mpl, "rcParams", None)
    # Read as a dict: ``rc["backend"]`` may resolve the backend, importing pyplot.
    return {k: dict.__getitem__(rc, k) for k in rc if k != "backend"} if rc is not None else None


def undo_rc(before: dict[str, Any] | None, leave: Collection[Any] = ()) -> list[Note]:
    if before is None:
        return []
    rc = sys.modules["matplotlib"].rcParams
    changed = [k for k, v in before.items() if k not in leave and differs(dict.get(rc, k), v)]
    for key in changed:
        rc[key] = before[key]
    return [PutBack("rc_put_back", tuple(changed))] if changed else []


# --- jax.monitoring ------------------------------------------------------------------

def take_listeners() -> dict[str, tuple[list, list]]:
    return {name: (got, list(got)) for name, got in monitoring_lists()[1].items()}


def view_listeners() -> dict[tuple[str, int], Any]:
    return {(name, id(f)): f for name, got in monitoring_lists()[1].items() for f in got}


def undo_listeners(before: dict[str, tuple[list, list]],
                   leave: Collection[Any] = ()) -> list[Note]:
    mod, added, removed = monitoring_lists()[0], 0, 0
    for name, (kept, was) in before.items():
        now = getattr(mod, name, kept)
        new = [f for f in now if not any(f is g for g in was)]
        # JAX's own, and another thread's (``leave``): left registered, unreported
        theirs = [f for f in new if _library(f) or (name, id(f)) in leave]
        added += len(new) - len(theirs)
        gone = [f for f in was if not any(f is g for g in now)]
        taken = [f for f in gone if (name, id(f)) in leave]  # another thread's doing
        removed += len(gone) - len(taken)
        setattr(mod, name, kept)  # ``clear_event_listeners`` rebinds the names
        kept[:] = [*(f for f in was if not any(f is g for g in taken)), *theirs]
    return [PutBack("listeners_put_back", added, removed)] if added or removed else []


def _library(fn: Any) -> bool:
    """Whether a listener is a library's own function, not the user's (:func:`user_file`)."""
    fn = getattr(fn, "func", fn)  # a functools.partial
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    code = code or getattr(vars(type(fn)).get("__call__"), "__code__", None)  # an instance
    return code is None or not user_file(code.co_filename)


# --- warnings and logging ------------------------------------------------------------


class Filters:
    """The warnings filters and ``showwarning`` as they were, library code's new filters kept."""

    def __init__(self) -> None:
        self.list: Any = warnings.filters  # the object itself: catch_warnings swaps it
        self.was, self.show = list(warnings.filters), warnings.showwarning
        self.theirs: list[tuple] = []
        self.add = add_filter_hook()
        if self.add is not None:
            set_add_filter_hook(self._adding)

    def _adding(self, *item: Any, append: bool) -> None:
        assert self.add is not None
        self.add(*item, append=append)
        if not called_by_user((warnings.__file__,)):
            self.theirs.append(item)

    def undo(self, leave: Collection[Any] = ()) -> list[Note]:
        if self.add is not None:
            set_add_filter_hook(self.add)
        now, filters, show = warnings.filters, False, False
        others = [key[1] for key in leave if isinstance(key, tuple)]  # another thread's
        kept = [f for f in now if f in self.was or f in self.theirs or f in others]
        kept += [f for f in self.was if f not in kept and f not in others]
        if now is not self.list or kept != now:
            warnings.filters = self.list
            self.list[:] = kept if self.theirs or others else self.was
            filters_mutated()
            filters = True
        if "showwarning" not in leave and warnings.showwarning is not self.show:
            warnings.showwarning = self.show
            show = True
        return [PutBack("filters_put_back", filters, show)] if filters or show else []


def view_filters() -> dict[Any, Any]:
    return {**{("filter", f): True for f in warnings.filters},
            "showwarning": warnings.showwarning}


_LOGGERS = ("", "jax", "jaxlib")  # the root logger and JAX's


def take_logging() -> tuple[int, dict[str, tuple]]:
    return logging.root.manager.disable, {name: _logger_state(name) for name in _LOGGERS}


def _logger_state(name: str) -> tuple:
    log = logging.getLogger(name)
    return log.level, list(log.handlers), log.propagate, log.disabled


def view_logging() -> dict[str, Any]:
    disable, loggers = take_logging()
    return {"logging.disable": disable, **loggers}


def undo_logging(before: tuple[int, dict[str, tuple]],
                  leave: Collection[Any] = ()) -> list[Note]:
    disable, loggers = before
    called, changed = False, []
    if "logging.disable" not in leave and logging.root.manager.disable != disable:
        logging.disable(disable)
        called = True
    for name, state in loggers.items():
        if name not in leave and _logger_state(name) != state:
            log = logging.getLogger(name)
            log.handlers[:] = state[1]
            log.propagate, log.disabled = state[2], state[3]
            log.setLevel(state[0])  # clears the loggers' level caches too
            changed.append(name)
    return [PutBack("logging_put_back", called, tuple(changed))] if called or changed else []


# --- one setting each ---------------------------------------------------------------


def undo_numpy(call: str, get: Callable[[], Mapping[str, Any]], put: Callable[..., Any],
               ) -> Callable[[dict[str, Any]], list[Note]]:
    """How to put back numpy's settings that ``call(**settings)`` sets, said with each changed."""
    def undo(before: dict[str, Any]) -> list[Note]:
        changed = [(k, repr(v)) for k, v in get().items() if before.get(k) != v]
        if not changed:
            return []
        put(**before)
        return [PutBack("numpy_put_back", call, tuple(k for k, _ in changed),
                        tuple(v for _, v in changed))]
    return undo


#: The settings of decimal's context (its flags, what arithmetic did, are left as they are).
DECIMAL_SETTINGS = ("prec", "rounding", "Emin", "Emax", "capitals", "clamp", "traps")


def decimal_settings(context: decimal.Context) -> dict[str, Any]:
    """``context``'s settings, its traps as the names of those on (``Overflow``)."""
    return {k: getattr(context, k) for k in DECIMAL_SETTINGS[:-1]} | {
        "traps": tuple(sorted(s.__name__ for s, on in context.traps.items() if on))}


def undo_decimal(before: tuple[decimal.Context, decimal.Context]) -> list[Note]:
    """The context object put back in use, its settings as they were."""
    context, was = before
    now = decimal.getcontext()
    old, new = decimal_settings(was), decimal_settings(now)
    changed = [k for k in old if new[k] != old[k]]
    if now is context and not changed:
        return []
    decimal.setcontext(context)
    for key in DECIMAL_SETTINGS[:-1]:
        setattr(context, key, getattr(was, key))
    for signal_, on in was.traps.items():
        context.traps[signal_] = on
    return [PutBack("decimal_put_back", now is not context, tuple(changed),
                             tuple(repr(new[k]) for k in changed),
                             tuple(repr(old[k]) for k in changed))]


def undo_set(call: str, get: Callable[[], Any], put: Callable[[Any], Any],
             ) -> Callable[[Any], list[Note]]:
    """How to put back a setting of one value that ``call(value)`` sets: ``put(before)``."""
    def undo(before: Any) -> list[Note]:
        now = get()
        if now == before:
            return []
        put(before)
        return [PutBack("setting_put_back", call, repr(int(now) if call == "os.umask" else now),
                                 repr(int(before) if call == "os.umask" else before))]
    return undo


def take_umask() -> int:
    """The umask, from ``/proc/self/status`` where there is one (reading it otherwise sets it)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: The signals whose handlers a cell may set (SIGINT is jitmagic's own while it measures).
SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGUSR1", "SIGUSR2", "SIGHUP")
                if hasattr(signal, name))


def take_signals() -> dict[str, Any]:
    return {sig.name: signal.getsignal(sig) for sig in SIGNALS}


def undo_signals(before: dict[str, Any], leave: Collection[Any] = ()) -> list[Note]:
    """The handlers set back (from the main thread); one not set from Python is left."""
    changed = [name for name, was in before.items() if name not in leave and was is not None
               and signal.getsignal(signal.Signals[name]) is not was]
    for name in changed:
        signal.signal(signal.Signals[name], before[name])
    return [PutBack("signals_put_back", tuple(changed))] if changed else []


class Environ:
    """``os.environ`` as it was, and which variables library code set meanwhile (kept)."""

    def __init__(self) -> None:
        self.was = dict(os.environ)
        #: Whether JAX had been imported, and its backend started (each reads them once).
        self.read = ("jax" in sys.modules, backend_started())
        self.theirs: dict[str, bool] = {}  # each variable written: last by library code
        kind = type(os.environ)
        self._hooks = (Noting(kind.__setitem__, lambda env, key, value: self._wrote(key)),
                       Noting(kind.__delitem__, lambda env, key: self._wrote(key)))
        kind.__setitem__, kind.__delitem__ = self._hooks  # type: ignore[method-assign]

    def _wrote(self, key: str) -> None:
        self.theirs[key] = not called_by_user(_PASSED_OVER)

    def undo(self, leave: Collection[Any] = ()) -> list[Note]:
        kind = type(os.environ)
        for name, hook in zip(("__setitem__", "__delitem__"), self._hooks, strict=True):
            unwrap(vars(kind).get(name), hook, functools.partial(setattr, kind, name))
        libraries = {k for k, library in self.theirs.items() if library}
        return undo_environ(self.was, {*leave, *libraries}, self.read)


#: The files of ``os.environ``'s methods (its class's, the mapping mixins' its ``update`` comes
#: from) and of the wrapper: the writer is the first caller outside them.
_PASSED_OVER = frozenset({type(os.environ).__init__.__code__.co_filename,
                          MutableMapping.setdefault.__code__.co_filename,
                          Noting.__call__.__code__.co_filename,
                          Environ._wrote.__code__.co_filename})


def undo_environ(before: dict[str, str], leave: Collection[Any] = (),
                 read: tuple[bool, bool] = (False, False)) -> list[Note]:
    """``os.environ`` as ``before`` but for ``leave``; ``read``: when JAX read it."""
    now = dict(os.environ)
    changed = [k for k in before if now.get(k) != before[k] and k not in leave]
    added = [k for k in now if k not in before and k not in leave]
    os.environ.update({key: before[key] for key in changed})
    for key in added:
        del os.environ[key]
    if not changed and not added:
        return []
    def plain(names: list[str]) -> tuple[str, ...]:
        return tuple(n for n in names if not n.startswith(JAX_ENVIRONMENT))
    # the JAX and XLA variables the cell changed, and whether JAX read them yet
    once = [n for n in [*changed, *added] if n.startswith(JAX_ENVIRONMENT)]
    late = tuple(n for n in once if read[0] if n.startswith("JAX_") or read[1])
    return [*([PutBack("environ_put_back", plain(changed), plain(added))] if plain(changed + added)
              else []), *([PutBack("jax_environ_put_back", late,
                                   tuple(n for n in once if n not in late),
                                   tuple(n for n in once if n in added))] if once else [])]


def take_cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # it was removed
        return None


def undo_cwd(before: str | None) -> list[Note]:
    now = take_cwd()
    if before is None or now == before:
        return []
    os.chdir(before)
    return [PutBack("cwd_put_back", now, before)]


def sys_list(name: str) -> Callable[[], tuple[list, list]]:
    return lambda: (getattr(sys, name), list(getattr(sys, name)))


def undo_sys_list(name: str) -> Callable[[tuple[list, list]], list[Note]]:
    """How to put ``sys.<name>`` back: the same list object, with its contents."""
    def undo(before: tuple[list, list]) -> list[Note]:
        kept, was = before
        if getattr(sys, name) is kept and kept == was:
            return []
        setattr(sys, name, kept)
        kept[:] = was
        return [PutBack("sys_list_put_back", name)]
    return undo


def _set_profile(profiler: Any) -> None:
    """``sys.setprofile`` again; a C-level profiler (``cProfile``) by its own ``enable()``."""
    if profiler is not None and not callable(profiler) and hasattr(profiler, "enable"):
        sys.setprofile(None)
        profiler.enable()
    else:
        sys.setprofile(profiler)


#: (its name, how to read it, how to set it back)
_HOOKS: tuple[tuple[str, Callable[[], Any], Callable[[Any], Any]], ...] = (
    ("sys.settrace", sys.gettrace, sys.settrace),
    ("sys.setprofile", sys.getprofile, _set_profile),
    ("threading.settrace", threading.gettrace, threading.settrace),
    ("threading.setprofile", threading.getprofile, threading.setprofile),
    ("sys.excepthook", lambda: sys.excepthook, lambda h: setattr(sys, "excepthook", h)),
    ("threading.excepthook", lambda: threading.excepthook,
     lambda h: setattr(threading, "excepthook", h)),
    ("sys.stdout", lambda: sys.stdout, lambda s: setattr(sys, "stdout", s)),
    ("sys.stderr", lambda: sys.stderr, lambda s: setattr(sys, "stderr", s)),
)


def view_hooks() -> dict[str, Any]:
    return {what: get() for what, get, _ in _HOOKS}


def undo_hooks(before: dict[str, Any], leave: Collection[Any] = ()) -> list[Note]:
    changed = []
    for what, get, put in _HOOKS:
        if what not in leave and get() is not before[what]:
            put(before[what])
            changed.append(what)
    return [PutBack("hooks_put_back", tuple(changed))] if changed else []


# --- the global random generators, kept as after one run of the cell (a helper draws once
# per trace: :meth:`Streams.settle`) -------------------------------------------------------


#: Each generator: how to read its state, how to set it back.
_GENERATORS: dict[str, tuple[Callable[[], Any], Callable[[Any], Any]]] = {
    "np.random": (lambda: np.random.get_state(legacy=False), np.random.set_state),
    "random": (random.getstate, random.setstate)}


def _states() -> dict[str, Any]:
    return {name: get() for name, (get, _) in _GENERATORS.items()}


def view_streams() -> dict[str, Any]:
    """Each generator's state, comparable with ``==`` (numpy's holds an array)."""
    return {name: pickle.dumps(state) for name, state in _states().items()}


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
        now = view_streams()
        changed = [name for name, state in kept.items()
                   if name not in leave and now[name] != pickle.dumps(state)]
        for name in changed:
            _GENERATORS[name][1](kept[name])
        return [PutBack("streams_put_back", tuple(changed), self.once is not None)] \
            if changed else []

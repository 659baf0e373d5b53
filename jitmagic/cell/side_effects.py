"""What a cell's code may change in the interpreter, undone after it is measured.

The cell's helpers run once per trace, and a comparison traces them many times,
so whatever they change outside the scratch namespace is changed that often,
and would outlive the measurement. :func:`side_effects_undone` snapshots each
row of :data:`EFFECTS` before the measurement and, after it, puts back what
changed, with one sentence per row for the result's warnings:

===========================  =======================================  ========================
snapshot                     restored by                              the sentence names
===========================  =======================================  ========================
pyplot's figure numbers      closing the figures opened since         N matplotlib figures
(if pyplot is imported)
``jax.monitoring``'s lists   the listeners added removed, the ones    N jax.monitoring
of listeners                 removed registered again                 listeners
``warnings.filters``,        the list (the same object) and its       the warnings filters,
``warnings.showwarning``     contents (a library's new ones kept);    warnings.showwarning
                             the function
the root, ``jax`` and        level, handlers, propagate, disabled;    the root logger,
``jaxlib`` loggers,          ``logging.disable(level)``               logging.disable
``logging.disable``
matplotlib's ``rcParams``    the values changed (``backend`` aside)   the rcParams changed
(if matplotlib is imported)
``np.geterr()``              ``np.seterr(**before)``                  np.seterr's new values
``sys.getrecursionlimit()``  ``sys.setrecursionlimit``                the limit set
``os.environ``               each variable changed, added, removed    the variables
the working directory        ``os.chdir``                             the directory
``sys.argv``, ``sys.path``   the list (the same object), contents     sys.argv, sys.path
``sys``' and ``threading``'  ``sys.settrace``, ``sys.setprofile``,    the hook
trace and profile hooks      ``threading.settrace``, ``setprofile``
``sys.stdout``, ``stderr``   the stream object                        sys.stdout, sys.stderr
===========================  =======================================  ========================

State that belongs to a library is left to it: a ``jax.monitoring`` listener whose
function is JAX's own (JAX may register one on first use), and a warnings filter that
library code adds (``import numpyro`` adds some; the module stays imported, so its
filters stay) are neither removed nor reported. Whose code it is follows the one rule
of :func:`jitmagic.usercode.user_file`. The snapshot is taken with JAX imported, so
its import-time state is part of "before".

:class:`Watch` tells the measured code's changes from other threads': each row is
viewed again between jitmagic's own stages on the measuring thread (before the cell's
setup, before each stage of the measurement, at its end), and a change whose last step
came while the cell's code could not run (a steady-state loop, an XLA compile) is left
as it is, and said to have "changed while measuring (another thread?)".
Ctrl-C is held while everything is put back (:mod:`~.held`), and the lines the
measured code prints are counted apart (:mod:`~.prints`).
"""

from __future__ import annotations

import logging
import operator
import os
import sys
import threading
import warnings
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

from .._compat import add_filter_hook, monitoring_lists, set_add_filter_hook
from ..model.progress import Draw, Progress
from ..model.stats.units import counted
from ..usercode import user_file

#: A key of a row that is one value (the working directory, sys.path): :class:`Watch`.
WHOLE = "whole"


def _said(change: str) -> str:
    return f"the cell, or the code it ran, {change}: it applied while measuring and is put back now"


def _said_all(changes: list[str]) -> str | None:
    """One sentence for all of a row's changes (None: there are none)."""
    if not changes:
        return None
    return _said(changes[0] if len(changes) == 1
                 else f"{', '.join(changes[:-1])} and {changes[-1]}")


# --- matplotlib: figures and rcParams (never imported here) --------------------------


def _pyplot() -> Any:
    return sys.modules.get("matplotlib.pyplot")


def _take_figures() -> set[int]:
    plt = _pyplot()
    return set(plt.get_fignums()) if plt is not None else set()


def _undo_figures(before: set[int], leave: Collection[Any] = ()) -> str | None:
    plt = _pyplot()
    if WHOLE in leave:
        return None
    opened = [n for n in plt.get_fignums() if n not in before] if plt is not None else []
    for number in opened:
        plt.close(number)
    if not opened:
        return None
    return (f"the cell opened {counted(len(opened), 'matplotlib figure')} while measuring "
            "(code that draws runs once per trace): closed now")


def _take_rc() -> dict[str, Any] | None:
    mpl = sys.modules.get("matplotlib")
    rc = getattr(mpl, "rcParams", None)
    # Read as a dict: ``rc["backend"]`` may resolve the backend, importing pyplot.
    return {k: dict.__getitem__(rc, k) for k in rc if k != "backend"} if rc is not None else None


def _view_rc() -> dict[str, Any]:
    return _take_rc() or {}


def _undo_rc(before: dict[str, Any] | None, leave: Collection[Any] = ()) -> str | None:
    if before is None:
        return None
    rc = sys.modules["matplotlib"].rcParams
    changed = [k for k, v in before.items() if k not in leave and _differs(dict.get(rc, k), v)]
    for key in changed:
        rc[key] = before[key]
    return _said(f"changed matplotlib's rcParams {', '.join(changed)}") if changed else None


def _differs(a: Any, b: Any) -> bool:
    try:
        return bool(a != b)
    except Exception:  # noqa: BLE001 (an array-valued setting: by identity)
        return a is not b


# --- jax.monitoring ------------------------------------------------------------------

def _take_listeners() -> dict[str, tuple[list, list]]:
    """Each of JAX's private listener lists there is: (the list, a copy of it)."""
    return {name: (got, list(got)) for name, got in monitoring_lists()[1].items()}


def _view_listeners() -> dict[tuple[str, int], Any]:
    """Each listener registered now, by (its list, its id)."""
    return {(name, id(f)): f for name, got in monitoring_lists()[1].items() for f in got}


def _undo_listeners(before: dict[str, tuple[list, list]],
                    leave: Collection[Any] = ()) -> str | None:
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
    parts = [f"registered {counted(added, 'jax.monitoring listener')}"] if added else []
    parts += [f"unregistered {counted(removed, 'jax.monitoring listener')}"] if removed else []
    return _said_all(parts)


def _library(fn: Any) -> bool:
    """Whether a listener is a library's own function (JAX's, jitmagic's), not the
    user's: its code is not in a cell or a file of theirs (:func:`user_file`)."""
    fn = getattr(fn, "func", fn)  # a functools.partial
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    code = code or getattr(vars(type(fn)).get("__call__"), "__code__", None)  # an instance
    return code is None or not user_file(code.co_filename)


# --- warnings and logging ------------------------------------------------------------


class _Filters:
    """``warnings.filters`` and ``showwarning`` as they were, and the filters library
    code adds meanwhile (``import numpyro`` or ``scipy`` adds its own: they stay, as
    the module stays imported): ``warnings._add_filter`` is wrapped to tell whose
    code adds each (the first caller outside ``warnings``)."""

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
        frame = sys._getframe(1)
        while frame.f_back is not None and frame.f_code.co_filename == warnings.__file__:
            frame = frame.f_back
        if not user_file(frame.f_code.co_filename):
            self.theirs.append(item)

    def undo(self, leave: Collection[Any] = ()) -> str | None:
        if self.add is not None:
            set_add_filter_hook(self.add)
        now, said = warnings.filters, []
        others = [key[1] for key in leave if isinstance(key, tuple)]  # another thread's
        kept = [f for f in now if f in self.was or f in self.theirs or f in others]
        kept += [f for f in self.was if f not in kept and f not in others]
        if now is not self.list or kept != now:
            warnings.filters = self.list
            self.list[:] = kept if self.theirs or others else self.was
            warnings._filters_mutated()  # type: ignore[attr-defined]
            said.append("changed the warnings filters")
        if "showwarning" not in leave and warnings.showwarning is not self.show:
            warnings.showwarning = self.show
            said.append("replaced warnings.showwarning")
        return _said_all(said)


def _view_filters() -> dict[Any, Any]:
    """Each filter there is now (its entry, as the key), and ``showwarning``."""
    return {**{("filter", f): True for f in warnings.filters},
            "showwarning": warnings.showwarning}


_LOGGERS = ("", "jax", "jaxlib")  # the root logger and JAX's


def _take_logging() -> tuple[int, dict[str, tuple]]:
    return logging.root.manager.disable, {name: _logger_state(name) for name in _LOGGERS}


def _logger_state(name: str) -> tuple:
    log = logging.getLogger(name)
    return log.level, list(log.handlers), log.propagate, log.disabled


def _view_logging() -> dict[str, Any]:
    disable, loggers = _take_logging()
    return {"logging.disable": disable, **loggers}


def _logger_label(name: str) -> str:
    return "logging.disable" if name == "logging.disable" \
        else "the root logger" if not name else f"the {name!r} logger"


def _undo_logging(before: tuple[int, dict[str, tuple]],
                  leave: Collection[Any] = ()) -> str | None:
    disable, loggers = before
    said = []
    if "logging.disable" not in leave and logging.root.manager.disable != disable:
        logging.disable(disable)
        said.append("called logging.disable")
    for name, state in loggers.items():
        if name not in leave and _logger_state(name) != state:
            log = logging.getLogger(name)
            log.handlers[:] = state[1]
            log.propagate, log.disabled = state[2], state[3]
            log.setLevel(state[0])  # clears the loggers' level caches too
            which = "the root logger" if not name else f"the {name!r} logger"
            said.append(f"changed {which} (its level or handlers)")
    return _said_all(said)


# --- numpy, sys, os ------------------------------------------------------------------


def _undo_seterr(before: dict[str, Any]) -> str | None:
    now = np.geterr()
    if now == before:
        return None
    np.seterr(**before)
    changed = ", ".join(f"{k}={v!r}" for k, v in now.items() if before.get(k) != v)
    return _said(f"changed numpy's error handling (np.seterr({changed}))")


def _undo_recursion(before: int) -> str | None:
    now = sys.getrecursionlimit()
    if now == before:
        return None
    sys.setrecursionlimit(before)
    return _said(f"set sys.setrecursionlimit({now}) (it was {before})")


def _undo_environ(before: dict[str, str], leave: Collection[Any] = ()) -> str | None:
    now = dict(os.environ)
    changed = [k for k in before if now.get(k) != before[k] and k not in leave]
    added = [k for k in now if k not in before and k not in leave]
    for key in changed:
        os.environ[key] = before[key]
    for key in added:
        del os.environ[key]
    if not changed and not added:
        return None
    names = [*changed, *(f"{k} (added)" for k in added)]
    return _said(f"changed environment variables {', '.join(names)}")


def _take_cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # it was removed
        return None


def _undo_cwd(before: str | None) -> str | None:
    now = _take_cwd()
    if before is None or now == before:
        return None
    os.chdir(before)
    return _said(f"changed the working directory to {now!r} (it was {before!r})")


def _sys_list(name: str) -> Callable[[], tuple[list, list]]:
    return lambda: (getattr(sys, name), list(getattr(sys, name)))


def _undo_sys_list(name: str) -> Callable[[tuple[list, list]], str | None]:
    def undo(before: tuple[list, list]) -> str | None:
        kept, was = before
        if getattr(sys, name) is kept and kept == was:
            return None
        setattr(sys, name, kept)
        kept[:] = was
        return _said(f"changed sys.{name}")
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


def _take_hooks() -> list[Any]:
    return [get() for _, get, _ in _HOOKS]


def _view_hooks() -> dict[str, Any]:
    return {what: get() for what, get, _ in _HOOKS}


def _undo_hooks(before: list[Any], leave: Collection[Any] = ()) -> str | None:
    changed = []
    for (what, get, put), was in zip(_HOOKS, before, strict=True):
        if what not in leave and get() is not was:
            put(was)
            changed.append(what)
    return _said(f"changed {', '.join(changed)}") if changed else None


def _whole(undo: Callable[[Any], str | None]) -> Callable[..., str | None]:
    """``undo`` of a row that is one value, left alone where :class:`Watch` says another
    thread changed it."""
    def undo_unless_left(before: Any, leave: Collection[Any] = ()) -> str | None:
        return None if WHOLE in leave else undo(before)
    return undo_unless_left


def _one(take: Callable[[], Any]) -> Callable[[], dict[str, Any]]:
    """The view of a row that is one value."""
    return lambda: {WHOLE: take()}


def _named(what: str) -> Callable[[Any], str]:
    return lambda key: what


class Effect(NamedTuple):
    """One row: how to snapshot one kind of state, how to put it back (returning the
    sentence for the result's warnings, or None where nothing changed; ``leave``: the keys
    of ``view`` that :class:`Watch` found another thread changed), how to view it again
    cheaply between stages (key → value), and what the warnings call one of its keys."""

    take: Callable[[], Any]
    undo: Callable[..., str | None]
    view: Callable[[], dict[Any, Any]]
    label: Callable[[Any], str]
    identity: bool = False  # the view's values are compared with ``is``


EFFECTS: tuple[Effect, ...] = (
    Effect(_take_figures, _undo_figures, _one(lambda: frozenset(_take_figures())),
           _named("pyplot's open figures")),
    Effect(_take_listeners, _undo_listeners, _view_listeners,
           _named("jax.monitoring's listeners"), identity=True),
    Effect(_Filters, _Filters.undo, _view_filters,
           lambda key: "warnings.showwarning" if key == "showwarning" else "the warnings filters"),
    Effect(_take_logging, _undo_logging, _view_logging, _logger_label),
    Effect(_take_rc, _undo_rc, _view_rc, lambda key: f"matplotlib's rcParams {key}"),
    Effect(np.geterr, _whole(_undo_seterr), _one(lambda: tuple(sorted(np.geterr().items()))),
           _named("numpy's error handling (np.seterr)")),
    Effect(sys.getrecursionlimit, _whole(_undo_recursion), _one(sys.getrecursionlimit),
           _named("the recursion limit")),
    Effect(lambda: dict(os.environ), _undo_environ, lambda: dict(os.environ),
           lambda key: f"the environment variable {key}"),
    Effect(_take_cwd, _whole(_undo_cwd), _one(_take_cwd), _named("the working directory")),
    Effect(_sys_list("argv"), _whole(_undo_sys_list("argv")), _one(_sys_list("argv")),
           _named("sys.argv")),
    Effect(_sys_list("path"), _whole(_undo_sys_list("path")), _one(_sys_list("path")),
           _named("sys.path")),
    Effect(_take_hooks, _undo_hooks, _view_hooks, str),
)


@contextmanager
def side_effects_undone(active: bool = True, watch: Watch | None = None) -> Iterator[list[str]]:
    """Snapshot every row of :data:`EFFECTS`, and put back what changed on exit.

    Yields a list that, after the block, holds one sentence per kind of state put back.
    With ``active`` False (a file run: the process ends after it) nothing is done. With
    a ``watch``, what it finds another thread changed is left as it is (it says so).
    """
    undone: list[str] = []
    before = [row.take() for row in EFFECTS] if active else []
    if watch is not None:
        for i, row in enumerate(EFFECTS[:len(before)]):
            watch.add(f"effect {i}", row.view, row.label, row.identity)
    try:
        yield undone
    finally:
        for i, (row, was) in enumerate(zip(EFFECTS, before, strict=False)):
            try:
                leave = watch.theirs(f"effect {i}") if watch is not None else frozenset()
                sentence = row.undo(was, leave)
            except Exception as exc:  # noqa: BLE001 (the next rows are put back all the same)
                sentence = (f"the cell changed something jitmagic could not put back "
                            f"({type(exc).__name__}: {exc})")
            if sentence:
                undone.append(sentence)


# --- whose change: the measured code's, or another thread's --------------------------

#: The stages of a measurement in which the cell's code does not run on the measuring
#: thread (compiled calls, XLA's compile): a change seen across one is another thread's.
NOT_THE_CELLS = frozenset({"steady state", "XLA compile"})
_MISSING = object()


class Watch:
    """Which changes the measured code made, and which another thread made meanwhile.

    Each kind of state is viewed again (:meth:`mark`) between jitmagic's own stages on the
    measuring thread: before the cell's setup, before each stage of the measurement (its
    progress, :meth:`drawing`), and as it ends. A key that changed in a window where the
    cell's code could run (its setup, a trace, a first call) is the cell's, put back as
    before; one that changed only in windows where it could not (a steady-state loop, an
    XLA compile: :data:`NOT_THE_CELLS`) is another thread's (:meth:`theirs`), left as it
    is and named by :meth:`left`. A change another thread makes while the cell's code
    could run is still put back: nothing tells them apart (and what jitmagic switches
    and puts back itself, the compilation cache, stays the cell's where the cell set it).
    """

    def __init__(self) -> None:
        self._views: dict[str, tuple[Callable[[], dict], Callable[[Any], str], bool]] = {}
        self._first: dict[str, dict] = {}
        self._seen: dict[str, dict] = {}
        #: per view, the keys that changed in a window where the cell's code could run
        self._cells_changed: dict[str, set[Any]] = {}
        self._cells = True  # the window open now: the cell's code may run in it

    def add(self, name: str, view: Callable[[], dict], label: Callable[[Any], str],
            identity: bool = False) -> None:
        """Watch ``view`` (key → value, compared with ``is`` where ``identity``) from now;
        ``label`` names a key in :meth:`left`'s sentence."""
        seen = _viewed(view, {})
        self._views[name] = (view, label, identity)
        self._first[name], self._seen[name], self._cells_changed[name] = seen, seen, set()

    def mark(self, cells: bool) -> None:
        """A boundary between two of jitmagic's stages: what changed since the last one
        changed in the window that ends here; the one that begins may run the cell's code
        (``cells``) or not."""
        for name, (view, _, identity) in self._views.items():
            was = self._seen[name]
            now = _viewed(view, was)
            if self._cells and not _same_view(was, now, identity):  # else only the view
                moved = [key for key in was.keys() | now.keys()
                         if was.get(key, _MISSING) is not now.get(key, _MISSING)]
                self._cells_changed[name].update(
                    key for key in moved
                    if _changed(was.get(key, _MISSING), now.get(key, _MISSING), identity))
            self._seen[name] = now
        self._cells = cells

    def drawing(self, draw: Draw | None) -> Draw:
        """A progress ``draw`` that marks each stage's start first (and draws nothing
        without one): the measurement tells its progress between stages, never inside one."""
        def marked(p: Progress) -> None:
            self.mark(p.stage not in NOT_THE_CELLS)
            if draw is not None:
                draw(p)
        return marked

    def theirs(self, name: str) -> frozenset[Any]:
        """The keys of view ``name`` changed since it was added (as of the last
        :meth:`mark`) only in windows where the cell's code could not run."""
        if name not in self._views:
            return frozenset()
        identity, mine = self._views[name][2], self._cells_changed[name]
        first, now = self._first[name], self._seen[name]
        return frozenset(k for k in first.keys() | now.keys() if k not in mine
                         and _changed(first.get(k, _MISSING), now.get(k, _MISSING), identity))

    def left(self) -> list[str]:
        """One sentence naming what another thread changed (:meth:`theirs`), or none."""
        names = list(dict.fromkeys(self._views[name][1](key) for name in self._views
                                   for key in sorted(self.theirs(name), key=repr)))
        if not names:
            return []
        said = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        left = "it as it is" if len(names) == 1 else "them as they are"
        return [f"{said} changed while measuring (another thread?), at moments your code "
                f"was not running: jitmagic left {left}"]


def _viewed(view: Callable[[], dict], otherwise: dict) -> dict:
    """``view()``; ``otherwise`` (no change seen) where it fails."""
    try:
        return view()
    except Exception:  # noqa: BLE001 (a state that cannot be read now is not compared)
        return otherwise


def _same_view(was: dict, now: dict, identity: bool) -> bool:
    """Whether nothing in a view changed (the quick answer, in C; False: look key by key)."""
    try:
        if identity:
            return was.keys() == now.keys() and all(map(operator.is_, was.values(),
                                                        now.values()))
        return bool(was == now)
    except Exception:  # noqa: BLE001 (a value that cannot say: look key by key)
        return False


def _changed(was: Any, now: Any, identity: bool) -> bool:
    if was is now:
        return False
    if identity or was is _MISSING or now is _MISSING:
        return True
    return _differs(was, now)

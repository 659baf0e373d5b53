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

:func:`prints_counted` counts the lines the measured code prints (``sys.stdout``
wrapped while it runs; the setup, which runs once, is left out with
:func:`uncounted`), for :func:`printed_note`.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .._compat import add_filter_hook, monitoring_lists, set_add_filter_hook
from ..usercode import user_file


def _said(change: str) -> str:
    return f"the cell, or the code it ran, {change}: it applied while measuring and is put back now"


def _said_all(changes: list[str]) -> str | None:
    """One sentence for all of a row's changes (None: there are none)."""
    if not changes:
        return None
    return _said(changes[0] if len(changes) == 1
                 else f"{', '.join(changes[:-1])} and {changes[-1]}")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# --- matplotlib: figures and rcParams (never imported here) --------------------------


def _pyplot() -> Any:
    return sys.modules.get("matplotlib.pyplot")


def _take_figures() -> set[int]:
    plt = _pyplot()
    return set(plt.get_fignums()) if plt is not None else set()


def _undo_figures(before: set[int]) -> str | None:
    plt = _pyplot()
    opened = [n for n in plt.get_fignums() if n not in before] if plt is not None else []
    for number in opened:
        plt.close(number)
    if not opened:
        return None
    return (f"the cell opened {_plural(len(opened), 'matplotlib figure')} while measuring "
            "(code that draws runs once per trace): closed now")


def _take_rc() -> dict[str, Any] | None:
    mpl = sys.modules.get("matplotlib")
    rc = getattr(mpl, "rcParams", None)
    # Read as a dict: ``rc["backend"]`` may resolve the backend, importing pyplot.
    return {k: dict.__getitem__(rc, k) for k in rc if k != "backend"} if rc is not None else None


def _undo_rc(before: dict[str, Any] | None) -> str | None:
    if before is None:
        return None
    rc = sys.modules["matplotlib"].rcParams
    changed = [k for k, v in before.items() if _differs(dict.get(rc, k), v)]
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


def _undo_listeners(before: dict[str, tuple[list, list]]) -> str | None:
    mod, added, removed = monitoring_lists()[0], 0, 0
    for name, (kept, was) in before.items():
        now = getattr(mod, name, kept)
        new = [f for f in now if not any(f is g for g in was)]
        theirs = [f for f in new if _library(f)]  # JAX's own: left registered, unreported
        added += len(new) - len(theirs)
        removed += sum(1 for f in was if not any(f is g for g in now))
        setattr(mod, name, kept)  # ``clear_event_listeners`` rebinds the names
        kept[:] = [*was, *theirs]
    parts = [f"registered {_plural(added, 'jax.monitoring listener')}"] if added else []
    parts += [f"unregistered {_plural(removed, 'jax.monitoring listener')}"] if removed else []
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

    def undo(self) -> str | None:
        if self.add is not None:
            set_add_filter_hook(self.add)
        now, said = warnings.filters, []
        kept = [f for f in now if f in self.was or f in self.theirs]
        kept += [f for f in self.was if f not in kept]
        if now is not self.list or kept != now:
            warnings.filters = self.list
            self.list[:] = kept if self.theirs else self.was
            warnings._filters_mutated()  # type: ignore[attr-defined]
            said.append("changed the warnings filters")
        if warnings.showwarning is not self.show:
            warnings.showwarning = self.show
            said.append("replaced warnings.showwarning")
        return _said_all(said)


_LOGGERS = ("", "jax", "jaxlib")  # the root logger and JAX's


def _take_logging() -> tuple[int, dict[str, tuple]]:
    return logging.root.manager.disable, {name: _logger_state(name) for name in _LOGGERS}


def _logger_state(name: str) -> tuple:
    log = logging.getLogger(name)
    return log.level, list(log.handlers), log.propagate, log.disabled


def _undo_logging(before: tuple[int, dict[str, tuple]]) -> str | None:
    disable, loggers = before
    said = []
    if logging.root.manager.disable != disable:
        logging.disable(disable)
        said.append("called logging.disable")
    for name, state in loggers.items():
        if _logger_state(name) != state:
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


def _undo_environ(before: dict[str, str]) -> str | None:
    now = dict(os.environ)
    changed = [k for k in before if now.get(k) != before[k]]
    added = [k for k in now if k not in before]
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


def _undo_hooks(before: list[Any]) -> str | None:
    changed = []
    for (what, get, put), was in zip(_HOOKS, before, strict=True):
        if get() is not was:
            put(was)
            changed.append(what)
    return _said(f"changed {', '.join(changed)}") if changed else None


#: Each row: how to snapshot one kind of state, and how to put it back (returning the
#: sentence for the result's warnings, or None where nothing changed).
EFFECTS: tuple[tuple[Callable[[], Any], Callable[[Any], str | None]], ...] = (
    (_take_figures, _undo_figures),
    (_take_listeners, _undo_listeners),
    (_Filters, _Filters.undo),
    (_take_logging, _undo_logging),
    (_take_rc, _undo_rc),
    (np.geterr, _undo_seterr),
    (sys.getrecursionlimit, _undo_recursion),
    (lambda: dict(os.environ), _undo_environ),
    (_take_cwd, _undo_cwd),
    (_sys_list("argv"), _undo_sys_list("argv")),
    (_sys_list("path"), _undo_sys_list("path")),
    (_take_hooks, _undo_hooks),
)


@contextmanager
def side_effects_undone(active: bool = True) -> Iterator[list[str]]:
    """Snapshot every row of :data:`EFFECTS`, and put back what changed on exit.

    Yields a list that, after the block, holds one sentence per kind of state put back.
    With ``active`` False (a file run: the process ends after it) nothing is done.
    """
    undone: list[str] = []
    before = [take() for take, _ in EFFECTS] if active else []
    try:
        yield undone
    finally:
        for (_, undo), was in zip(EFFECTS, before, strict=False):
            try:
                sentence = undo(was)
            except Exception as exc:  # noqa: BLE001 (the next rows are put back all the same)
                sentence = (f"the cell changed something jitmagic could not put back "
                            f"({type(exc).__name__}: {exc})")
            if sentence:
                undone.append(sentence)


# --- printing while measured ---------------------------------------------------------


class _Counting:
    """A stream that counts the lines written through it (unless paused)."""

    def __init__(self, stream: Any) -> None:
        self._stream, self.lines, self.partial, self.paused = stream, 0, False, 0

    def write(self, text: str) -> int:
        if not self.paused and text:
            self.lines += text.count("\n")
            self.partial = not text.endswith("\n")
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    @property
    def count(self) -> int:
        return self.lines + (1 if self.partial else 0)


@contextmanager
def prints_counted() -> Iterator[_Counting]:
    """``sys.stdout`` wrapped to count the lines printed in the block; put back after
    (unless the code replaced it in turn: :data:`EFFECTS` puts that back)."""
    stream = sys.stdout
    counting = _Counting(stream)
    if stream is not None:  # None (no console): print writes nothing, there is nothing to count
        sys.stdout = counting
    try:
        yield counting
    finally:
        if sys.stdout is counting:
            sys.stdout = stream


@contextmanager
def uncounted() -> Iterator[None]:
    """Leave what is printed in the block out of :func:`prints_counted`'s count."""
    counting = sys.stdout if isinstance(sys.stdout, _Counting) else None
    if counting is not None:
        counting.paused += 1
    try:
        yield
    finally:
        if counting is not None:
            counting.paused -= 1


def printed_note(lines: int, traces: int) -> list[str]:
    """Why the measured code's output repeats: one sentence, where it printed."""
    if not lines:
        return []
    return [f"your code printed {_plural(lines, 'line')} while it was measured: Python code "
            f"(print included) runs each time JAX traces it, at least {traces} times here "
            "(once to find the helpers, then once per cold run of each variant), and "
            "jax.debug.print prints on every call"]

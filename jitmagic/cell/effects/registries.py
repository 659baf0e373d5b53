"""The process-wide rows of what libraries keep and code adds to (figures, ``rcParams``, listeners,
warnings filters, loggers); a library's own additions are kept."""

from __future__ import annotations

import logging
import sys
import warnings
from collections.abc import Collection
from typing import Any

from ..._compat import add_filter_hook
from ..._compat import filters_mutated
from ..._compat import monitoring_lists
from ..._compat import set_add_filter_hook
from ...model.notes import Note
from ...model.notes import PutBack
from ...usercode import called_by_user
from ...usercode import user_file
from .watch import differs

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


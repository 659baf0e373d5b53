"""The name rows: what a cell reaches through a name it did not make (JAX's config, library
modules, the user's modules and classes, the kernel's globals), taken shallowly."""

from __future__ import annotations

import functools
import re
import sys
import threading
import types
from collections.abc import Callable, Collection, Mapping
from typing import Any

import jax

from ...model.notes import Note, PutBack
from ...usercode import user_file
from .watch import Noting, unwrap

#: The modules whose names a cell most often patches (``jnp.sin = ...``).
WATCHED_MODULES = ("jax", "jax.numpy", "jax.nn", "jax.lax", "jax.random", "numpy")

#: Names IPython keeps in the user's namespace (its input and output history).
_IPYTHON_NAMES = re.compile(r"_+|_i+|_i?\d+|_[ido]h|In|Out")
_MISSING = object()


def _rebased(before: dict[str, Any], now: Mapping[str, Any],
             keys: Collection[str]) -> dict[str, Any]:
    """``before`` with ``keys`` as they are ``now``: what another thread set is not put back."""
    out = dict(before)
    for key in keys:
        if key in now:
            out[key] = now[key]
        else:
            out.pop(key, None)
    return out


# --- JAX's config and the watched modules' names -------------------------------------


def take_config() -> dict[str, Any]:
    return dict(jax.config.values)


class Config:
    """JAX's config as it was, and which thread set each option meanwhile."""

    def __init__(self) -> None:
        self.was = take_config()
        me = threading.get_ident()
        self.others = {t.ident for t in threading.enumerate()} - {me}
        self.writers: dict[str, set[bool]] = {}  # option → {called from another thread}
        def noted(name: str, val: Any) -> None:
            self.writers.setdefault(name, set()).add(threading.get_ident() in self.others)

        self.hook = Noting(jax.config.update, noted)
        jax.config.update = self.hook  # type: ignore[method-assign]

    def undo(self, leave: Collection[str] = ()) -> list[Note]:
        unwrap(vars(jax.config).get("update"), self.hook, self._put_back)
        theirs = {k for k, by in self.writers.items() if by == {True}}
        before, now = _rebased(self.was, jax.config.values, {*leave, *theirs}), jax.config.values
        changed = {k: now[k] for k in before if k in now and now[k] != before[k]}
        for key in changed:
            jax.config.update(key, before[key])
        left: list[Note] = [PutBack("config_left", k, repr(now[k])) for k in sorted(theirs)
                            if k not in leave and k in now
                            and now[k] != self.was.get(k, _MISSING)]
        return [PutBack("config_put_back", key, repr(value), repr(before[key]), self._sure(key))
                for key, value in changed.items()] + left

    @staticmethod
    def _put_back(inner: Any) -> None:
        """``jax.config.update`` as it was: an instance's own, or none (the class's)."""
        if inner == type(jax.config).update.__get__(jax.config):
            vars(jax.config).pop("update", None)
        else:
            jax.config.update = inner  # type: ignore[method-assign]

    def _sure(self, key: str) -> bool:
        """Whether the change of ``key`` was surely the cell's, as far as the calls seen tell."""
        return self.writers.get(key) == {False} or (key not in self.writers
                                                    and not self.others)


def view_names(module: types.ModuleType) -> Callable[[], dict[str, Any]]:
    """The module's names that hold no module (an import of ``jax.extend`` sets ``jax.extend``)."""
    return lambda: {k: v for k, v in list(vars(module).items())
                    if not isinstance(v, types.ModuleType)}


def undo_names(modname: str, module: types.ModuleType) -> Callable[..., list[Note]]:
    """How to put ``module``'s names back; a module a cell imports is left alone."""
    def undo(before: dict[str, Any], leave: Collection[str] = ()) -> list[Note]:
        changed, added = _names_back(_rebased(before, vars(module), leave), vars(module),
                                     functools.partial(setattr, module),
                                     functools.partial(delattr, module))
        return [PutBack("library_name_put_back", modname, key) for key in (*changed, *added)]
    return undo


# --- the user's own modules and classes ----------------------------------------------


def user_dicts(namespace: dict[str, Any] | None) -> dict[str, Any]:
    """The user's modules, and the classes of theirs and of ``namespace``, by name."""
    out: dict[str, Any] = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if isinstance(module, types.ModuleType) and isinstance(path, str) and user_file(path):
            out[name] = module
            out.update({f"{name}.{k}": v for k, v in list(vars(module).items())
                        if isinstance(v, type) and v.__module__ == name})
    local = (namespace or {}).get("__name__", "__main__")
    out.update({k: v for k, v in (namespace or {}).items()
                if isinstance(v, type) and v.__module__ in (local, "__main__")})
    return out


def view_own(owners: dict[str, Any]) -> Callable[[], dict[tuple[str, str], Any]]:
    return lambda: {(label, key): value for label, owner in owners.items()
                    for key, value in list(vars(owner).items()) if not key.startswith("__")}


def undo_own(owners: dict[str, Any]) -> Callable[..., list[Note]]:
    def undo(before: dict[str, dict[str, Any]],
             leave: Collection[tuple[str, str]] = ()) -> list[Note]:
        before = dict(before)
        for label, key in leave:
            before[label] = _rebased(before[label], vars(owners[label]), (key,))
        done = {label: _names_back(names, vars(owners[label]),
                                   functools.partial(setattr, owners[label]),
                                   functools.partial(delattr, owners[label]),
                                   lambda k: k.startswith("__"))
                for label, names in before.items()}
        said = [f"{label}.{k}" for label, (changed, added) in done.items()
                for k in (*changed, *added)]
        added = tuple(f"{label}.{k}" for label, (_, new) in done.items() for k in new)
        return [PutBack("own_names_put_back", tuple(said), added)] if said else []
    return undo


def _names_back(before: dict[str, Any], now: Mapping[str, Any], put: Callable[[str, Any], Any],
                drop: Callable[[str], Any], ignored: Callable[[str], bool] = lambda _: False,
                modules: bool = False) -> tuple[list[str], list[str]]:
    """Put back the names of ``before`` and drop those added; (changed, added)."""
    changed = [k for k in before if not ignored(k) and now.get(k, _MISSING) is not before[k]]
    added = [k for k in now if k not in before and not ignored(k)
             and (modules or not isinstance(now[k], types.ModuleType))]
    for key in changed:
        put(key, before[key])
    for key in added:
        drop(key)
    return changed, added


# --- the kernel's namespace ----------------------------------------------------------


def view_globals(namespace: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    """The names of ``namespace`` that are the user's (not IPython's)."""
    return lambda: {k: v for k, v in list(namespace.items()) if not _ipythons(k)}


def _ipythons(name: str) -> bool:
    """Whether a name of the kernel's namespace is IPython's (its history) or a dunder."""
    return name.startswith("__") or bool(_IPYTHON_NAMES.fullmatch(name))


def undo_globals(namespace: dict[str, Any]) -> Callable[..., list[Note]]:
    """How to put back the kernel's names (an earlier cell's function writes them)."""
    def undo(before: dict[str, Any], leave: Collection[str] = ()) -> list[Note]:
        changed, added = _names_back(_rebased(before, namespace, leave), namespace,
                                     namespace.__setitem__, namespace.__delitem__,
                                     _ipythons, modules=True)
        return [PutBack("globals_put_back", tuple(sorted(changed)), tuple(sorted(added)))] \
            if changed or added else []
    return undo

"""What a cell may change outside its scratch namespace, put back after it is measured.

The cell runs in a copy of the user's namespace, but ``jax.config.update`` and
``jnp.sin = ...`` reach shared state: JAX's configuration and the library
modules every later cell uses. So do ``L.SCALE = 2`` on the user's own module
``L`` and ``Model.depth = 4`` on the user's own class, and a helper that counts
its calls in a global or class attribute. :func:`library_state_kept` snapshots
all of these (shallowly: the names, not the objects they hold) around a
measurement, restores them after, and reports what it put back so the result
can say so. With a :class:`~jitmagic.cell.side_effects.Watch`, a name another thread
changed while the cell's code was not running is left as that thread set it.
"""

from __future__ import annotations

import importlib
import re
import sys
import types
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import jax

from ..usercode import user_file
from .side_effects import Watch

#: The modules whose names a cell most often patches (``jnp.sin = ...``).
WATCHED_MODULES = ("jax", "jax.numpy", "jax.nn", "jax.lax", "jax.random", "numpy")


@contextmanager
def library_state_kept(namespace: dict[str, Any] | None = None,
                       watch: Watch | None = None) -> Iterator[list[str]]:
    """Restore JAX's config values, :data:`WATCHED_MODULES`' names, the names of
    the user's own modules and classes (:func:`user_dicts`), and those of ``namespace``
    itself (the kernel's globals, which functions from earlier cells write) on exit.

    Yields a list that, after the block, holds one sentence per thing restored.
    A module a cell imports (``jax.scipy`` appearing on ``jax``) is left alone. What
    ``watch`` finds another thread changed is left as it is (the watch says so).
    """
    config = dict(jax.config.values)
    modules = {name: importlib.import_module(name) for name in WATCHED_MODULES}
    names = {name: dict(vars(m)) for name, m in modules.items()}
    own = {label: (owner, dict(vars(owner))) for label, owner in user_dicts(namespace).items()}
    user = dict(namespace) if namespace is not None else {}
    if watch is not None:
        _watched(watch, modules, own, namespace)
    restored: list[str] = []
    try:
        yield restored
    finally:
        if watch is not None:  # another thread's changes: as if they had come before
            config = _rebased(config, jax.config.values, watch.theirs("config"))
            names = {name: _rebased(names[name], vars(m), watch.theirs(f"names {name}"))
                     for name, m in modules.items()}
            for label, key in watch.theirs("own"):
                owner, kept = own[label]
                own[label] = (owner, _rebased(kept, vars(owner), (key,)))
            if namespace is not None:
                user = _rebased(user, namespace, watch.theirs("globals"))
        restored += _restore_config(config)
        for name, module in modules.items():
            restored += _restore_names(name, module, names[name])
        restored += _restore_own(own)
        restored += _restore_globals(namespace, user)


def _watched(watch: Watch, modules: dict[str, types.ModuleType],
             own: dict[str, tuple[Any, dict[str, Any]]],
             namespace: dict[str, Any] | None) -> None:
    """Have ``watch`` view what :func:`library_state_kept` puts back."""
    watch.add("config", lambda: dict(jax.config.values), lambda key: f"JAX's config {key}")
    for name, module in modules.items():
        watch.add(f"names {name}", _names_of(module), _named_in(name), identity=True)
    watch.add("own", lambda: {(label, key): value for label, (owner, _) in own.items()
                              for key, value in list(vars(owner).items())
                              if not key.startswith("__")},
              lambda key: f"{key[0]}.{key[1]}", identity=True)
    if namespace is not None:
        watch.add("globals", lambda: {k: v for k, v in list(namespace.items())
                                      if not k.startswith("__")
                                      and not _IPYTHON_NAMES.fullmatch(k)},
                  lambda key: f"your global {key}", identity=True)


def _names_of(module: types.ModuleType) -> Callable[[], dict[str, Any]]:
    return lambda: dict(vars(module))


def _named_in(modname: str) -> Callable[[str], str]:
    return lambda key: f"{modname}.{key}"


def _rebased(before: dict[str, Any], now: Mapping[str, Any],
             keys: Collection[str]) -> dict[str, Any]:
    """``before`` with ``keys`` as they are ``now`` (gone where ``now`` lacks them): what
    another thread set is not put back."""
    out = dict(before)
    for key in keys:
        if key in now:
            out[key] = now[key]
        else:
            out.pop(key, None)
    return out


def user_dicts(namespace: dict[str, Any] | None) -> dict[str, Any]:
    """The user's modules (their file outside the standard library, site-packages and
    jitmagic) and the classes defined in them or in ``namespace``, by how a user names
    them (``mylayers``, ``mylayers.Block``, ``Counter``)."""
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


def _restore_own(before: dict[str, tuple[Any, dict[str, Any]]]) -> list[str]:
    """Put back the names of the user's modules and classes; one sentence listing them."""
    changed = []
    for label, (owner, names) in before.items():
        now = dict(vars(owner))
        for key in [k for k in names if not k.startswith("__")
                    and (k not in now or now[k] is not names[k])]:
            setattr(owner, key, names[key])
            changed.append(f"{label}.{key}")
        for key in [k for k in now if k not in names and not k.startswith("__")
                    and not isinstance(now[k], types.ModuleType)]:
            delattr(owner, key)
            changed.append(f"{label}.{key} (added)")
    if not changed:
        return []
    return [f"the cell, or the code it ran, changed names of your own modules and classes: "
            f"{', '.join(changed)}. They applied while measuring and are put back now; a "
            f"count a helper keeps there counted traces, not your calls (lists and dicts "
            f"changed in place are not put back)"]


#: Names IPython keeps in the user's namespace (its input and output history).
_IPYTHON_NAMES = re.compile(r"_+|_i+|_i?\d+|_[ido]h|In|Out")
_MISSING = object()


def _restore_globals(namespace: dict[str, Any] | None, before: dict[str, Any]) -> list[str]:
    """Put back the names of ``namespace`` (the kernel's): a function from an earlier
    cell reads and writes it, not the scratch copy (``global CALLS; CALLS += 1``)."""
    if namespace is None:
        return []
    mine = [k for k in namespace.keys() | before.keys()
            if not k.startswith("__") and not _IPYTHON_NAMES.fullmatch(k)]
    changed = sorted(k for k in mine if k in before and namespace.get(k, _MISSING) is not before[k])
    added = sorted(k for k in mine if k not in before)
    for key in changed:
        namespace[key] = before[key]
    for key in added:
        del namespace[key]
    if not changed and not added:
        return []
    names = ", ".join([*changed, *(f"{k} (added)" for k in added)])
    return [f"the code measured changed your globals {names}: it applied while measuring "
            "and they are put back now; a count a helper keeps there counted traces, not "
            "your calls"]


def _restore_config(before: dict[str, Any]) -> list[str]:
    now = jax.config.values
    changed = {k: now[k] for k in before if k in now and now[k] != before[k]}
    for key in changed:
        jax.config.update(key, before[key])
    return [f"the cell changed JAX's config {key} to {value!r}: it applied while measuring "
            f"and is back to {before[key]!r} now" for key, value in changed.items()]


def _restore_names(modname: str, module: types.ModuleType, before: dict[str, Any]) -> list[str]:
    now = vars(module)
    changed = [k for k in before if k not in now or now[k] is not before[k]]
    added = [k for k in now if k not in before and not isinstance(now[k], types.ModuleType)]
    for key in changed:
        setattr(module, key, before[key])
    for key in added:
        delattr(module, key)
    return [f"the cell patched the library name {modname}.{key}: it applied while measuring "
            "and is now restored" for key in (*changed, *added)]

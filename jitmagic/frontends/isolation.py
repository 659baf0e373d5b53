"""What a cell may change outside its scratch namespace, put back after it is measured.

The cell runs in a copy of the user's namespace, but ``jax.config.update`` and
``jnp.sin = ...`` reach shared state: JAX's configuration and the library
modules every later cell uses. :func:`library_state_kept` snapshots both around
a measurement, restores them after, and reports what it put back so the
result can say so.
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import jax

#: The modules whose names a cell most often patches (``jnp.sin = ...``).
WATCHED_MODULES = ("jax", "jax.numpy", "jax.nn", "jax.lax", "jax.random", "numpy")


@contextmanager
def library_state_kept() -> Iterator[list[str]]:
    """Restore JAX's config values and :data:`WATCHED_MODULES`' names on exit.

    Yields a list that, after the block, holds one sentence per thing restored.
    A module a cell imports (``jax.scipy`` appearing on ``jax``) is left alone.
    """
    config = dict(jax.config.values)
    modules = {name: importlib.import_module(name) for name in WATCHED_MODULES}
    names = {name: dict(vars(m)) for name, m in modules.items()}
    restored: list[str] = []
    try:
        yield restored
    finally:
        restored += _restore_config(config)
        for name, module in modules.items():
            restored += _restore_names(name, module, names[name])


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

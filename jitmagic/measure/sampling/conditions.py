"""The conditions every timed interval runs under: the user's heap out of the
collector's sight, the collector paused, the persistent compilation cache off.
Each restores what the user had."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import jax

from ..._compat import reset_persistent_cache


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Move what exists now out of the collector's sight for a whole measurement.

    ``paused_gc`` collects before every timed interval; with the long-lived
    heap (JAX, the user's session) frozen, each of those collections scans
    only what the measurement itself created, which keeps them cheap. (Garbage
    frozen here is collected as usual after ``unfreeze``.) If the user froze
    the heap themselves (``gc.get_freeze_count() > 0``), it is left exactly as
    they froze it: ``unfreeze`` would release their objects too.
    """
    mine = gc.get_freeze_count() == 0
    if mine:
        gc.freeze()
    try:
        yield
    finally:
        if mine:
            gc.unfreeze()


@contextmanager
def paused_gc() -> Iterator[None]:
    """Collect now, then keep the collector out of the timed interval (as ``timeit`` does)."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def persistent_cache_off() -> Iterator[bool]:
    """Turn JAX's persistent (disk) compilation cache off; restore the user's setting.

    Yields whether a cache directory was set (and so had to be switched off).
    Whether the cache is used is decided once per process, so it is reset on
    both sides for the switch to count.
    """
    # properties JAX adds to its Config at run time, unseen by mypy (jax.config.read
    # refuses them: they have context managers)
    was_on = jax.config.jax_enable_compilation_cache  # type: ignore[attr-defined]
    had_dir = bool(jax.config.jax_compilation_cache_dir)  # type: ignore[attr-defined]
    if not (was_on and had_dir):
        yield False
        return
    reset_persistent_cache()
    jax.config.update("jax_enable_compilation_cache", False)
    try:
        yield True
    finally:
        jax.config.update("jax_enable_compilation_cache", was_on)
        reset_persistent_cache()

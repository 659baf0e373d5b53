"""The conditions every timed interval runs under: the user's heap out of the
collector's sight, the collector paused, the persistent compilation cache off (or, for
``--cache``, on in a folder of jitmagic's own). Each restores what the user had, with
Ctrl-C held while it does (:func:`~jitmagic.interrupts.interrupts_held`)."""

from __future__ import annotations

import gc
import shutil
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import jax

from ..._compat import reset_persistent_cache
from ...interrupts import interrupts_held
from ..scratch import scratch_folder


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Move what exists now out of the collector's sight for a whole measurement, so
    ``paused_gc``'s collections scan only what the measurement made. A heap the user
    froze themselves is left as it is (``unfreeze`` would release their objects too)."""
    mine = gc.get_freeze_count() == 0
    if mine:
        gc.freeze()
    try:
        yield
    finally:
        if mine:
            with interrupts_held():
                gc.unfreeze()


@contextmanager
def paused_gc(collect: bool = True) -> Iterator[None]:
    """Collect now (``collect``), then keep the collector out of the timed interval (as
    ``timeit`` does)."""
    if collect:
        gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def _configured(values: dict[str, Any]) -> Iterator[None]:
    """JAX's config ``values`` set within, the user's put back after, even on Ctrl-C. JAX
    decides once per process whether and where to cache, so the cache is reset on both sides."""
    # properties JAX adds to its Config at run time (jax.config.read refuses them)
    saved = {name: getattr(jax.config, name) for name in values}
    reset_persistent_cache()
    try:
        for name, value in values.items():
            jax.config.update(name, value)
        yield
    finally:
        with interrupts_held():  # put back whole, however many times Ctrl-C is pressed
            for name, value in saved.items():
                jax.config.update(name, value)
            reset_persistent_cache()


@contextmanager
def persistent_cache_off() -> Iterator[bool]:
    """Turn JAX's persistent compilation cache off, yielding whether it was on; restore
    the user's setting."""
    was_on = jax.config.jax_enable_compilation_cache  # type: ignore[attr-defined]
    had_dir = bool(jax.config.jax_compilation_cache_dir)  # type: ignore[attr-defined]
    if not (was_on and had_dir):
        yield False
        return
    with _configured({"jax_enable_compilation_cache": False}):
        yield True


#: What ``--cache`` sets beside the folder: the cache on, every program cached.
CACHING_ALL = {"jax_enable_compilation_cache": True,
               "jax_persistent_cache_min_compile_time_secs": 0.0,
               "jax_persistent_cache_min_entry_size_bytes": -1}
#: The user's settings a cache measurement changes, each put back after it.
CACHE_SETTINGS = ("jax_compilation_cache_dir", *CACHING_ALL)


def cache_settings() -> dict[str, Any]:
    """The user's persistent-cache settings now, by name (:data:`CACHE_SETTINGS`)."""
    return {name: getattr(jax.config, name) for name in CACHE_SETTINGS}


def persistent_cache_in(folder: str) -> AbstractContextManager[None]:
    """JAX's persistent compilation cache on in ``folder``, caching every program."""
    return _configured({"jax_compilation_cache_dir": folder, **CACHING_ALL})


@contextmanager
def scratch_cache() -> Iterator[Path]:
    """A fresh folder of jitmagic's own as JAX's persistent cache, removed after."""
    with scratch_folder("cache") as folder, persistent_cache_in(str(folder)):
        yield folder


def emptied(folder: Path) -> None:
    """Remove everything in ``folder`` (a cache's entries), keeping the folder."""
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()

"""What ``--cache`` measures against the same second start by hand, and what it costs.

On the README's example (``layer``, a sum of ``i * sin(x)`` terms, called 16 times by
``model``), with 96 terms instead of 64 so that its flat XLA compile takes 0.3 s or
more (below that, a warm cache has little to save), prints side by side, in one
process: the warm-cache share (median warm first call / median cold first call) as
``jitmagic.compare(..., cache=True)`` measures it, flat and nested, against a hand
measurement of the same (plain ``jax.jit``, the cache folder set by hand and emptied,
``jax.clear_caches()``, the first call timed; ``jax.clear_caches()`` again, the first
call timed again), and whether the two agree within 15%; then the cost of
``--cache``: its second start's seconds over the comparison's wall time, in the same
run. ``--rounds`` alternates the two (``--cache``, then by hand) so that a shared
machine's drift hits both; the shares compared are medians of the rounds.

    PYTHONPATH=. python benchmarks/second_start.py [--repeat 5] [--rounds 3] [--terms 96]
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp

import jitmagic
from jitmagic._compat import reset_persistent_cache

TERMS = 96
AGREE = 0.15


def layer(x):
    return sum(i * jnp.sin(x) for i in range(TERMS))


def model(x):
    return sum(layer(x) for _ in range(16))


def nested_model(x):
    jitted = jax.jit(layer)
    return sum(jitted(x) for _ in range(16))


def first_call(fn: Callable, x) -> float:
    """One first call from cleared caches (the disk as it is), until ready; the collector
    emptied before and paused during it, as ``timeit`` (and jitmagic) time."""
    jax.clear_caches()
    jitted = jax.jit(fn)
    gc.collect()
    gc.disable()
    try:
        t = time.perf_counter()
        jax.block_until_ready(jitted(x))
        return time.perf_counter() - t
    finally:
        gc.enable()


def by_hand(x, pairs: int) -> dict[str, tuple[float, float]]:
    """Median (cold, warm) first call, flat and nested, with the cache set by hand."""
    folder = Path(tempfile.mkdtemp(prefix="bench-cache-"))
    saved = {k: getattr(jax.config, k) for k in (
        "jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
        "jax_persistent_cache_min_entry_size_bytes")}
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    reset_persistent_cache()  # JAX makes its cache object once: for this folder now
    times: dict[str, tuple[list[float], list[float]]] = {"flat": ([], []), "nested": ([], [])}
    try:
        for i in range(pairs):
            order = [("flat", model), ("nested", nested_model)]
            for name, fn in order if i % 2 == 0 else order[::-1]:
                for entry in folder.iterdir():
                    entry.unlink()
                times[name][0].append(first_call(fn, x))
                times[name][1].append(first_call(fn, x))
    finally:
        for k, v in saved.items():
            jax.config.update(k, v)
        reset_persistent_cache()
        shutil.rmtree(folder, ignore_errors=True)
    return {n: (statistics.median(c), statistics.median(w)) for n, (c, w) in times.items()}


def main() -> None:
    global TERMS
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--terms", type=int, default=TERMS)
    a = parser.parse_args()
    TERMS = a.terms
    print(f"Python {platform.python_version()}, jax {jax.__version__}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f}; the README's example, {TERMS} terms x 16 calls, "
          f"-r {a.repeat}, {a.rounds} rounds of --cache then by hand", flush=True)
    x = jnp.ones(128)
    jax.block_until_ready(jax.jit(lambda y: y + 1)(x))  # JAX's own first-use costs
    tool: dict[str, list[float]] = {"flat": [], "nested": []}
    hand: dict[str, list[float]] = {"flat": [], "nested": []}
    costs, compiles = [], []
    for i in range(a.rounds):
        t = time.perf_counter()
        r = jitmagic.compare(model, x, repeat=a.repeat, cache=True, quiet=True)
        total = time.perf_counter() - t
        assert r.second_start is not None
        costs.append((total - r.wall_s) / r.wall_s)  # the second start over the comparison
        compiles.append(r.flat.compile_s)
        by = by_hand(x, a.repeat)
        rows = r.second_start.rows
        for name, row in rows.items():
            tool[name].append(math.nan if row.warm_s is None else row.warm_s / row.cold_s)
            hand[name].append(by[name][1] / by[name][0])
        print(f"round {i + 1}: second start {total - r.wall_s:.2f} s, comparison "
              f"{r.wall_s:.2f} s, load {os.getloadavg()[0]:.2f}", flush=True)
        for n, row in rows.items():
            warm = math.nan if row.warm_s is None else row.warm_s
            print(f"  {n:<7} warm/cold --cache {tool[n][-1]:.2f} ({warm * 1e3:.0f} / "
                  f"{row.cold_s * 1e3:.0f} ms)  by hand {hand[n][-1]:.2f} "
                  f"({by[n][1] * 1e3:.0f} / {by[n][0] * 1e3:.0f} ms)", flush=True)
    print(f"flat cold compile (JAX's event, median of the rounds): "
          f"{statistics.median(compiles):.3f} s")
    for name in tool:
        mine, theirs = statistics.median(tool[name]), statistics.median(hand[name])
        gap = mine / theirs - 1
        print(f"  {name:<7} warm/cold (median of the rounds)  --cache {mine:.2f}  by hand "
              f"{theirs:.2f}  ({gap:+.0%} apart: "
              f"{'agree' if abs(gap) <= AGREE else 'DISAGREE'} within {AGREE:.0%})")
    print(f"cost of --cache: its second start takes {statistics.median(costs):.2f}x the "
          f"comparison's wall time (median of the rounds)")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

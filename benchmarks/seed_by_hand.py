"""The discussion's example timed by hand, as a reference for ``python -m jitmagic demo``
in the same run: alternating cold first calls (``jax.clear_caches()``, a fresh
``jax.jit``), each ending in ``block_until_ready``; medians and their ratio.

    python benchmarks/seed_by_hand.py [PAIRS]
"""

from __future__ import annotations

import statistics
import sys
import time

import jax
import jax.numpy as jnp


def f(x):
    return sum(i * x for i in range(256))


def g(x):
    return sum(f(x) for _ in range(16))


def g_nested(x):
    return sum(jax.jit(f)(x) for _ in range(16))


def main(pairs: int) -> None:
    x = jnp.ones(128)
    seconds: dict[str, list[float]] = {"flat": [], "nested": []}
    for i in range(pairs):
        order = (("flat", g), ("nested", g_nested))
        for name, fn in order if i % 2 == 0 else order[::-1]:
            jax.clear_caches()
            start = time.perf_counter()
            jax.block_until_ready(jax.jit(fn)(x))
            seconds[name].append(time.perf_counter() - start)
    flat, nested = (statistics.median(seconds[k]) for k in ("flat", "nested"))
    print(f"backend {jax.default_backend()}; {pairs} pairs; cold first call "
          f"flat {flat:.2f} s {[round(s, 2) for s in seconds['flat']]}, "
          f"nested {nested:.2f} s {[round(s, 2) for s in seconds['nested']]}: "
          f"{flat / nested:.2f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)

"""What finding the helpers costs beside the plain cold trace it reads them from.

Run: ``python benchmarks/discovery.py``. Prints, side by side, the plain cold
trace (``jax.jit(fn).trace`` from cleared caches), discovery (``discover()``:
that trace plus reading its equations and live objects) and, for reference,
the profiled trace discovery used before (now its fallback), on the
discussion's example and on a small MLP with methods; medians of interleaved
repeats (``python benchmarks/discovery.py 9`` for 9), and the fastest of each.
The target: discovery at most 1.1 times the plain trace. Asserts nothing.
"""

from __future__ import annotations

import statistics
import sys
import time

import jax
import jax.numpy as jnp

from jitmagic.measure.discovery.discover import discover, profiled_discovery

f = lambda x: sum(i * x for i in range(256))  # noqa: E731 (the discussion's example)
g = lambda x: sum(f(x) for _ in range(16))  # noqa: E731


class MLP:
    """A small MLP whose layers are methods, its weights a pytree passed in."""

    def __init__(self, depth: int):
        self.depth = depth

    def layer(self, w, x):
        return jnp.tanh(x @ w) + 0.1 * jnp.sin(x)

    def block(self, w, x):
        return self.layer(w, self.layer(w, x))

    def __call__(self, ws, x):
        for w in ws:
            x = self.block(w, x)
        return jnp.sum(x ** 2)


MODEL = MLP(8)


def plain(fn, args):
    jax.clear_caches()
    jax.jit(fn).trace(*args)
    jax.clear_caches()


def timed(run, fn, args) -> float:
    start = time.perf_counter()
    run(fn, args)
    return time.perf_counter() - start


def compare(label: str, fn, args: tuple, repeats: int) -> None:
    runs = {
        "plain trace": plain,
        "discover()": lambda fn, args: discover(fn, args, {}, {}),
        "profiled (old)": lambda fn, args: profiled_discovery(fn, args, {}, {}),
    }
    plain(fn, args)  # warm the interpreter and JAX's own imports
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(repeats):  # interleaved, so drift hits all alike
        for name, run in runs.items():
            times[name].append(timed(run, fn, args))
    base, low = statistics.median(times["plain trace"]), min(times["plain trace"])
    print(f"{label} ({repeats} interleaved repeats):")
    print(f"  {'':15} {'median':>9}    {'ratio':>5}  {'fastest':>9}    {'ratio':>5}")
    for name, ts in times.items():
        m, least = statistics.median(ts), min(ts)
        print(f"  {name:15} {m * 1e3:9.1f} ms {m / base:5.2f}x  {least * 1e3:9.1f} ms "
              f"{least / low:5.2f}x")
    found = discover(fn, args, {}, {})
    print(f"  helpers found: {', '.join(found.helpers) or 'none'}"
          f" ({found.traces} trace{'s' if found.traces > 1 else ''})")


if __name__ == "__main__":
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    compare("the discussion's example, g(3.14)", g, (3.14,), repeats)
    ws = [jnp.eye(64) * 0.5 for _ in range(MODEL.depth)]
    compare("an MLP with methods, 8 blocks of 2 layers", MODEL, (ws, jnp.ones(64)), repeats)

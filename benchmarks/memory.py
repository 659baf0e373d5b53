"""Peak memory of a measurement, as a multiple of the argument's size.

Run: ``python benchmarks/memory.py``. Prints figures; asserts nothing.

Resident memory (RSS) is sampled by a thread every few milliseconds; the peak
is reported above two levels: before the argument existed (so the argument
itself counts once) and with the argument in memory (what jitmagic adds).
On CPU, JAX frees a deleted buffer asynchronously, so a freed output can
still count for a moment after ``del``. Host RSS says nothing about GPU memory.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable

import jax.numpy as jnp
import psutil

import jitmagic
from jitmagic.measure.parts.orderings import compare_orderings

#: ~200 MB of float32.
BIG = 50_000_000


def layer(x):
    return jnp.tanh(x) * 0.5 + x * 0.25


def model(x):
    return layer(layer(x))


def affine(params, x):
    return jnp.tanh(x * params["w"] + params["b"])


class PeakRSS:
    """The largest RSS seen while active, sampled by a background thread."""

    def __init__(self, every_s: float = 0.002):
        self.every_s, self.peak, self._stop = every_s, 0, threading.Event()
        self._proc = psutil.Process()

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._proc.memory_info().rss)
            time.sleep(self.every_s)

    def __enter__(self) -> PeakRSS:
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._proc.memory_info().rss)


def settled_rss() -> int:
    """RSS after collecting and letting JAX's asynchronous frees finish."""
    gc.collect()
    time.sleep(0.5)
    return psutil.Process().memory_info().rss


def report(label: str, make_args: Callable[[], tuple], run: Callable[..., object],
           batch: int = 1) -> None:
    """Peak RSS of ``run(*make_args())`` per argument byte (per batched byte for --vmap)."""
    before = settled_rss()
    args = make_args()
    arg_bytes = sum(a.nbytes for a in _leaves(args))
    with_args = settled_rss()
    with PeakRSS() as peak:
        start = time.perf_counter()
        run(*args)
        secs = time.perf_counter() - start
    print(f"{label}: argument {arg_bytes / 1e6:.1f} MB, {secs:.1f} s")
    for name, level in (("before the argument", before), ("with the argument", with_args)):
        above = peak.peak - level
        per_batch = f", {above / (batch * arg_bytes):.2f}x the batch" if batch > 1 else ""
        print(f"  peak above the level {name:20} {above / arg_bytes:6.2f}x{per_batch}")


def _leaves(tree: object) -> list:
    import jax

    return jax.tree_util.tree_leaves(tree)


def main() -> None:
    warm = jnp.ones(8)
    jitmagic.compare(model, warm, repeat=1, number=1)  # imports and JAX's own start-up
    compare_orderings(affine, {"w": warm, "b": warm}, warm, batch=2, repeat=1, number=1)
    report("jitmagic.compare(model, x, repeat=1, number=1)",
           lambda: (jnp.ones(BIG, jnp.float32),),
           lambda x: jitmagic.compare(model, x, repeat=1, number=1))
    report("--vmap orderings, batch 64, repeat=1, number=1",
           lambda: ({"w": jnp.ones(250_000), "b": jnp.zeros(250_000)}, jnp.ones(250_000)),
           lambda p, x: compare_orderings(affine, p, x, batch=64, repeat=1, number=1), 64)


if __name__ == "__main__":
    main()

"""What watching costs, and whether its seconds are JAX's own: ``jitmagic.watch`` around
a loop that never recompiles and one that recompiles on every step, against the same loop
unwatched, interleaved (A B B A A B ...) so that drift and order hit both alike; then the
ledger's seconds against a ``jax.monitoring`` listener of one's own, registered beside it.

The watch runs as users get it, live lines included (each recompile said on stderr as it
happens; here stderr is ``os.devnull`` opened for writing, a real write per line, so that
the table stays readable).

Run: ``python benchmarks/watch.py``. Prints figures (wall and CPU time, medians of the
rounds, and the watched/plain ratio side by side); asserts nothing.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp

import jitmagic

ROUNDS = 11


@jax.jit
def step(w, x):
    return jnp.tanh(x @ w) @ w.T * 0.5 + w * 0.5


def steady(n: int = 5000) -> None:
    """``n`` steps of one warmed-up function: nothing compiles."""
    w, x = jnp.eye(64), jnp.ones((64, 64))
    for _ in range(n):
        w = step(w, x)
    jax.block_until_ready(w)


def recompiling(n: int = 60) -> None:
    """``n`` steps, each with a jit made anew: every step compiles."""
    x = jnp.ones(16)
    for i in range(n):
        x = jax.jit(lambda v, i=i: jnp.sin(v) * 0.5 + i)(x)
    jax.block_until_ready(x)


def timed(loop: Callable[[], None], watched: bool) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``loop``, watched or not."""
    wall, cpu = time.perf_counter(), time.process_time()
    if watched:
        with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull), \
                jitmagic.watch():  # live lines on: each recompile written as it happens
            loop()
    else:
        loop()
    return time.perf_counter() - wall, time.process_time() - cpu


def overhead(name: str, loop: Callable[[], None]) -> None:
    loop()  # warm: the function compiled, the first-call paths taken
    plain: list[tuple[float, float]] = []
    watched: list[tuple[float, float]] = []
    for i in range(ROUNDS):  # A B, then B A: neither always runs first
        for watching in ((False, True) if i % 2 == 0 else (True, False)):
            (watched if watching else plain).append(timed(loop, watching))
    for clock, i in (("wall", 0), ("CPU", 1)):
        a = statistics.median(p[i] for p in plain)
        b = statistics.median(w[i] for w in watched)
        print(f"  {name:<34} {clock:>4}: plain {a * 1e3:8.1f} ms, watched {b * 1e3:8.1f} ms,"
              f" ratio {b / a:.3f} (overhead {b / a - 1:+.1%})")


def seconds_against_a_listener() -> None:
    """The ledger's compile seconds against the same events summed by hand."""
    by_hand: list[float] = []

    def listener(event: str, secs: float, **_: object) -> None:
        if event.startswith("/jax/core/compile/") and event.endswith("_duration"):
            by_hand.append(secs)

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        with jitmagic.watch(live=False) as w:  # the seconds alone, no lines
            recompiling(30)
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    ledger = w.ledger
    assert ledger is not None
    ours = ledger.seconds + sum(c.seconds for c in ledger.other_threads)
    theirs = sum(by_hand)
    print(f"  {ledger.count} compiles: the ledger's seconds {ours * 1e3:.1f} ms, a listener's "
          f"{theirs * 1e3:.1f} ms ({abs(ours - theirs) / theirs:.2%} apart)")


def main() -> None:
    print(f"JAX {jax.__version__}, {ROUNDS} interleaved rounds each, medians")
    print("watching a loop:")
    overhead("5,000 steps, never recompiling", steady)
    overhead("60 steps, recompiling every step", recompiling)
    print("its seconds, against jax.monitoring read by hand:")
    seconds_against_a_listener()


if __name__ == "__main__":
    main()

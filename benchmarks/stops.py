"""How soon a Ctrl-C stops a measurement: during a long Python trace, and during a
long steady-state loop (``-n`` large). Both would run for many seconds on.

Run: ``python benchmarks/stops.py``. Prints figures; asserts nothing.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import jax
import jax.numpy as jnp

import jitmagic

PRESSED = [0.0]
TRACE_S = 8.0  # how long the helper's Python loop runs each time it is traced


def press_after(seconds: float) -> None:
    """Send SIGINT to this process after ``seconds``, from a timer thread."""
    def fire() -> None:
        PRESSED[0] = time.perf_counter()
        os.kill(os.getpid(), signal.SIGINT)

    threading.Timer(seconds, fire).start()


def slow_helper(x):
    end = time.perf_counter() + TRACE_S
    while time.perf_counter() < end:  # Python work at trace time, as a big unrolled model has
        pass
    return jnp.sin(x)


def slow_trace(x):
    return slow_helper(x) + 1


def fast(x):
    return jnp.cos(x) * 2


def stop_latency(label: str, fn, after: float, stage: str, **options) -> None:
    """Press Ctrl-C ``after`` seconds into the first ``stage`` (the discovery trace that
    finds the helpers comes before any timed stage, and is not what is measured here)."""
    armed = []

    def arm(p) -> None:
        if p.stage == stage and not armed:
            armed.append(press_after(after))

    result = jitmagic.compare(fn, jnp.ones(4), progress=arm, **options)
    waited = time.perf_counter() - PRESSED[0]
    print(f"  {label:<46} returned {waited:5.2f} s after Ctrl-C  ({result.stopped})")


if __name__ == "__main__":
    jax.numpy.ones(1).block_until_ready()
    print("Ctrl-C sent from a timer thread; seconds from the signal to compare() returning:")
    stop_latency(f"a {TRACE_S:.0f}-second Python loop in a helper's trace", slow_trace, 1.0,
                 "tracing", repeat=1, number=1)
    stop_latency("steady state, -n 3000000", fast, 3.0, "steady state", repeat=1,
                 number=3_000_000)

"""What a 4 MiB captured constant costs the compile, and what measuring it costs.

For two programs that read a 4 MiB float32 array ``BIG`` from a global, one where XLA
can fold it (``x + jnp.sin(BIG) * 2``) and one where it is merely used
(``jnp.tanh(x @ BIG)``), prints side by side in one run:

* the cold first call (``jax.clear_caches()``, then ``jax.jit(f)(x)`` until its result
  is ready) with ``BIG`` captured, against the same code written with ``BIG`` as an
  argument (put on the device first), ``--repeat`` interleaved pairs (5), medians with
  their min–max and JAX's own XLA compile event, judged by the one rule;
* ``jitmagic.compare`` on the captured program (``-r 3``): the comparison's wall time,
  the wall time of the part that measures the constants passed as arguments, and their
  ratio, with the saving the part reports.

    PYTHONPATH=. python benchmarks/constant_arguments.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import jitmagic
from jitmagic.measure.sampling.monitor import COMPILE_EVENT, Monitor
from jitmagic.model.stats.rule import difference
from jitmagic.render.causes.constant_arguments import sentence
from jitmagic.render.verdicts import interval, times

BIG = np.linspace(0.0, 1.0, 1 << 20, dtype=np.float32).reshape(1024, 1024)  # 4 MiB


def folded(x):
    return x + jnp.sin(BIG) * 2


def folded_arg(x, big):
    return x + jnp.sin(big) * 2


def used(x):
    return jnp.tanh(x @ BIG)


def used_arg(x, big):
    return jnp.tanh(x @ big)


PROGRAMS = (("foldable  x + sin(BIG) * 2", folded, folded_arg, jnp.ones((1024, 1024))),
            ("used      tanh(x @ BIG)", used, used_arg, jnp.ones((8, 1024))))


def cold(fn, args, monitor: Monitor) -> tuple[float, float]:
    """(first call, XLA compile event) seconds of one cold first call."""
    jax.clear_caches()
    jitted = jax.jit(fn)
    t0 = time.perf_counter()
    jax.block_until_ready(jitted(*args))
    t1 = time.perf_counter()
    return t1 - t0, monitor.seconds(COMPILE_EVENT, f"jit({fn.__name__})", t0, t1)


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.3f} s [{min(xs):.3f}–{max(xs):.3f}]"


def by_hand(label: str, captured, passed, x, repeat: int) -> None:
    big = jax.device_put(BIG)
    monitor = Monitor()
    runs: dict[str, list[tuple[float, float]]] = {"captured": [], "passed": []}
    with monitor.listening():
        for r in range(repeat):
            pair = [("captured", captured, (x,)), ("passed", passed, (x, big))]
            for name, fn, args in pair if r % 2 == 0 else pair[::-1]:
                runs[name].append(cold(fn, args, monitor))
    first = {k: [a for a, _ in v] for k, v in runs.items()}
    comp = {k: [b for _, b in v] for k, v in runs.items()}
    d = difference(first["captured"], first["passed"])
    print(f"{label}: first call captured {spread(first['captured'])}, passed "
          f"{spread(first['passed'])}; XLA compile captured {spread(comp['captured'])}, "
          f"passed {spread(comp['passed'])}; captured/passed "
          f"{statistics.median(first['captured']) / statistics.median(first['passed']):.2f}x,"
          f" passed {times(d)} {interval(d)}", flush=True)


def part_cost(label: str, fn, x) -> None:
    t0 = time.perf_counter()
    c = jitmagic.compare(fn, x, repeat=3, progress=False)
    total = time.perf_counter() - t0
    record = c.constant_arguments
    if record is None:
        print(f"{label}: the part did not run", flush=True)
        return
    print(f"{label}: jitmagic.compare -r 3 took {total:.1f} s: the comparison {c.wall_s:.1f} s, "
          f"the constants-as-arguments part {record.wall_s:.1f} s "
          f"({record.wall_s / c.wall_s:.2f}x the comparison)", flush=True)
    for v in record.variants.values():
        print(f"{'':>10}{sentence(v)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    a = parser.parse_args()
    print(f"Python {platform.python_version()}, jax {jax.__version__}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f}; {a.repeat} interleaved pairs", flush=True)
    jax.block_until_ready(jax.jit(lambda y: y + 1)(jnp.ones(4)))  # JAX's own first-use costs
    for label, captured, passed, x in PROGRAMS:
        by_hand(label, captured, passed, x, a.repeat)
    for label, captured, _, x in PROGRAMS:
        part_cost(label, captured, x)
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

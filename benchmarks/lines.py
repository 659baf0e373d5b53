"""How long ``jitmagic.lines`` takes against the trace it explains.

For a flat program of about 30,000 and 100,000 jaxpr equations (an unrolled
Python loop), prints side by side: one cold plain trace (``jax.jit(f).trace``
from cleared caches), the whole ``jitmagic.lines`` call, and their ratio; each
the median of ``--repeat`` runs (3), alternating (the ratio is the median of each
run's: a trace and the table next to it share the machine's load). Then, once, the steps a table
takes (trace, lowering, StableHLO text, equation walk, location parse, rows), so
that a slow step shows. ``--hook settrace`` measures the table with the
``sys.settrace`` hook (hits and time on Python 3.11, at its price).

    PYTHONPATH=. python benchmarks/lines.py [--repeat 3] [--hook auto] [30000 100000]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

import jax
import jax.numpy as jnp

from jitmagic.measure.lines.counts import UserCode, count_equations, count_hlo_ops
from jitmagic.measure.lines.tables import build_rows, lines_of

STEPS = 1


def unrolled(x):
    for _ in range(STEPS):
        x = x * 0.5 + jnp.sin(x)
    return x


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def cold_trace(x):
    jax.clear_caches()
    return timed(lambda: jax.jit(unrolled).trace(x))


def steps(x) -> str:
    """The steps of one table, timed once."""
    traced, trace_s = cold_trace(x)
    lowered, lower_s = timed(traced.lower)
    text, text_s = timed(lambda: lowered.as_text(debug_info=True))
    user = UserCode(unrolled.__code__)
    counts, walk_s = timed(lambda: count_equations(traced.jaxpr, user))
    hlo, parse_s = timed(lambda: count_hlo_ops(text, user))
    _, rows_s = timed(lambda: build_rows(user, counts, hlo, None))
    return (f"steps: trace {trace_s:.2f} s, lower {lower_s:.2f} s, hlo text {text_s:.2f} s, "
            f"walk {walk_s:.2f} s, parse {parse_s:.2f} s, rows {rows_s:.3f} s")


def run(eqns: int, repeat: int, hook: str) -> None:
    global STEPS
    STEPS = eqns // 3  # mul, sin, add per step
    x = jnp.ones(4)
    traces, tables = [], []
    for _ in range(repeat):
        traces.append(cold_trace(x)[1])
        tables.append(timed(lambda: lines_of(unrolled, (x,), {}, hook=hook))[1])
    trace_s, table_s = statistics.median(traces), statistics.median(tables)
    ratios = [b / a for a, b in zip(traces, tables, strict=True)]
    print(f"{STEPS * 3:>8,} eqns  cold trace {trace_s:6.2f} s  jitmagic.lines {table_s:6.2f} s  "
          f"ratio {statistics.median(ratios):.2f}x (median of each run's; of the medians "
          f"{table_s / trace_s:.2f}x)\n{'':>15}runs: trace {', '.join(f'{t:.2f}' for t in traces)};"
          f" lines {', '.join(f'{t:.2f}' for t in tables)}; load {os.getloadavg()[0]:.2f}",
          flush=True)
    print(f"{'':>15}{steps(x)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("eqns", nargs="*", type=int, default=[30_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--hook", default="auto")
    a = parser.parse_args()
    print(f"Python {platform.python_version()}, jax {jax.__version__}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f}, hook {a.hook}; medians of {a.repeat}", flush=True)
    jax.jit(lambda y: y + 1).trace(jnp.ones(4)).lower()  # JAX's own first-use costs
    for n in a.eqns:
        run(n, a.repeat, a.hook)
    print(f"load after: {os.getloadavg()[0]:.2f}", file=sys.stdout)


if __name__ == "__main__":
    main()

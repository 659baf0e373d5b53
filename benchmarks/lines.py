"""How long ``jitmagic.lines`` takes against the trace it explains.

For a flat program of about 10,000 and 100,000 jaxpr equations (an unrolled
Python loop), prints the cold trace time, each step of the per-line table
(hooked trace, counted trace + lowering, equation walk, StableHLO location
parse, rows), and two ratios to the plain trace: the whole table (the sum of
the steps ``line_table`` takes) and the table's own work (walk + StableHLO text
+ parse + rows) without the JAX stages it reruns.

    PYTHONPATH=. python benchmarks/lines.py [10000 100000]
"""

from __future__ import annotations

import sys
import time

import jax
import jax.numpy as jnp

from jitmagic.measure.line_counts import UserCode, count_equations
from jitmagic.measure.line_hook import LineHook
from jitmagic.measure.lines import build_rows
from jitmagic.measure.mlir_locations import count_hlo_ops

STEPS = 1


def unrolled(x):
    for _ in range(STEPS):
        x = x * 0.5 + jnp.sin(x)
    return x


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def run(eqns: int) -> None:
    global STEPS
    STEPS = eqns // 3  # mul, sin, add per step
    x = jnp.ones(4)
    jitted = jax.jit(unrolled)
    jax.clear_caches()
    traced, trace_s = timed(lambda: jitted.trace(x))
    lowered, lower_s = timed(traced.lower)
    user = UserCode(unrolled.__code__)
    hook = LineHook(user)
    jax.clear_caches()
    _, hooked_s = timed(lambda: hook.run(lambda: jitted.trace(x)))
    (own, incl), walk_s = timed(lambda: count_equations(traced.jaxpr.jaxpr, user))
    text, text_s = timed(lambda: lowered.as_text(debug_info=True))
    hlo, parse_s = timed(lambda: count_hlo_ops(text, user))
    _, rows_s = timed(lambda: build_rows(user, own, incl, hlo, hook))
    own_work = walk_s + text_s + parse_s + rows_s
    table_s = hooked_s + trace_s + lower_s + own_work  # the steps `line_table` takes
    print(f"{sum(own.values()):>7,} eqns  trace {trace_s:.2f} s  lower {lower_s:.2f} s  "
          f"hooked trace {hooked_s:.2f} s  walk {walk_s:.2f} s  hlo text {text_s:.2f} s  "
          f"parse {parse_s:.2f} s  rows {rows_s:.3f} s")
    print(f"{'':>13}whole table {table_s:.2f} s = {table_s / trace_s:.2f}x the trace;  "
          f"table's own work {own_work:.2f} s = {own_work / trace_s:.2f}x the trace")


if __name__ == "__main__":
    for n in (int(a) for a in sys.argv[1:] or ("10000", "100000")):
        run(n)

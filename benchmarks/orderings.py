"""jit(vmap(f)) against vmap(jit(f)) on the issue's example, all four orderings in one run.

    .venv/bin/python benchmarks/orderings.py [--repeat 5] [--batch 64]

``f`` runs 8 steps of ``jnp.tanh(x @ x.T) + x`` on a 32×32 array; the call's
argument is one example, stacked ``--batch`` times. Orderings are interleaved
per repeat; medians and min–max of the raw samples are printed.
"""

from __future__ import annotations

import argparse
import sys

import jax
import jax.numpy as jnp

from jitmagic.measure.parts.orderings import compare_orderings
from jitmagic.model.orderings import ORDERINGS
from jitmagic.model.stats.units import fmt_s
from jitmagic.render.orderings import text_table


def f(x):
    for _ in range(8):
        x = jnp.tanh(x @ x.T) + x
    return x.sum()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args(argv)
    o = compare_orderings(f, jnp.ones((32, 32)), batch=args.batch, repeat=args.repeat)
    print(f"JAX {jax.__version__}, {jax.default_backend()}, batch {o.batch}, "
          f"{args.repeat} repeats\n")
    print(f"{'ordering':<20}{'first_call_s':>14}{'execute_s':>12}   execute_s min–max")
    for name in ORDERINGS:
        row, xs = o[name], o[name].samples["execute_s"]
        print(f"{name:<20}{fmt_s(row.first_call_s):>14}{fmt_s(row.execute_s):>12}   "
              f"{fmt_s(min(xs))}–{fmt_s(max(xs))}")
    print()
    print(text_table(o))
    slower = o["vmap(jit(f))"].execute_s > o["jit(vmap(f))"].execute_s
    print(f"\nvmap(jit(f)) execute_s above jit(vmap(f))'s: {slower}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

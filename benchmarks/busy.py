"""Verdicts on a busy machine: the same comparisons, quiet and beside spinning processes.

    .venv/bin/python benchmarks/busy.py [--spinners 3] [--times 10]

For each workload it runs ``--times`` comparisons at the default options (``-r auto``)
and tallies the verdicts, the clock that decided them and how long the threads waited
for a CPU. The spinners (``python -c "while True: pass"``) are started by this script
and ended by it, quiet rounds before and after.

* ``discussion``: ``g`` calls ``f`` 16 times (8 sin/cos steps each) on 1000 floats;
  nesting ``f`` makes the first call about 1.3× faster on a quiet machine: it should be
  called faster every time.
* ``same``: the discussion's flat program against itself, through the same sampler
  (flat, flat, flat, flat, ...): nesting that changes nothing. It should never be
  called faster or slower.
* ``once``: ``g`` calls ``f`` once. Nesting it adds one jit call, which JAX traces and
  lowers and XLA inlines: measured here 1.07–1.28× slower on a quiet machine (9 runs a
  side), so "slower" is a true answer and "faster" a wrong one.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import jax
import jax.numpy as jnp

import jitmagic
from jitmagic.measure.pipeline import measure_prepared, variants_of
from jitmagic.options import Options


def f(x):
    for _ in range(8):
        x = jnp.sin(x) + jnp.cos(x)
    return x


def discussion(x):
    return sum(f(x) for _ in range(16))


def once(x):
    return f(x) * 2.0


def compared(fn):
    return lambda x: jitmagic.compare(fn, x, progress=False)


def same_program(x):
    """The flat variant measured as both rows: a comparison of a program with itself."""
    prepared = variants_of(discussion, (x,), {})
    flat = prepared["flat"]
    twin = dataclasses.replace(flat.variant, name="nested", planned=("f",))
    prepared["nested"] = dataclasses.replace(flat, variant=twin)
    return measure_prepared(prepared, Options())


WORKLOADS = {"discussion": compared(discussion), "same": same_program, "once": compared(once)}


@contextlib.contextmanager
def spinning(n: int) -> Iterator[None]:
    """``n`` processes that spin on a core each, ended on exit."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(1.0 if n else 0.0)
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def tally(workload, times: int) -> None:
    kinds: collections.Counter[str] = collections.Counter()
    clocks: collections.Counter[str] = collections.Counter()
    shares, walls = [], []
    for _ in range(times):
        t = time.perf_counter()
        c = workload(jnp.ones(1000))
        walls.append(time.perf_counter() - t)
        d = c.difference("first_call_s")  # the rule on the samples, the report's clock
        kinds[d.kind] += 1
        clocks[c.clock_of("first_call_s")] += 1
        shares.append(c.waited_share or 0.0)
        print(f"    {d.kind}, {d.ratio:.2f}× ({d.low:.2f}×–{d.high:.2f}×), {d.runs} runs: "
              f"{c.verdict.headline}")
    print(f"  verdicts {dict(kinds)}; decided on {dict(clocks)}; waited "
          f"{min(shares):.0%}–{max(shares):.0%} of the time ready to run; "
          f"{sum(walls) / len(walls):.1f} s a comparison; load {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spinners", type=int, default=3)
    parser.add_argument("--times", type=int, default=10)
    parser.add_argument("--quiet", action="store_true", help="also run without spinners")
    parser.add_argument("--only", choices=sorted(WORKLOADS), action="append")
    args = parser.parse_args()
    print(f"jax {jax.__version__}, {os.cpu_count()} cores")
    rounds = ([0] if args.quiet else []) + [args.spinners]
    for spinners in rounds:
        with spinning(spinners):
            for name in args.only or WORKLOADS:
                print(f"{name}, {spinners} spinning processes:")
                tally(WORKLOADS[name], args.times)


if __name__ == "__main__":
    main()

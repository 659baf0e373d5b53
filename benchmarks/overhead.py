"""How much of the magic's time is measured work, and how close its steady-state
timing comes to a hand-written loop.

Run: ``python benchmarks/overhead.py``. Prints figures; asserts nothing.
"""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp
from cells import README_CELL
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

import jitmagic


def magic_overhead() -> None:
    ip = start_ipython()
    ip.run_line_magic("load_ext", "jitmagic")
    start = time.perf_counter()
    with capture_output():
        r = ip.run_cell_magic("jitcompare", "-o", README_CELL)
    total = time.perf_counter() - start
    measured = r.measured_s()
    print("magic on the README example (-r 3, auto-ranged execute):")
    print(f"  wall, whole magic incl. display  {total:7.2f} s")
    print(f"  wall, up to the result (wall_s)  {r.wall_s:7.2f} s")
    print(f"  sum of measured intervals        {measured:7.2f} s"
          f"  = {measured / total:.0%} of the whole, {measured / r.wall_s:.0%} of wall_s")
    print(f"  nested trace is {r.ratio('trace_s'):.1f}x below flat; jaxpr eqns "
          f"{r.flat.jaxpr_eqns} flat vs {r.nested.jaxpr_eqns} nested")


def progress_share(rounds: int = 3) -> None:
    """The magic with progress (drawn on stderr, here captured) and with ``--quiet``,
    interleaved: the measured share of wall time, side by side."""
    ip = start_ipython()
    ip.run_line_magic("load_ext", "jitmagic")
    runs: dict[str, list] = {"progress": [], "--quiet": []}
    for _ in range(rounds):
        for label, line in (("progress", "-o -r 3"), ("--quiet", "-o -r 3 --quiet")):
            with capture_output():
                runs[label].append(ip.run_cell_magic("jitcompare", line, README_CELL))
    print(f"progress on and off (README example, -r 3, {rounds} interleaved rounds, medians):")
    print(f"  {'':10} {'wall_s':>8} {'measured':>9} {'share':>6}")
    for label, results in runs.items():
        wall = statistics.median(r.wall_s for r in results)
        measured = statistics.median(r.measured_s() for r in results)
        share = statistics.median(r.measured_s() / r.wall_s for r in results)
        print(f"  {label:10} {wall:7.2f}s {measured:8.2f}s {share:6.0%}")


def tiny(x):
    return x + 1.0


def steady_vs_hand_loop(rounds: int = 5, loops: int = 20_000) -> None:
    x = jnp.ones(8)
    f = jax.jit(tiny)
    f(x).block_until_ready()

    def hand() -> float:
        t = time.perf_counter()
        for _ in range(loops):
            f(x).block_until_ready()
        return (time.perf_counter() - t) / loops

    def tool() -> float:
        return jitmagic.compare(tiny, x, repeat=1, number=loops).flat.execute_s

    hands, tools = [], []
    for _ in range(rounds):  # interleaved, so drift hits both
        hands.append(hand())
        tools.append(tool())
    h, t = statistics.median(hands), statistics.median(tools)
    print(f"steady state of a tiny jitted function ({rounds} interleaved rounds, {loops} calls):")
    print(f"  hand-written block_until_ready loop  {h * 1e6:6.2f} µs/call")
    print(f"  jitmagic execute_s                   {t * 1e6:6.2f} µs/call  ({t / h - 1:+.0%})")


if __name__ == "__main__":
    magic_overhead()
    progress_share()
    steady_vs_hand_loop()

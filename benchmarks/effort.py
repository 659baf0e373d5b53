"""What ``--effort`` measures at ``xla_backend_optimization_level=0`` against the same by
hand, and what the effort measurement costs beside one comparison.

On the issue's example (an 8-op helper with a 64×64 matmul, used 16 times, ``--uses``), prints side
by side, in one process: the compile ratio (default / level 0, median XLA compiles) and
the per-call ratio (default / level 0, median steady calls) as
:func:`jitmagic.measure.parts.effort.measure_effort` measures them (JAX's compile event inside
cold first calls; the steady state), against a hand measurement of the same (one
lowering compiled with and without the option, interleaved, ``jax.clear_caches()``
before each; calls timed with ``timeit``, each ending in ``block_until_ready``), and
whether they agree within 15%; each on the wall clock and on the process's CPU time.
Then the cost: the effort measurement's wall seconds over one comparison's (flat against
nested, ``--repeat``), in the same run, the effort part taking the rounds ``--effort``
takes after that comparison (goal: at most 1.5×).

    PYTHONPATH=. python benchmarks/effort.py [--repeat 5|auto] [--hand 7] [--uses 16]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import time
import timeit

import jax
import jax.numpy as jnp

from jitmagic.measure.parts.effort import measure_effort
from jitmagic.measure.parts.run import part_rounds
from jitmagic.measure.pipeline import run_comparison, variants_of
from jitmagic.model.causes.effort import Setting
from jitmagic.options import Options

AGREE = 0.15
USES = 16
LEVEL0 = Setting("xla_backend_optimization_level=0", {"xla_backend_optimization_level": 0})


def helper(x, w):
    y = x @ w
    for _ in range(7):  # 8 ops with the matmul
        y = jnp.tanh(y) * 0.5 + jnp.sin(y)
    return y


def program(x, w):
    for _ in range(USES):
        x = helper(x, w)
    return x


def hand(x, w, compiles: int) -> dict[str, tuple[float, float]]:
    """By hand: (wall, CPU) medians of interleaved cold compiles of one lowering with and
    without the option, and of a steady call of each."""
    got: dict[str, list[tuple[float, float]]] = {"default": [], "level0": []}
    for i in range(compiles):
        for name in (["default", "level0"] if i % 2 == 0 else ["level0", "default"]):
            jax.clear_caches()
            lowered = jax.jit(program).lower(x, w)
            opts = LEVEL0.options if name == "level0" else None
            gc.collect()
            gc.disable()
            t0, c0 = time.perf_counter(), time.process_time()
            lowered.compile(compiler_options=opts)
            got[name].append((time.perf_counter() - t0, time.process_time() - c0))
            gc.enable()
    out = {f"compile {n}": _medians(v) for n, v in got.items()}
    for name, opts in (("default", None), ("level0", LEVEL0.options)):
        f = jax.jit(program, compiler_options=opts)
        f(x, w).block_until_ready()
        t = timeit.Timer(lambda f=f: f(x, w).block_until_ready())
        loops = t.autorange()[0]
        runs = []
        for _ in range(5):
            c0 = time.process_time()
            wall = t.timeit(loops) / loops
            runs.append((wall, (time.process_time() - c0) / loops))
        out[f"call {name}"] = _medians(runs)
    return out


def _medians(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    return (statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs))


def tool(e) -> dict[str, tuple[float, float]]:
    """The record's medians, (wall, CPU), as the tool measured them."""
    row = e[LEVEL0.name]
    out = {}
    for what, key in (("compile", "compile_s"), ("call", "execute_s")):
        for name, samples in (("default", e.default), ("level0", row.samples)):
            out[f"{what} {name}"] = (statistics.median(samples[key]),
                                     statistics.median(samples[key[:-2] + "_cpu_s"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", default="5", help="the comparison's -r (a count or auto)")
    ap.add_argument("--hand", type=int, default=7)
    ap.add_argument("--uses", type=int, default=16, help="uses of the helper")
    args = ap.parse_args()
    global USES
    USES = args.uses
    x, w = jnp.ones((64, 64)), jnp.full((64, 64), 0.01)
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, JAX {jax.__version__}, "
          f"{jax.default_backend()}; load {os.getloadavg()[0]:.2f}")
    prepared = variants_of(program, (x, w), {})
    t0, c0 = time.perf_counter(), time.process_time()
    options = Options(repeat=args.repeat)
    result = run_comparison("program", prepared, options)
    comparison_s, comparison_cpu = time.perf_counter() - t0, time.process_time() - c0
    rounds = part_rounds(result, options)  # as --effort takes them after this comparison
    t0, c0 = time.perf_counter(), time.process_time()
    e = measure_effort(prepared["flat"], rounds=rounds)
    effort_s, effort_cpu = time.perf_counter() - t0, time.process_time() - c0
    by_tool, by_hand = tool(e), hand(x, w, args.hand)
    print(f"{'':24}{'tool':>10}{'by hand':>10}  within 15%")
    for what in ("compile", "call"):
        for i, clock in enumerate(("wall", "CPU")):
            r_tool = by_tool[f"{what} default"][i] / by_tool[f"{what} level0"][i]
            r_hand = by_hand[f"{what} default"][i] / by_hand[f"{what} level0"][i]
            agree = abs(r_tool / r_hand - 1) <= AGREE
            print(f"{what + ' ratio, ' + clock:24}{r_tool:>9.2f}x{r_hand:>9.2f}x  "
                  f"{'yes' if agree else 'NO'}")
    for k, (wall, cpu) in by_tool.items():
        hw, hc = by_hand[k]
        print(f"  {k:16} tool {wall * 1e3:8.2f} ms wall {cpu * 1e3:8.2f} ms CPU | "
              f"hand {hw * 1e3:8.2f} ms wall {hc * 1e3:8.2f} ms CPU")
    rows = 1 + len(e.rows)
    pairs = len(result.flat.samples["first_call_s"])
    taken = [len(e.default["compile_s"]),
             *(len(r.samples.get("compile_s", ())) for r in e.rows.values())]
    print(f"cold runs per row (default first): {taken}, of at most {rounds}")
    print(f"cost: the effort measurement ({rows} rows, up to {rounds} rounds) took "
          f"{effort_s:.1f} s, one comparison (-r {args.repeat}: {pairs} pairs) "
          f"{comparison_s:.1f} s: "
          f"{effort_s / comparison_s:.2f}x (goal: at most 1.5x); wall time")
    print(f"cost in the process's CPU time: {effort_cpu:.1f} s against {comparison_cpu:.1f} s: "
          f"{effort_cpu / comparison_cpu:.2f}x")
    print(f"load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

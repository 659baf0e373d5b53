"""Does CPU time move with the load? One program's cold first call beside 0, 2 and 4
spinning processes, side by side in one run.

    .venv/bin/python benchmarks/cpu_across_loads.py [--rounds 5] [--loads 0 2 4]

jitmagic judges a busy machine's runs on the process's CPU time (``time.process_time``,
every thread), and its pytest gate compares a report with a baseline that may have been
measured under another load. That is only fair if the same code costs the same CPU
seconds at any load. Each round here measures one cold first call per load, in turn
(``jax.clear_caches()``, then ``jax.block_until_ready(jax.jit(g)(x))``), so drift in
other people's work hits every load alike; the spinners (``python -c "while True:
pass"``) are started before each call and killed after it, by pid, always.

Per load it prints the wall and CPU medians, the threads' wait for a CPU (the share
jitmagic's ``waited_share`` reads), and, from ``/proc/self/task/*/schedstat``, the CPU
seconds each kind of thread took (by its name: the Python thread traces and lowers,
XLA's pool compiles); then the CPU ratios between loads with the interval of
jitmagic's one rule (``jitmagic.model.stats.rule.difference``).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import gc
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import jax
import jax.numpy as jnp

from jitmagic.model.stats.rule import difference

TASKS = Path("/proc/self/task")


def f(x):
    for _ in range(8):
        x = jnp.sin(x) + jnp.cos(x)
    return x


def g(x):
    """The discussion's example: 16 calls of ``f`` (about 0.15 s cold here, quiet): XLA
    compiles it on the calling thread."""
    return sum(f(x) for _ in range(16))


def products(x):
    """30 matrix products of 256×256 floats: their execution runs on XLA's thread pool
    (``tf_XLAEigen``), whose threads may spin while they wait for work."""
    return sum(jnp.tanh(x @ (x * i).T).sum(0) for i in range(30))


#: The programs, each with its argument.
PROGRAMS = {"g": (g, lambda: jnp.ones(1000)), "products": (products,
                                                           lambda: jnp.ones((256, 256)))}


@contextlib.contextmanager
def spinning(n: int) -> Iterator[None]:
    """``n`` processes spinning a core each, killed by pid on exit (whatever happens)."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs += [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                  for _ in range(n)]
        time.sleep(0.5 if n else 0.0)  # past their start-up, spinning
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def threads() -> dict[str, tuple[str, float, float]]:
    """Per live thread (by tid): its name, CPU and wait seconds so far (empty where
    ``/proc/self/task`` is missing)."""
    out = {}
    with contextlib.suppress(OSError):
        for task in TASKS.iterdir():
            with contextlib.suppress(OSError, IndexError, ValueError):
                ran, waited = (task / "schedstat").read_text().split()[:2]
                name = (task / "comm").read_text().strip()
                out[task.name] = (name, int(ran) / 1e9, int(waited) / 1e9)
    return out


def by_name(before: dict, after: dict) -> tuple[dict[str, float], float]:
    """CPU seconds per thread name over the interval (a thread new since ``before``
    counts from 0), and the wait of all of them together."""
    cpu: dict[str, float] = collections.defaultdict(float)
    wait = 0.0
    for tid, (name, ran, waited) in after.items():
        _, ran0, waited0 = before.get(tid, (name, 0.0, 0.0))
        cpu[_kind(name)] += ran - ran0
        wait += waited - waited0
    return dict(cpu), wait


def _kind(name: str) -> str:
    """A thread name without its number (``tf_XLAEigen3`` → ``tf_XLAEigen``)."""
    return name.rstrip("0123456789-_") or name


def cold_call(fn, x) -> dict:
    """One cold first call of ``fn``: wall, process CPU, per-thread CPU and the wait."""
    jax.clear_caches()
    gc.collect()
    gc.disable()
    try:
        t0, c0, th0 = time.perf_counter(), time.process_time(), threads()
        jax.block_until_ready(jax.jit(fn)(x))
        wall, cpu, th1 = time.perf_counter() - t0, time.process_time() - c0, threads()
    finally:
        gc.enable()
    per_thread, wait = by_name(th0, th1)
    return {"wall": wall, "cpu": cpu, "threads": per_thread, "wait": wait}


def report(load: int, runs: list[dict]) -> None:
    """A load's medians, its wait and its threads' CPU time."""
    wall = statistics.median(r["wall"] for r in runs)
    cpu = statistics.median(r["cpu"] for r in runs)
    waited = sum(r["wait"] for r in runs) / sum(r["wait"] + r["cpu"] for r in runs)
    print(f"{load} spinners: wall {wall * 1e3:.0f} ms, CPU {cpu * 1e3:.0f} ms "
          f"(CPU/wall {cpu / wall:.2f}); waited {waited:.0%} of the time ready to run; "
          f"CPU max/min {max(r['cpu'] for r in runs) / min(r['cpu'] for r in runs):.2f}")
    names = sorted({n for r in runs for n in r["threads"]},
                   key=lambda n: -statistics.median(r["threads"].get(n, 0.0) for r in runs))
    for n in names:
        per = statistics.median(r["threads"].get(n, 0.0) for r in runs)
        if per >= 0.001:
            print(f"    thread {n!r}: CPU {per * 1e3:.0f} ms (median)")


def ratios(by_load: dict[int, list[dict]], key: str) -> None:
    """Every pair of loads, the heavier over the lighter, by the one rule."""
    loads = sorted(by_load)
    for a in loads:
        for b in loads:
            if b <= a:
                continue
            d = difference([r[key] for r in by_load[a]], [r[key] for r in by_load[b]])
            # the rule's ratio is before/after: turn it round to read as b over a
            print(f"  {key} at {b} spinners / at {a}: {1 / d.ratio:.2f}× "
                  f"({1 / d.high:.2f}×–{1 / d.low:.2f}×): {d.kind} at {b}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--loads", type=int, nargs="+", default=[0, 2, 4])
    args = parser.parse_args()
    print(f"jax {jax.__version__}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
          f"{args.rounds} rounds of {args.loads} spinners in turn")
    inputs = {name: (fn, make()) for name, (fn, make) in PROGRAMS.items()}
    for fn, x in inputs.values():
        cold_call(fn, x)  # JAX's own start-up, not measured
    runs: dict[str, dict[int, list[dict]]] = {p: {n: [] for n in args.loads} for p in inputs}
    for i in range(args.rounds):
        for n in args.loads:
            with spinning(n):
                for name in sorted(inputs, reverse=bool(i % 2)):  # A B, then B A
                    runs[name][n].append(cold_call(*inputs[name]))
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    for name, by_load in runs.items():
        print(f"\n{name}:")
        for n in args.loads:
            report(n, by_load[n])
        print("  ratios (the one rule's interval; 'slower': more seconds at the heavier load):")
        ratios(by_load, "cpu")
        ratios(by_load, "wall")


if __name__ == "__main__":
    main()

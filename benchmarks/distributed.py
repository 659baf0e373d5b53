"""The cost of lockstep: the same program measured in one process and in two (``--processes 2``).

Each round runs ``python -m jitmagic FILE -r 3 -q --save`` once in one process and once
under the launcher with two processes, alternately, on the same file; the figures are
medians over the rounds, side by side, with their ratio. The comparison's own
``wall_s`` (from the command's start to the result) less ``measured_s`` (the timed
intervals) is the overhead: discovery, structure counts and, with two processes, the
barriers, the shared steady-state calibration and the gathering of the timings. Then the
cost of one exchange through the coordination service (the barrier before each cold
run is one), timed in two processes.

Run: ``python benchmarks/distributed.py [ROUNDS]``. Prints figures; asserts nothing.
On a machine with fewer than four cores the two processes share them (and their compiles
slow each other): the first-call figures then carry that, the overhead less so.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROGRAM = """\
import jax
import jax.numpy as jnp

def layer(x, w):
    return jnp.tanh(x @ w)

def model(x, w):
    for _ in range(6):
        x = layer(x, w)
    return jnp.sum(x)

x = jnp.ones((64, 64))
w = jnp.eye(64) * 0.5
model(x, w)
"""

EXCHANGES = """\
import sys, time, json
index, port, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
import jax
jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=2,
                           process_id=index)
from jitmagic.measure import lockstep
step = lockstep.current()
times = []
for i in range(n):
    t0 = time.perf_counter()
    step.gather("an exchange", i)
    times.append(time.perf_counter() - t0)
if index == 0:
    print(json.dumps(times))
"""


def run(file: Path, processes: int, save: Path) -> tuple[float, dict]:
    """(the command's wall seconds, its saved report)."""
    extra = ["--processes", str(processes)] if processes > 1 else []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "jitmagic", *extra, str(file), "-r", "3", "-q",
                    "--save", str(save)], check=True, env=env, capture_output=True)
    return time.perf_counter() - start, json.loads(save.read_text())


def figures(wall: float, report: dict) -> dict[str, float]:
    from jitmagic.model.comparison import Comparison

    c = Comparison.from_dict(report)
    measured = c.measured_s()
    return {"command wall (s)": wall, "comparison wall_s (s)": c.wall_s,
            "timed intervals (s)": measured, "overhead: wall_s - timed (s)": c.wall_s - measured,
            "flat first call, median (ms)": 1e3 * c.flat.first_call_s,
            "flat XLA compile, median (ms)": 1e3 * c.flat.compile_s,
            "flat execute per call (µs)": 1e6 * c.flat.execute_s}


def side_by_side(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / "program.py"
        file.write_text(PROGRAM)
        got: dict[int, list[dict[str, float]]] = {1: [], 2: []}
        for _ in range(rounds):
            for processes in (1, 2):
                got[processes].append(figures(*run(file, processes, Path(tmp) / "r.json")))
    print(f"the same program, -r 3, auto-ranged steady state; medians of {rounds} rounds "
          f"({os.cpu_count()} cores)")
    print(f"  {'':32} {'1 process':>10} {'2 processes':>12} {'ratio':>7}")
    for key in got[1][0]:
        one = statistics.median(r[key] for r in got[1])
        two = statistics.median(r[key] for r in got[2])
        print(f"  {key:32} {one:10.3f} {two:12.3f} {two / one:6.2f}×")


def exchange_cost(n: int = 300) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "exchanges.py"
        script.write_text(textwrap.dedent(EXCHANGES))
        from jitmagic.frontends.launcher import free_port

        port = str(free_port())
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        procs = [subprocess.Popen([sys.executable, str(script), str(i), port, str(n)], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                 for i in range(2)]
        out = [p.communicate(timeout=120)[0] for p in procs][0]
    times = json.loads(out.strip().splitlines()[-1])[10:]  # the first few warm the channel
    print(f"one exchange through the coordination service, 2 processes ({len(times)} timed): "
          f"median {1e3 * statistics.median(times):.2f} ms, "
          f"90th percentile {1e3 * statistics.quantiles(times, n=10)[-1]:.2f} ms")


if __name__ == "__main__":
    side_by_side(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
    exchange_cost()

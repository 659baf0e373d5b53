"""The pytest gate on a busy machine: does a doubled helper fail it, an unchanged one pass?

    .venv/bin/python benchmarks/gate.py [--spinners 3] [--times 10] [--slower 1.3] [--larger 1.3]

A temporary project holds one test that measures ``model`` (which calls ``layer`` 8
times) with the ``jitcompare`` fixture at its default options. Its baseline is saved on
a quiet machine (``--jitmagic-save``); then, beside ``--spinners`` spinning processes,
``pytest --jitmagic-compare`` runs ``--times`` times on the same code and ``--times``
times with ``layer`` made twice as big, both gates on
(``--jitmagic-fail-on-slower=RATIO --jitmagic-fail-on-larger=RATIO``). Each run is
tallied by pytest's exit status and by which gate failed it.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from busy import spinning  # noqa: E402 (a sibling script)

MODEL = '''\
import jax.numpy as jnp


def layer(x):
    for _ in range({steps}):
        x = jnp.sin(x) * 0.5 + jnp.cos(x)
    return x


def model(x):
    for _ in range(8):
        x = layer(x)
    return x


def test_model(jitcompare):
    jitcompare(model, jnp.ones(256))
'''


def write(project: Path, steps: int) -> None:
    (project / "test_model.py").write_text(MODEL.format(steps=steps))


def pytest(project: Path, *options: str) -> tuple[int, str]:
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          *options, "test_model.py"], cwd=project, capture_output=True,
                         text=True, check=False)
    return run.returncode, run.stdout + run.stderr


def tally(project: Path, steps: int, times: int, gates: list[str]) -> None:
    write(project, steps)
    outcomes: collections.Counter[str] = collections.Counter()
    seconds = []
    for _ in range(times):
        t = time.perf_counter()
        status, out = pytest(project, f"--jitmagic-compare={project / 'base'}", *gates)
        seconds.append(time.perf_counter() - t)
        why = [g for g in ("regression:", "larger:") if g in out]
        outcomes[f"status {status}" + (f" ({' '.join(why)})" if why else "")] += 1
        last = out.strip().splitlines()[-1]
        print(f"    status {status}: {last}")
    print(f"  {dict(outcomes)}; {sum(seconds) / len(seconds):.1f} s a run; "
          f"load {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spinners", type=int, default=3)
    parser.add_argument("--times", type=int, default=10)
    parser.add_argument("--slower", default="1.3")
    parser.add_argument("--larger", default="1.3")
    args = parser.parse_args()
    gates = [f"--jitmagic-fail-on-slower={args.slower}",
             f"--jitmagic-fail-on-larger={args.larger}"]
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        write(project, 4)
        status, out = pytest(project, f"--jitmagic-save={project / 'base'}")
        assert status == 0, out
        print(f"baseline saved on a quiet machine (load {os.getloadavg()[0]:.1f})")
        with spinning(args.spinners):
            for label, steps in (("unchanged", 4), ("layer twice as big", 8)):
                print(f"{label}, {args.spinners} spinning processes, {' '.join(gates)}:")
                tally(project, steps, args.times, gates)


if __name__ == "__main__":
    main()

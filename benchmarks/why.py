"""What each part of "why is my compile slow" costs, against one comparison, side by side.

For one model (a helper in a Python loop reading a captured 4 MiB table, so that the
big-constants part runs by itself), prints per round, in one process: the whole call of
a plain ``jitmagic.compare`` (``-r 3``), and of the same with ``cache=True`` and with
``xla=True``, each timed around the call; the comparison's own wall time (``wall_s``,
the flat and nested cold runs) and the constants part's (``constant_arguments.wall_s``);
then each part's cost as a ratio to that comparison: the constants part's wall time,
and ``--cache``'s and ``--xla``'s as the call with the part less the plain call. The
three calls of a round alternate their order from round to round, so that a shared
machine's drift hits all of them; the ratios are the medians of the rounds'.

    PYTHONPATH=. python benchmarks/why.py [--rounds 3] [--repeat 3]
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
import numpy as np

import jitmagic

TABLE = np.linspace(0, 1, 1024 * 1024, dtype=np.float32).reshape(1024, 1024)  # 4 MiB


def layer(x):
    return jnp.tanh(x * 1.1 + 0.1) * 0.9 + jnp.sin(x) * 0.1


def model(x):
    x = x @ (jnp.sin(TABLE) * 2.0)
    for _ in range(12):
        x = layer(x)
    return x.sum()


RUNS = {"plain": {}, "cache": {"cache": True}, "xla": {"xla": True}}


def one_round(order: list[str], x, repeat: int) -> dict[str, tuple[float, jitmagic.Comparison]]:
    """Each call of the round: (its seconds, timed around it; its result)."""
    out = {}
    for name in order:
        start = time.perf_counter()
        result = jitmagic.compare(model, x, repeat=repeat, number=10, progress=False,
                                  **RUNS[name])
        out[name] = time.perf_counter() - start, result
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"Python {platform.python_version()}, JAX {jax.__version__}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    x = jnp.ones((8, 1024))
    names = list(RUNS)
    ratios: dict[str, list[float]] = {"constants": [], "cache": [], "xla": []}
    for k in range(args.rounds):
        order = names[k % 3:] + names[:k % 3]
        runs = one_round(order, x, args.repeat)
        whole, plain = runs["plain"]
        compared, constants_s = plain.wall_s, plain.constant_arguments.wall_s
        ratios["constants"].append(constants_s / compared)
        for part in ("cache", "xla"):
            ratios[part].append((runs[part][0] - whole) / compared)
        print(f"round {k + 1} ({', '.join(order)}): plain call {whole:.2f} s (the comparison "
              f"{compared:.2f} s, the constants part {constants_s:.2f} s), with --cache "
              f"{runs['cache'][0]:.2f} s, with --xla {runs['xla'][0]:.2f} s")
    print("each part's cost over the comparison (its flat and nested cold runs), median of "
          f"{args.rounds} rounds:")
    for part, xs in ratios.items():
        print(f"  {part:<9} {statistics.median(xs):.2f}x  (rounds: "
              f"{', '.join(f'{r:.2f}' for r in xs)})")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

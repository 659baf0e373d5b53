"""jitmagic's cold figures beside fresh-process first calls by hand, in one command
(issue 60): the check that each cold sample on a backend whose compiler remembers (a
TPU) is what a new session pays.

1. By hand: ``PAIRS`` alternating pairs (flat, nested, nested, flat, ...), each first call
   in a fresh process of its own: ``import jax``, a tiny warm-up jit, then one cold first
   call (``jax.jit(fn)(...)`` to ``block_until_ready``).
2. ``python -m jitmagic FILE.py --save ...`` at the default options (where the backend
   remembers, each cold sample is a fresh process too), its wall time.
3. One line each: the hand's median ratio and ranges, the tool's ratio, its verdict, its
   cold samples (and whether each lies within the hand's range, give or take 10%), and
   where it took them.

    python benchmarks/fresh_vs_hand.py [mlp|seed] [PAIRS]

On the TPU host: ``PYTHONPATH=$PYTHONPATH:$PWD python benchmarks/fresh_vs_hand.py mlp 3``
(about 19 s a fresh process there: some 8 minutes in all), then the same with ``seed``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import jitmagic

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from tpu_figures import MLP  # noqa: E402 (the MLP cell the TPU figures time)

SEED = """\
import jax.numpy as jnp
def f(x):
    return sum(i * x for i in range(256))
def g(x):
    return sum(f(x) for _ in range(16))
x = jnp.ones(128)
g(x)
"""
#: Per program: its cell, and what its last line calls nested by hand.
PROGRAMS = {"mlp": (MLP, "block"), "seed": (SEED, "f")}
#: One cold first call in a fresh process: the cell's lines, the helper jitted or not.
ONE_CALL = """
import resource, sys, time, jax
source = open(sys.argv[1]).read()
*setup, call = source.rstrip().splitlines()
namespace = {}
exec("\\n".join(setup), namespace)
if sys.argv[3] == "nested":
    namespace[sys.argv[2]] = jax.jit(namespace[sys.argv[2]])
entry, args = call.split("(", 1)
jax.block_until_ready(jax.jit(lambda a: a + 1)(1.0))
fn = jax.jit(namespace[entry])
stages = {}
jax.monitoring.register_event_duration_secs_listener(
    lambda event, s, **kw: stages.__setitem__(event, stages.get(event, 0.0) + s))
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
start = time.perf_counter()
jax.block_until_ready(eval(f"fn({args}", {**namespace, "fn": fn}))
took = time.perf_counter() - start
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
print({**{k.rsplit("/", 1)[-1]: round(v, 3) for k, v in stages.items() if "/compile/" in k},
       "page_faults": faults})
print(took)
"""


def by_hand(path: str, helper: str, pairs: int) -> dict[str, list[float]]:
    seconds: dict[str, list[float]] = {"flat": [], "nested": []}
    for i in range(pairs):
        for name in ("flat", "nested")[:: 1 if i % 2 == 0 else -1]:
            done = subprocess.run([sys.executable, "-c", ONE_CALL, path, helper, name],
                                  capture_output=True, text=True, check=True)
            seconds[name].append(float(done.stdout.strip().splitlines()[-1]))
    return seconds


def main() -> None:
    program = sys.argv[1] if len(sys.argv) > 1 else "seed"
    pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    folder = tempfile.mkdtemp(prefix="fresh_vs_hand_")
    path, saved = os.path.join(folder, f"{program}.py"), os.path.join(folder, "out.json")
    source, helper = PROGRAMS[program]
    with open(path, "w") as out:
        out.write(source)
    hand = by_hand(path, helper, pairs)
    flat, nested = (statistics.median(hand[k]) for k in ("flat", "nested"))
    print(f"by hand, each a fresh process: flat {min(hand['flat']):.2f}–"
          f"{max(hand['flat']):.2f} s, nested {min(hand['nested']):.2f}–"
          f"{max(hand['nested']):.2f} s: {flat / nested:.2f}×", flush=True)
    began = time.perf_counter()
    subprocess.run([sys.executable, "-m", "jitmagic", path, "-q", "--save", saved], check=True)
    c = jitmagic.load(saved)
    d = c.verdict.difference
    print(f"jitmagic: {d.kind} {d.ratio:.2f}× ({d.low:.2f}×–{d.high:.2f}×) in "
          f"{time.perf_counter() - began:.0f} s; samples taken: {c.env.get('cold_samples')}")
    for name in ("flat", "nested"):
        low, high = 0.9 * min(hand[name]), 1.1 * max(hand[name])
        kept = c.judged(name).samples.get("first_call_s", [])
        inside = sum(low <= s <= high for s in kept)
        print(f"  {name}: first calls {[round(s, 2) for s in kept]}, {inside} of {len(kept)} "
              f"within the hand's range ±10%")
    print(json.dumps({"hand": hand}))


if __name__ == "__main__":
    main()

"""Where a comparison's wall time goes, and whether its first-call ratio is JAX's own.

On the discussion's example (``f`` with 256 terms, reused 16 times by ``g``, argument
3.14), side by side in one run, interleaved (tool, by hand, tool, by hand, ...):

* ``jitmagic.compare(g, 3.14, repeat=3)``: its wall time, the cold first calls inside
  it, the steady state, and the rest (discovery, the nested variant's untimed check,
  structure counts); the wall time over the cold first calls is the figure to keep
  small (the user's own cost is the cold calls);
* by hand: ``jax.clear_caches()`` then ``jax.block_until_ready(jax.jit(g)(3.14))``,
  flat and with ``f`` under its own ``jax.jit``, the same number of times;
* the first-call ratio (flat / nested, medians) of each, and how far apart they are.

    PYTHONPATH=$PWD python benchmarks/wait.py [rounds] [repeat]
"""

from __future__ import annotations

import statistics
import sys
import time

import jax

import jitmagic


def f(x):
    return sum(i * x for i in range(256))


jf = jax.jit(f)


def g(x):
    return sum(f(x) for _ in range(16))


def g_by_hand_nested(x):
    return sum(jf(x) for _ in range(16))


def cold_call_s(fn) -> float:
    """One cold first call, as a user pays it: cleared caches, until the result is ready."""
    jax.clear_caches()
    t0 = time.perf_counter()
    jax.block_until_ready(jax.jit(fn)(3.14))
    return time.perf_counter() - t0


def by_hand(repeat: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"flat": [], "nested": []}
    for _ in range(repeat):  # interleaved, as the tool does
        out["flat"].append(cold_call_s(g))
        out["nested"].append(cold_call_s(g_by_hand_nested))
    return out


def tool(repeat: int) -> dict[str, float]:
    c = jitmagic.compare(g, 3.14, repeat=repeat, progress=False)
    cold = sum(sum(v.samples["first_call_s"]) for v in c.variants.values())
    steady = sum(sum(v.samples["execute_s"]) * v.execute_loops for v in c.variants.values())
    assert c.nested.helpers == ("f",) and c.flat.stages_from == "events"
    return {"wall": c.wall_s, "cold": cold, "steady": steady, "ratio": c.ratio("first_call_s"),
            "flat": c.flat.first_call_s, "nested": c.nested.first_call_s,
            "stages_sum": sum(c.flat.first_call_parts().values())}


def main(rounds: int = 3, repeat: int = 3) -> None:
    jax.block_until_ready(jax.jit(g)(1.0))  # the process's one-time set-up, off the clock
    tools, hands = [], []
    for _ in range(rounds):
        tools.append(tool(repeat))
        hand = by_hand(repeat)
        hands.append({k: statistics.median(v) for k, v in hand.items()})
    med = {k: statistics.median(t[k] for t in tools) for k in tools[0]}
    hand_flat = statistics.median(h["flat"] for h in hands)
    hand_nested = statistics.median(h["nested"] for h in hands)
    hand_ratio = statistics.median(h["flat"] / h["nested"] for h in hands)
    print(f"discussion example, -r {repeat}, {rounds} interleaved rounds, medians "
          f"(JAX {jax.__version__}, {jax.default_backend()})")
    print(f"  wall time                 {med['wall']:6.2f} s")
    print(f"  cold first calls          {med['cold']:6.2f} s")
    print(f"  steady state              {med['steady']:6.2f} s")
    print(f"  the rest                  {med['wall'] - med['cold'] - med['steady']:6.2f} s")
    print(f"  wall / cold first calls   {med['wall'] / med['cold']:6.2f}×")
    print("first call, tool against by hand (medians):")
    print(f"  flat      tool {med['flat']:6.3f} s   by hand {hand_flat:6.3f} s")
    print(f"  nested    tool {med['nested']:6.3f} s   by hand {hand_nested:6.3f} s")
    print(f"  ratio     tool {med['ratio']:6.2f}×   by hand {hand_ratio:6.2f}×   "
          f"({med['ratio'] / hand_ratio - 1:+.0%} apart)")
    print(f"  flat stages + rest = {med['stages_sum']:.3f} s, first call {med['flat']:.3f} s")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:3]))

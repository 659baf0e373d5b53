"""Simulated false differences and power of jitmagic's significance rule.

No timing: draws samples from a model of these machines' noise (log-normal
12% jitter, and one run in ten stalled by 1.5–3×) and counts how often
:func:`jitmagic.model.stats.difference` calls a difference. Prints the figures
quoted in docs/significance.md.

    PYTHONPATH=$PWD python benchmarks/significance.py [draws]
"""

from __future__ import annotations

import math
import random
import sys

from jitmagic.model.stats import SAME, difference

JITTER, STALL_RATE, STALL = 0.12, 0.10, (1.5, 3.0)


def runs(rng: random.Random, n: int, scale: float = 1.0) -> list[float]:
    """``n`` modelled timings of a job whose typical time is ``scale``."""
    out = []
    for _ in range(n):
        x = scale * math.exp(rng.gauss(0, JITTER))
        out.append(x * rng.uniform(*STALL) if rng.random() < STALL_RATE else x)
    return out


def rate(rng: random.Random, repeats: int, effect: float, draws: int) -> float:
    """How often samples ``effect`` times apart are called different."""
    hits = sum(difference(runs(rng, repeats, effect), runs(rng, repeats)).kind != SAME
               for _ in range(draws))
    return hits / draws


def main(draws: int = 20_000) -> None:
    rng = random.Random(12)
    effects = (1.1, 1.3, 1.5, 2.0)
    print(f"{draws:,} draws per cell; noise: log-normal {JITTER:.0%}, "
          f"{STALL_RATE:.0%} stalls of {STALL[0]}–{STALL[1]}×")
    print("repeats  false differences  " + "  ".join(f"power at {e}×" for e in effects))
    for r in (1, 2, 3, 5, 9):
        false = rate(rng, r, 1.0, draws)
        power = [rate(rng, r, e, draws // 4) for e in effects]
        print(f"{r:>7}  {false:>17.2%}  " + "  ".join(f"{p:>13.0%}" for p in power))


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))

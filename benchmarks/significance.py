"""Simulated false differences and power of jitmagic's significance rule.

No timing: seeded draws from models of a shared machine's noise (log-normal jitter,
and now and then a stalled run; and :class:`Busy`, the process's CPU time on a busy
machine, which a busy machine's first call is decided on) fed to
:func:`jitmagic.model.stats.rule.difference`, the way ``-r auto`` asks it (after every
pair of runs from 3 to 9, stopping at the first decision) and the way a fixed
``-r 3``/``-r 5``/``-r 9`` does (once). Prints the figures quoted in docs/significance.md.

    PYTHONPATH=$PWD python benchmarks/significance.py [draws] [seed]
    PYTHONPATH=$PWD python benchmarks/significance.py --calibrate [draws] [seed]
    PYTHONPATH=$PWD python benchmarks/significance.py --limits [draws] [seed]
    PYTHONPATH=$PWD python benchmarks/significance.py --looks [draws] [seed]

``--looks`` prints, per model, how often a program compared with itself is called
faster or slower at each look n = 3..9 (the look ``-r auto`` first does so, and that
look alone, as a fixed ``-r n``), at the looks 10..18 a busy machine's ``-r auto`` goes
on to (busy models), over all looks, and the power of ``-r auto`` on real 1.3× and 2×
gaps. ``--calibrate-busy`` derives the one threshold of the looks past 9.
``--limits`` prints what bounds the power at 20% jitter (an oracle
that knows the noise model, and a fixed ``-r 20``) and how often a quiet machine gets
"no measurable difference". ``--calibrate`` derives
:data:`jitmagic.model.stats.rule.THRESHOLDS` instead: for each look n = 3..9 the
threshold is the largest, over the noise models, of the quantile of |shift of logs| /
spread (0 where the ratio of medians lies on the other side of 1: the interval always
holds it) that leaves ``WEIGHTS[n] × q`` of same-program draws above it; q is the
largest that keeps the false differences over all looks together (with the ranges
rule, which needs no threshold) at :data:`TARGET` for every model.
"""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass

from jitmagic.model.stats.rule import (
    FASTER,
    MAX_PAIRS,
    MAX_PAIRS_BUSY,
    MIN_PAIRS,
    SAME,
    SLOWER,
    THRESHOLDS,
    bounds,
    difference,
    median,
    shift_of_logs,
    spread_of_logs,
)


@dataclass(frozen=True)
class Noise:
    """Log-normal jitter of ``jitter`` (sigma of the log), ``stall_rate`` of the runs
    slowed by a uniform ``stall`` factor, and ``drift`` (log) per pair for both sides."""

    name: str
    jitter: float
    stall_rate: float = 0.0
    stall: tuple[float, float] = (1.0, 1.0)
    drift: float = 0.0

    def run(self, rng: random.Random, typical: float, pair: int) -> float:
        x = typical * math.exp(rng.gauss(0, self.jitter) + self.drift * pair)
        return x * rng.uniform(*self.stall) if rng.random() < self.stall_rate else x

    def pairs(self, rng: random.Random, effect: float, n: int
              ) -> tuple[list[float], list[float]]:
        flat, nested = [], []
        for i in range(n):
            flat.append(self.run(rng, effect, i))
            nested.append(self.run(rng, 1.0, i))
        return flat, nested


@dataclass(frozen=True)
class Busy:
    """The process's CPU time (``time.process_time()``) of cold first calls on a busy
    machine, the runs taken back to back (flat, nested, flat, ...) so that what hits one
    run often hits the next. Each run's log is the sum of

    * ``jitter``: log-normal jitter of the run alone (sigma of the log);
    * a common contention level, the same process for both variants: a stationary AR(1)
      of sigma ``level`` (of the log) and correlation ``persistence`` from one run to the
      next (the other processes' contention for caches and memory bandwidth: CPU time
      leaves out the wait for a CPU, not the slower running);
    * inflation episodes: a run starts one with probability ``start``, and an episode
      lasts into the next run with probability ``stay``; each run in it is slowed by a
      uniform ``inflation`` factor (a burst of that contention).

    Fitted to the CPU times measured with 3 and 8 spinning processes on 2 cores
    (docs/significance.md, "CPU time on a busy machine").
    """

    name: str
    jitter: float = 0.04
    level: float = 0.05
    persistence: float = 0.9
    start: float = 0.08
    stay: float = 0.55
    inflation: tuple[float, float] = (1.1, 1.5)

    def pairs(self, rng: random.Random, effect: float, n: int
              ) -> tuple[list[float], list[float]]:
        flat: list[float] = []
        nested: list[float] = []
        level = rng.gauss(0, self.level)
        renew = math.sqrt(1 - self.persistence ** 2) * self.level
        episode = False
        for i in range(2 * n):
            episode = rng.random() < (self.stay if episode else self.start)
            x = math.exp(level + rng.gauss(0, self.jitter))
            if episode:
                x *= rng.uniform(*self.inflation)
            if i % 2:
                nested.append(x)
            else:
                flat.append(effect * x)
            level = self.persistence * level + rng.gauss(0, renew)
        return flat, nested


Model = Noise | Busy

#: The busy machine's CPU-time model, as fitted (:class:`Busy`'s defaults: 15% of the
#: runs inflated, start / (start + 1 - stay), in episodes of 2.2 runs on average) ...
BUSY = Busy("busy machine, CPU time: 4% jitter, 5% common level, 15% of runs 1.1–1.5×")
#: ... and harsher, as a check of the margin: more jitter, a wider common level, a fifth
#: of the runs inflated, in episodes of 2.5 runs on average, up to 1.6×. Not used by
#: --calibrate.
BUSY_HARSH = Busy("busy machine, CPU time, harsher: 6% jitter, 8% level, 20% of runs "
                  "1.1–1.6×", 0.06, 0.08, 0.9, 0.10, 0.6, (1.1, 1.6))

MODELS: tuple[Model, ...] = (
    Noise("12% jitter, 10% stalls 1.5–3×", 0.12, 0.10, (1.5, 3.0)),
    Noise("20% jitter, 5% stalls 1.3–4×", 0.20, 0.05, (1.3, 4.0)),
    Noise("10% jitter, 10% stalls 1.3–4×", 0.10, 0.10, (1.3, 4.0)),
    Noise("15% jitter, no stalls", 0.15),
    Noise("12% jitter, 10% stalls 1.5–3×, 3% drift a pair", 0.12, 0.10, (1.5, 3.0), 0.03),
    BUSY,
)
EFFECTS = (1.1, 1.3, 1.5, 2.0)
#: False differences over all looks that --calibrate aims at (of the 1% allowed: the
#: rest is margin for noise unlike these models).
TARGET = 0.006
#: How --calibrate spends them over the looks n = 3..9: most at 9 pairs, where the
#: power is; the first looks decide only gaps the ranges rule sees anyway.
WEIGHTS = dict(zip(range(MIN_PAIRS, MAX_PAIRS + 1), (0.1, 0.1, 0.2, 0.3, 0.4, 0.5, 6.0),
                   strict=True))


def pairs(rng: random.Random, noise: Model, effect: float, n: int
          ) -> tuple[list[float], list[float]]:
    """``n`` pairs of runs, flat then nested, nested ``effect`` times faster."""
    return noise.pairs(rng, effect, n)


def most_for(noise: Model) -> int:
    """The most pairs ``-r auto`` takes under ``noise``: a busy machine's CPU times
    (decided on once the threads wait for a CPU) go on to :data:`MAX_PAIRS_BUSY`."""
    return MAX_PAIRS_BUSY if isinstance(noise, Busy) else MAX_PAIRS


def sequential(flat: list[float], nested: list[float]) -> tuple[str, int]:
    """What ``-r auto`` would say, and after how many pairs: the first decision from
    :data:`MIN_PAIRS` on, else the verdict at the last pair drawn (:func:`most_for`)."""
    for n in range(MIN_PAIRS, len(flat) + 1):
        d = difference(flat[:n], nested[:n])
        if d.decided:
            return d.kind, n
    return d.kind, len(flat)


def fixed(n: int) -> Callable[[list[float], list[float]], tuple[str, int]]:
    return lambda flat, nested: (difference(flat[:n], nested[:n]).kind, n)


def rates(rng: random.Random, noise: Model, effect: float, draws: int,
          how: Callable[[list[float], list[float]], tuple[str, int]], n: int | None = None
          ) -> dict[str, float]:
    """How often each outcome comes out ("false": faster or slower for the same program;
    "same": no measurable difference), and the mean pairs used, on ``n`` pairs a draw
    (default: the most ``-r auto`` takes, :func:`most_for`)."""
    counts = {FASTER: 0, SLOWER: 0, SAME: 0}
    used = 0
    n = most_for(noise) if n is None else n
    for _ in range(draws):
        kind, took = how(*pairs(rng, noise, effect, n))
        counts[kind] = counts.get(kind, 0) + 1
        used += took
    return {k: v / draws for k, v in counts.items()} | {"pairs": used / draws}


def main(draws: int = 20_000, seed: int = 12) -> None:
    rng = random.Random(seed)
    print(f"{draws:,} same-program draws per row, {draws // 4:,} per power cell; seed {seed}")
    print(f"{'how':<8} {'false':>6} {'same':>6} {'pairs':>5}  "
          + "  ".join(f"{e}×".rjust(5) for e in EFFECTS) + "  pairs at 1.5×, 2×")
    for noise in MODELS:
        print(noise.name)
        for label, how in (("-r auto", sequential), ("-r 3", fixed(3)), ("-r 5", fixed(5)),
                           ("-r 9", fixed(9))):
            null = rates(rng, noise, 1.0, draws, how)
            power = [rates(rng, noise, e, draws // 4, how) for e in EFFECTS]
            print(f"{label:<8} {null[FASTER] + null[SLOWER]:>6.2%} {null[SAME]:>6.1%} "
                  f"{null['pairs']:>5.1f}  " + "  ".join(f"{p[FASTER]:>5.0%}" for p in power)
                  + f"  {power[2]['pairs']:>5.1f} {power[3]['pairs']:>4.1f}")


def statistic(flat: list[float], nested: list[float]) -> tuple[float, bool]:
    """|shift of logs| / spread (0 where the medians disagree with the shift's side),
    and whether the ranges rule alone decides."""
    low, high = bounds(flat, nested, math.inf)
    shift, ratio = shift_of_logs(flat, nested), median(flat) / median(nested)
    if (shift > 0) != (ratio > 1):
        return 0.0, low > 1 or high < 1
    spread = spread_of_logs(flat, nested)
    return (abs(shift) / spread if spread else math.inf), low > 1 or high < 1


def calibrate(draws: int = 100_000, seed: int = 12) -> None:
    rng = random.Random(seed)
    looks = list(WEIGHTS)
    mean_weight = sum(WEIGHTS.values()) / len(WEIGHTS)
    sims = []  # per model: per draw, per look, (statistic, ranges rule)
    for noise in MODELS:
        draws_ = [pairs(rng, noise, 1.0, MAX_PAIRS) for _ in range(draws)]
        sims.append([[statistic(f[:n], g[:n]) for n in looks] for f, g in draws_])
    ordered = [[sorted(d[i][0] for d in sim) for i in range(len(looks))] for sim in sims]

    def thresholds(q: float) -> list[float]:
        return [max(o[i][min(draws - 1, int(draws * (1 - q * WEIGHTS[n] / mean_weight)))]
                    for o in ordered) for i, n in enumerate(looks)]

    def worst(cs: list[float]) -> float:
        return max(sum(any(t > c or rule for (t, rule), c in zip(d, cs, strict=True))
                       for d in sim) / draws for sim in sims)

    low, high = 0.0, TARGET
    for _ in range(20):
        q = (low + high) / 2
        low, high = (q, high) if worst(thresholds(q)) <= TARGET else (low, q)
    cs = thresholds(low)
    print(f"{draws:,} draws per model, seed {seed}: false differences over looks "
          f"{worst(cs):.2%} (target {TARGET:.1%})")
    print("thresholds", {n: round(c, 1) for n, c in zip(looks, cs, strict=True)})
    print("in use    ", {n: THRESHOLDS[n] for n in looks},
          f"-> {worst([THRESHOLDS[n] for n in looks]):.2%}")
    two = max(sum(difference(*pairs(rng, noise, 1.0, 2)).significant
                  for _ in range(draws)) / draws for noise in MODELS)
    print(f"n = 2 (one look, threshold {THRESHOLDS[2]}): {two:.2%} false differences")


#: On a busy machine ``-r auto`` goes on past MAX_PAIRS, up to MAX_PAIRS_BUSY pairs. The
#: false differences over all looks 3..MAX_PAIRS_BUSY together that --calibrate-busy
#: aims at (of the 1% allowed), the thresholds of looks 3..MAX_PAIRS kept as they are.
TARGET_BUSY = 0.008


def calibrate_busy(draws: int = 40_000, seed: int = 12) -> None:
    """The one threshold of the looks past MAX_PAIRS: the smallest that keeps every model
    (the harsher busy one included) at TARGET_BUSY over all looks 3..MAX_PAIRS_BUSY."""
    rng = random.Random(seed)
    early_looks = range(MIN_PAIRS, MAX_PAIRS + 1)
    late_looks = range(MAX_PAIRS + 1, MAX_PAIRS_BUSY + 1)
    sims = []  # per model, per draw: (a look up to MAX_PAIRS was false, the late stats)
    for noise in (*MODELS, BUSY_HARSH):
        draws_ = [pairs(rng, noise, 1.0, MAX_PAIRS_BUSY) for _ in range(draws)]
        sims.append([(any(difference(f[:n], g[:n]).significant for n in early_looks),
                      [statistic(f[:n], g[:n]) for n in late_looks]) for f, g in draws_])

    def worst(c: float) -> float:
        return max(sum(early or any(t > c or rule for t, rule in late) for early, late in sim)
                   for sim in sims) / draws

    low, high = 1.0, 50.0  # bisect for the smallest threshold within the target
    for _ in range(30):
        mid = (low + high) / 2
        low, high = (low, mid) if worst(mid) <= TARGET_BUSY else (mid, high)
    quiet = max(sum(early for early, _ in sim) for sim in sims) / draws
    print(f"{draws:,} draws per model, seed {seed}: looks {MIN_PAIRS}..{MAX_PAIRS} alone "
          f"{quiet:.2%}; with looks {MAX_PAIRS + 1}..{MAX_PAIRS_BUSY} at threshold "
          f"{high:.2f}: {worst(high):.2%} (target {TARGET_BUSY:.1%})")
    in_use = THRESHOLDS.get(MAX_PAIRS_BUSY)
    if in_use is not None:
        print(f"in use {in_use} -> {worst(in_use):.2%}")


def oracle_power(rng: random.Random, noise: Model, effect: float, draws: int) -> float:
    """How often a 1.5× (``effect``) gap is found at one look at 9 pairs by a test that
    knows the noise model exactly: the shift of the mean logs of each side's fastest 7
    runs against its same-program quantile at :data:`TARGET` (both tails)."""
    def shift(e: float) -> float:
        flat, nested = pairs(rng, noise, e, MAX_PAIRS)
        return shift_of_logs(flat, nested)
    null = sorted(abs(shift(1.0)) for _ in range(draws))
    cut = null[int(draws * (1 - TARGET))]
    return sum(shift(effect) > cut for _ in range(draws)) / draws


def limits(draws: int = 20_000, seed: int = 12) -> None:
    rng = random.Random(seed)
    hard = MODELS[1]
    print(f"{hard.name}: 1.5× found at 9 pairs by an oracle knowing the noise, "
          f"{oracle_power(rng, hard, 1.5, draws):.0%}; by a fixed -r 20, "
          f"{rates(rng, hard, 1.5, draws // 20, fixed(20), 20)[FASTER]:.0%} "
          f"({draws // 20:,} draws)")
    for jitter in (0.02, 0.05):
        quiet = Noise(f"{jitter:.0%} jitter", jitter)
        r = rates(rng, quiet, 1.0, draws // 20, sequential)
        print(f"{quiet.name}, same program, -r auto: 'no measurable difference' "
              f"{r[SAME]:.0%} of {draws // 20:,} draws, after {r['pairs']:.1f} pairs")


@dataclass(frozen=True)
class Looks:
    """Same-program draws: at each look n = 3..9, the share ``-r auto`` first calls
    faster or slower there (``first``: they add up to ``all``, over all looks) and the
    share that look alone does (``alone``: a fixed ``-r n``); and :func:`rates` of
    ``-r auto`` on real 1.3× and 2× gaps (``power``, by the gap)."""

    first: dict[int, float]
    alone: dict[int, float]
    all: float
    power: dict[float, dict[str, float]]


def per_look(rng: random.Random, noise: Model, draws: int) -> Looks:
    """:class:`Looks` of ``noise`` from ``draws`` same-program draws (a quarter as many
    a power cell)."""
    looks = range(MIN_PAIRS, most_for(noise) + 1)
    first = dict.fromkeys(looks, 0)
    alone = dict.fromkeys(looks, 0)
    for _ in range(draws):
        flat, nested = pairs(rng, noise, 1.0, looks[-1])
        stopped = False
        for n in looks:
            d = difference(flat[:n], nested[:n])
            alone[n] += d.significant
            if not stopped and d.decided:
                first[n] += d.significant
                stopped = True
    power = {e: rates(rng, noise, e, draws // 4, sequential) for e in (1.3, 2.0)}
    return Looks({n: c / draws for n, c in first.items()},
                 {n: c / draws for n, c in alone.items()}, sum(first.values()) / draws,
                 power)


def looks_table(draws: int = 20_000, seed: int = 12) -> None:
    rng = random.Random(seed)
    early = range(MIN_PAIRS, MAX_PAIRS + 1)
    late = f"{MAX_PAIRS + 1}–{MAX_PAIRS_BUSY}"
    print(f"{draws:,} same-program draws per model, {draws // 4:,} per power cell; "
          f"seed {seed}; looks {late} (busy models only): first summed, alone the most")
    print(f"{'look n':<7}" + "".join(f"{n:>7}" for n in early) + f"{late:>7}"
          + "    all   1.3×  2× (pairs)")
    for noise in (*MODELS, BUSY_HARSH):
        r = per_look(rng, noise, draws)
        power = r.power

        def row(shares: dict[int, float], of_late: Callable = sum,
                busy: bool = isinstance(noise, Busy)) -> str:
            later = of_late(v for n, v in shares.items() if n > MAX_PAIRS)
            return ("".join(f"{shares[n]:>7.2%}" for n in early)
                    + (f"{later:>7.2%}" if busy else f"{'':>7}"))

        print(noise.name)
        print(f"{'first':<7}" + row(r.first)
              + f" {r.all:>6.2%}  {power[1.3][FASTER]:>4.0%} {power[2.0][FASTER]:>4.0%}"
              f" ({power[1.3]['pairs']:.1f}, {power[2.0]['pairs']:.1f})")
        print(f"{'alone':<7}" + row(r.alone, max))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--looks"]:
        looks_table(*(int(a) for a in sys.argv[2:]))
    elif sys.argv[1:2] == ["--calibrate"]:
        calibrate(*(int(a) for a in sys.argv[2:]))
    elif sys.argv[1:2] == ["--calibrate-busy"]:
        calibrate_busy(*(int(a) for a in sys.argv[2:]))
    elif sys.argv[1:2] == ["--limits"]:
        limits(*(int(a) for a in sys.argv[2:]))
    else:
        main(*(int(a) for a in sys.argv[1:]))

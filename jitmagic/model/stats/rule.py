"""The one median, numbers as JSON writes them, and the one significance rule
(:func:`difference`) every verdict, flag and ranking uses.

``-r auto`` asks the rule after every pair of runs from :data:`MIN_PAIRS` to
:data:`MAX_PAIRS`; its thresholds are calibrated by simulation
(``benchmarks/significance.py``, docs/significance.md) so that a program compared with
itself is called faster or slower at most 1% of the time over all those looks together.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args


def median(xs: list[float] | None) -> float:
    """The median of samples; NaN (not measured) when there are none."""
    return statistics.median(xs) if xs else math.nan


def json_number(x: float | None) -> float | None:
    """JSON has no NaN: a number that was not measured is written as null."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


#: What the rule says of two sets of samples (saved by value).
Kind = Literal["faster", "slower", "no measurable difference", "inconclusive"]
FASTER, SLOWER, SAME, INCONCLUSIVE = get_args(Kind)
#: ``-r auto`` asks the rule after every pair of runs from this many on ...
MIN_PAIRS = 3
#: ... up to this many ...
MAX_PAIRS = 9
#: ... or, on a busy machine (its runs decided on CPU time), up to this many.
MAX_PAIRS_BUSY = 18
#: An interval inside 1/SAME_WITHIN–SAME_WITHIN is "no measurable difference".
SAME_WITHIN = 1.1
#: The interval lies within this factor of the range of run-to-run ratios: runs this far
#: apart differ whatever the spread says (one huge stall must not hide a 16× effect).
APART = 1.5
#: With two runs a side the bound is wider: 1.5× or 2× apart happens by chance 1% of the time.
APART_TWO_RUNS = 2.5
#: Ranges that do not overlap, medians this many times apart, differ too (the bound is
#: then the range itself), from :data:`FAR_FROM` runs a side on.
FAR, FAR_FROM = 2.0, 5
#: Two compilations of one program, yet a per-call ratio this far from 1 at both ends of
#: its interval: a difference (dispatch, say), not noise.
FAR_APART = 1.5
#: How many spreads (:func:`spread_of_logs`) the ratio's log may lie from
#: :func:`shift_of_logs`, by the runs a side: ``benchmarks/significance.py --calibrate
#: 100000 12`` (0.6% false differences over n = 3..9 together; n = 2, 0.7%) and, for the
#: looks past 9 a busy machine takes, ``--calibrate-busy 40000 12`` (0.8% over 3..18).
THRESHOLDS = {2: 16.0, 3: 157.0, 4: 20.0, 5: 10.1, 6: 7.4, 7: 6.0, 8: 6.7, 9: 4.1,
              **dict.fromkeys(range(MAX_PAIRS + 1, MAX_PAIRS_BUSY + 1), 4.73)}


@dataclass(frozen=True)
class Difference:
    """Whether ``after`` differs from ``before`` (``kind``: :data:`FASTER` means smaller
    times) beyond the noise of their runs: ``ratio`` median(before) / median(after),
    ``low``–``high`` its interval (NaN without ``enough_data``), ``noise`` ratio / low."""

    kind: Kind
    ratio: float
    enough_data: bool
    runs: int = 0
    low: float = math.nan
    high: float = math.nan
    noise: float | None = None

    @property
    def significant(self) -> bool:
        """Faster or slower."""
        return self.kind in (FASTER, SLOWER)

    @property
    def decided(self) -> bool:
        """Whether ``-r auto`` may stop taking pairs."""
        return self.kind != INCONCLUSIVE

    @property
    def unresolved(self) -> bool:
        """Measured with a spread, yet undecided: more runs might tell."""
        return self.enough_data and self.kind == INCONCLUSIVE


def threshold(runs: int) -> float:
    """:data:`THRESHOLDS` at ``runs`` runs a side (at least 2)."""
    return THRESHOLDS[min(max(runs, 2), MAX_PAIRS_BUSY)]


def kept(n: int) -> int:
    """How many of a side's ``n`` runs the rule reads: the slowest quarter is set aside."""
    return n if n < 3 else n - max(1, n // 4)


def fastest_logs(xs: Sequence[float]) -> list[float]:
    """The logs of a side's :func:`kept` fastest runs."""
    return sorted(map(math.log, xs))[:kept(len(xs))]


def shift_of_logs(a: Sequence[float], b: Sequence[float]) -> float:
    """log(a's typical time / b's): the difference of the mean logs of the :func:`kept` runs."""
    return _mean(fastest_logs(a)) - _mean(fastest_logs(b))


def spread_of_logs(a: Sequence[float], b: Sequence[float]) -> float:
    """The standard error of :func:`shift_of_logs`: the pooled standard deviation of
    each side's fastest :func:`kept` runs times sqrt(1/k_a + 1/k_b)."""
    la, lb = fastest_logs(a), fastest_logs(b)
    pooled = (_squares(la) + _squares(lb)) / (len(la) + len(lb) - 2)
    return math.sqrt(pooled * (1 / len(la) + 1 / len(lb)))


def _mean(xs: list[float]) -> float:
    return math.fsum(xs) / len(xs)


def _squares(xs: list[float]) -> float:
    """The sum of squared deviations from the mean."""
    mean = _mean(xs)
    return math.fsum((x - mean) ** 2 for x in xs)


def difference(before: Sequence[float], after: Sequence[float]) -> Difference:
    """The one significance rule of jitmagic, on two lists of raw timings: the interval of
    :func:`bounds` above 1 is FASTER, below 1 SLOWER, inside 1/1.1–1.1 SAME, else
    INCONCLUSIVE (always, with fewer than two runs a side)."""
    runs = min(len(before), len(after))
    if not runs or min(*before, *after) <= 0:
        return Difference(INCONCLUSIVE, math.nan, False, runs)
    ratio = median(list(before)) / median(list(after))
    if runs < 2:
        return Difference(INCONCLUSIVE, ratio, False, runs)
    noise = math.exp(threshold(runs) * spread_of_logs(before, after))
    low, high = bounds(before, after, noise)
    if low > 1:
        kind = FASTER
    elif high < 1:
        kind = SLOWER
    elif low >= 1 / SAME_WITHIN and high <= SAME_WITHIN:
        kind = SAME
    else:
        kind = INCONCLUSIVE
    return Difference(kind, ratio, True, runs, low, high, ratio / low)


def bounds(before: Sequence[float], after: Sequence[float], noise: float
           ) -> tuple[float, float]:
    """The interval on the ratio (two runs a side or more): within ``noise`` (exp of
    :func:`threshold` × :func:`spread_of_logs`) of exp(:func:`shift_of_logs`), cut to
    within :data:`APART` of the range of run-to-run ratios (the range itself from
    :data:`FAR_FROM` runs on, medians :data:`FAR` apart); never leaving out the ratio."""
    runs = min(len(before), len(after))
    ratio = median(list(before)) / median(list(after))
    centre = math.exp(shift_of_logs(before, after))
    if runs >= FAR_FROM and max(ratio, 1 / ratio) >= FAR:
        apart = 1.0
    else:
        apart = APART if runs > 2 else APART_TWO_RUNS
    low = max(centre / noise, min(before) / max(after) / apart)
    high = min(centre * noise, max(before) / min(after) * apart)
    return min(low, ratio), max(high, ratio)


def spread(xs: Sequence[float | None]) -> tuple[float, float] | None:
    """(min, max) of the finite samples, the one min–max rule (None with fewer than two)."""
    finite = [x for x in xs if x is not None and math.isfinite(x)]
    return (min(finite), max(finite)) if len(finite) >= 2 else None


def gap_withheld(d: Difference) -> bool:
    """Whether a per-call difference ``d`` between two compilations of one program is left
    undecided: the rule found it, but its interval is not wholly :data:`FAR_APART` from 1."""
    return d.significant and not (d.low >= FAR_APART or d.high <= 1 / FAR_APART)

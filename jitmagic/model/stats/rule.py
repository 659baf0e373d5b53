"""Statistics derived from raw samples: the one median, numbers as JSON writes them, and
the one significance rule (:func:`difference`) every verdict, flag and ranking uses.

The rule is built for ``-r auto``, which takes pairs of runs (flat and nested, back to
back) and asks it after every pair from :data:`MIN_PAIRS` to :data:`MAX_PAIRS`: its
thresholds are calibrated by simulation (``benchmarks/significance.py``) so that a
program compared with itself is called faster or slower at most 1% of the time over all
those looks together, under several models of a shared machine's noise (see
docs/significance.md). A fixed ``-r N`` asks it once, at ``n = N``: conservative.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from typing import get_args


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
#: Runs this many times apart (slow side's fastest against fast side's slowest) differ
#: whatever the spread says: one huge stall must not hide a 16× effect. It bounds the
#: interval: the ratio lies within APART of the range of run-to-run ratios.
APART = 1.5
#: With two runs a side the bound is wider: 1.5× or 2× apart happens by chance 1% of the time.
APART_TWO_RUNS = 2.5
#: Ranges that do not overlap, with medians this many times apart, differ too (the bound
#: is then the range itself), from :data:`FAR_FROM` runs a side on: with fewer, two
#: stalled runs out of three do that by chance 0.7% of the time.
FAR, FAR_FROM = 2.0, 5
#: Two compilations of the same program, yet a per-call ratio this far from 1 at both
#: ends of its interval is not noise: said as a difference (dispatch, say).
FAR_APART = 1.5
#: How many spreads (:func:`spread_of_logs`) the ratio's log may lie from
#: :func:`shift_of_logs`, by the number of runs ``n`` a side (at least 2; above
#: :data:`MAX_PAIRS_BUSY`, as there). From ``benchmarks/significance.py --calibrate 100000
#: 12``: 0.6% false differences (of the 1% allowed) over the looks n = 3..9 together,
#: under every noise model there, most of it spent at n = 9, where the power is; n = 2, a
#: single look, 0.7%. The looks past 9, which only a busy machine's ``-r auto`` takes,
#: share one threshold, from ``--calibrate-busy 40000 12``: 0.8% over the looks 3..18
#: together, under every model (a fixed ``-r N`` past 9, one look, is judged as they are:
#: a little more strictly than it needs).
THRESHOLDS = {2: 16.0, 3: 157.0, 4: 20.0, 5: 10.1, 6: 7.4, 7: 6.0, 8: 6.7, 9: 4.1,
              **dict.fromkeys(range(MAX_PAIRS + 1, MAX_PAIRS_BUSY + 1), 4.73)}


@dataclass(frozen=True)
class Difference:
    """Whether ``after`` differs from ``before`` beyond the noise of their runs.

    ``kind`` is about ``after``: :data:`FASTER` (smaller times), :data:`SLOWER`,
    :data:`SAME` ("no measurable difference": the interval lies inside 0.91–1.1) or
    :data:`INCONCLUSIVE` (more runs might tell). ``ratio`` is median(before) /
    median(after) (above 1: ``after`` is faster; NaN: not measured); ``low``–``high``
    is the interval on it the decision was made with (NaN with fewer than two runs a
    side): FASTER exactly when ``low`` > 1, SLOWER exactly when ``high`` < 1.
    ``enough_data`` is False with fewer than two runs a side (no spread to judge).
    ``noise`` is ratio / ``low``: the factor by which the medians must differ for this
    interval to leave 1 out, at this spread and number of runs (None: no spread).
    """

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
        """Whether more runs are not needed: ``-r auto`` stops taking pairs once True."""
        return self.kind != INCONCLUSIVE

    @property
    def unresolved(self) -> bool:
        """Measured with a spread, yet undecided: more runs might tell."""
        return self.enough_data and self.kind == INCONCLUSIVE


def threshold(runs: int) -> float:
    """:data:`THRESHOLDS` at ``runs`` runs a side (at least 2)."""
    return THRESHOLDS[min(max(runs, 2), MAX_PAIRS_BUSY)]


def kept(n: int) -> int:
    """How many of a side's ``n`` runs the rule reads: the slowest quarter (at least one,
    from three runs on) is set aside, as stalls only ever slow a run down."""
    return n if n < 3 else n - max(1, n // 4)


def fastest_logs(xs: Sequence[float]) -> list[float]:
    """The logs of a side's :func:`kept` fastest runs."""
    return sorted(map(math.log, xs))[:kept(len(xs))]


def shift_of_logs(a: Sequence[float], b: Sequence[float]) -> float:
    """log(a's typical time / b's), from each side's fastest :func:`kept` runs: the
    difference of their mean logs. The interval is centred on it: with the same runs
    set aside on both sides it is unbiased, and it wastes less of the runs than the
    median (found 1.5× a tenth more often in the simulations, docs/significance.md)."""
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
    """The sum of squared deviations from the mean (``statistics.variance`` times n - 1,
    without its exact fractions: the rule is asked thousands of times in simulations)."""
    mean = _mean(xs)
    return math.fsum((x - mean) ** 2 for x in xs)


def difference(before: Sequence[float], after: Sequence[float]) -> Difference:
    """The one significance rule of jitmagic, on two lists of raw timings.

    The interval is exp(:func:`shift_of_logs`) times or divided by
    exp(:func:`threshold` × :func:`spread_of_logs`), cut to within :data:`APART` of the
    range of run-to-run ratios (min(before)/max(after) to max(before)/min(after); to the
    range itself with medians :data:`FAR` apart, from :data:`FAR_FROM` runs on), and
    widened to hold the ratio of medians it is printed with: see :func:`bounds`. It
    decides: above 1 is FASTER, below 1 SLOWER, inside 1/1.1–1.1 SAME, else
    INCONCLUSIVE (always, with fewer than two runs a side).
    """
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
    """The interval on the ratio (two runs a side or more): within ``noise`` of
    exp(:func:`shift_of_logs`), and within :data:`APART` of the range of run-to-run
    ratios (the range itself from :data:`FAR_FROM` runs on, once the medians are
    :data:`FAR` apart); never leaving out the ratio of medians."""
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
    """(min, max) of the finite samples: the one min–max rule of tables and charts; None
    with fewer than two (one run has no spread)."""
    finite = [x for x in xs if x is not None and math.isfinite(x)]
    return (min(finite), max(finite)) if len(finite) >= 2 else None


def gap_withheld(d: Difference) -> bool:
    """Whether a per-call difference ``d`` between two compilations of one program, each
    called through one jit, is left undecided: the rule found it, but its interval does
    not lie wholly :data:`FAR_APART` or more from 1, so it is noise or layout, not the
    program's speed."""
    return d.significant and not (d.low >= FAR_APART or d.high <= 1 / FAR_APART)

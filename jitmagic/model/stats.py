"""Statistics derived from raw samples: the one median, numbers as JSON writes them, and
the one significance rule (:func:`difference`) every verdict, flag and ranking uses."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


def median(xs: list[float] | None) -> float:
    """The median of samples; NaN (not measured) when there are none."""
    return statistics.median(xs) if xs else math.nan


def json_number(x: float | None) -> float | None:
    """JSON has no NaN: a number that was not measured is written as null."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


FASTER, SLOWER, SAME = "faster", "slower", "no measurable difference"
#: Runs this many times apart (slow side's fastest against fast side's slowest) differ,
#: whatever the t statistic says: one huge stall must not hide a 16× effect.
APART = 1.5
#: Ranges that do not overlap, with medians this many times apart, differ too.
FAR = 2.0
#: With one run a side there is no spread: only a gap wider than the largest stall
#: modelled on these machines (3×) counts.
APART_ONE_RUN = 3.0
#: Medians closer than this are not worth more repeats: no "too noisy" hint below it.
NOTICEABLE = 1.10
#: The most repeats a "too noisy" hint suggests.
MAX_REPEATS = 50


@dataclass(frozen=True)
class Difference:
    """Whether ``after`` differs from ``before`` beyond the noise of their repeats.

    ``kind`` is about ``after``: :data:`FASTER` (smaller times), :data:`SLOWER`, or
    :data:`SAME` ("no measurable difference"). ``ratio`` is median(before) /
    median(after) (above 1: ``after`` is faster; NaN: not measured). ``enough_data``
    is False with fewer than two runs a side (no spread to judge; ``kind`` then comes
    from a 3× gap alone). ``unresolved``: the medians are at least 10% apart but the
    runs were too noisy to tell; ``repeats_to_resolve`` is the ``-r`` that would
    resolve a spread like this one (None: more than :data:`MAX_REPEATS`).
    ``noise`` is the factor between medians the t part would need (None: no spread).
    """

    kind: str
    ratio: float
    enough_data: bool
    runs: int = 0
    unresolved: bool = False
    repeats_to_resolve: int | None = None
    noise: float | None = None

    @property
    def significant(self) -> bool:
        return self.kind != SAME

    @property
    def decided(self) -> bool:
        """Whether more runs are not needed (stand-in until the sequential rule lands)."""
        return self.significant


def t_threshold(runs: int) -> float:
    """The Welch t (on log times) above which ``runs`` repeats a side differ.

    Tuned by simulation of these machines' noise (docs/significance.md) to about
    0.4% false differences at every ``runs`` from 3 to 9; it falls with ``runs``
    as the t distribution's tails thin, so more repeats resolve smaller gaps.
    """
    return 2.7 + 20 / max(runs - 1, 1) ** 2.5


def difference(before: list[float], after: list[float]) -> Difference:
    """The one significance rule of jitmagic, on two lists of raw timings.

    Different when the slow side's fastest run is :data:`APART` times the fast
    side's slowest, when the ranges do not overlap and the medians are :data:`FAR`
    times apart, or when Welch's t on the logs exceeds :func:`t_threshold`.
    """
    runs = min(len(before), len(after))
    if not runs or min(*before, *after) <= 0:
        return Difference(SAME, math.nan, False, runs)
    ratio = median(before) / median(after)
    apart = max(min(before) / max(after), min(after) / max(before))
    if runs < 2:
        return _decide(ratio, apart >= APART_ONE_RUN, runs, None, None)
    t, se = _welch_log_t(before, after)
    noise = math.exp(t_threshold(runs) * se)
    far = apart > 1 and max(ratio, 1 / ratio) >= FAR
    differs = apart >= APART or far or abs(t) > t_threshold(runs)
    return _decide(ratio, differs, runs, t, noise)


def _decide(ratio: float, differs: bool, runs: int, t: float | None,
            noise: float | None) -> Difference:
    """The record for a decision: its direction, and how many runs would resolve it."""
    if differs and ratio != 1:
        return Difference(FASTER if ratio > 1 else SLOWER, ratio, runs >= 2, runs, noise=noise)
    unresolved = runs >= 2 and max(ratio, 1 / ratio) >= NOTICEABLE
    needed = _repeats_to_resolve(t, runs) if unresolved else None
    return Difference(SAME, ratio, runs >= 2, runs, unresolved, needed, noise)


def _welch_log_t(a: list[float], b: list[float]) -> tuple[float, float]:
    """Welch's t statistic on the logs of two samples, and its standard error."""
    la, lb = [math.log(x) for x in a], [math.log(x) for x in b]
    se = math.sqrt(statistics.variance(la) / len(la) + statistics.variance(lb) / len(lb))
    gap = statistics.fmean(la) - statistics.fmean(lb)
    if not se:
        return (math.copysign(math.inf, gap) if gap else 0.0), 0.0
    return gap / se, se


def _repeats_to_resolve(t: float | None, runs: int) -> int | None:
    """The fewest repeats at which a gap with this t (t grows as the square root of
    the repeats, the spread staying as it was) would pass :func:`t_threshold`."""
    if not t:
        return None
    return next((n for n in range(runs + 1, MAX_REPEATS + 1)
                 if abs(t) * math.sqrt(n / runs) > t_threshold(n)), None)


def spread(xs: Sequence[float | None]) -> tuple[float, float] | None:
    """(min, max) of the finite samples: the one min–max rule of tables and charts; None
    with fewer than two (one run has no spread)."""
    finite = [x for x in xs if x is not None and math.isfinite(x)]
    return (min(finite), max(finite)) if len(finite) >= 2 else None

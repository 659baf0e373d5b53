"""The one significance rule (jitmagic.model.stats.difference), on simulated noise.

Seeded draws from a model of these shared machines (log-normal ~12% jitter with
one run in ten stalled 1.5–3×): no timing, so the rates are exact for a seed.
"""

from __future__ import annotations

import math
import random
import statistics

import pytest

from jitmagic.model.stats import FASTER, SAME, SLOWER, difference


def noisy(rng: random.Random, repeats: int, typical: float = 1.0) -> list[float]:
    """Timings of one job on a shared machine: jitter, and now and then a stall."""
    times = []
    for _ in range(repeats):
        t = typical * math.exp(rng.gauss(0.0, 0.12))
        if rng.random() < 0.1:
            t *= rng.uniform(1.5, 3.0)
        times.append(t)
    return times


def called_different(seed: int, repeats: int, effect: float, draws: int) -> float:
    rng = random.Random(seed)
    hits = sum(difference(noisy(rng, repeats, effect), noisy(rng, repeats)).significant
               for _ in range(draws))
    return hits / draws


@pytest.mark.parametrize("repeats", [3, 5, 9])
def test_same_distribution_is_no_measurable_difference_99_percent(repeats):
    assert called_different(seed=repeats, repeats=repeats, effect=1.0, draws=3000) <= 0.01


def test_ranges_apart_with_medians_2x_apart_always_differ():
    rng = random.Random(7)
    checked = 0
    for _ in range(3000):
        repeats = rng.choice([2, 3, 5, 9])
        slow, fast = noisy(rng, repeats, 2.0), noisy(rng, repeats)
        ratio = statistics.median(slow) / statistics.median(fast)
        if min(slow) > max(fast) and ratio >= 2:
            checked += 1
            assert difference(slow, fast).kind == FASTER
            assert difference(fast, slow).kind == SLOWER
    assert checked > 500  # the condition was met often enough to mean something


def test_more_repeats_resolve_a_smaller_real_difference():
    power = [called_different(seed=100 + r, repeats=r, effect=1.3, draws=1500) for r in (3, 9)]
    assert power[1] > 2 * power[0] and power[1] > 0.25


def test_one_huge_stall_does_not_hide_a_16x_effect():
    # The report of issue 12: flat trace against nested trace, in seconds.
    d = difference([1.88, 1.91, 4.57], [0.091, 0.12, 0.244])
    assert d.kind == FASTER and d.significant and d.enough_data
    assert d.ratio == pytest.approx(1.91 / 0.12)


def test_the_same_samples_both_sides_are_no_measurable_difference():
    samples = [1.88, 1.91, 4.57]
    d = difference(samples, list(samples))
    assert d.kind == SAME and d.ratio == 1 and not d.unresolved


def test_one_run_a_side_says_there_is_no_spread_and_still_decides():
    close, far = difference([1.0], [0.6]), difference([1.0], [0.2])
    assert not close.enough_data and close.kind == SAME
    assert not far.enough_data and far.kind == FASTER


def test_too_noisy_to_tell_suggests_repeats_that_would_resolve_it():
    before, after = [1.0, 1.3, 1.1], [0.8, 1.0, 0.95]
    d = difference(before, after)
    assert d.kind == SAME and d.unresolved
    assert d.repeats_to_resolve is not None and d.repeats_to_resolve > 3
    # The same spread, repeated that many times, is called a difference.
    n = d.repeats_to_resolve
    wider = difference((before * n)[:n], (after * n)[:n])
    assert wider.kind == FASTER


def test_nothing_measured_is_no_difference_and_no_ratio():
    d = difference([], [0.1, 0.2])
    assert d.kind == SAME and math.isnan(d.ratio) and not d.enough_data

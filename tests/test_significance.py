"""The one significance rule (jitmagic.model.stats.rule.difference), on simulated noise and
crafted samples.

Seeded draws from models of a shared machine (log-normal jitter, and a share of the runs
stalled): no timing, so the rates are exact for a seed. benchmarks/significance.py
measures the same rates with more draws (docs/significance.md).
"""

from __future__ import annotations

import math
import random
import statistics

import pytest

from jitmagic.model.stats.rule import (
    FASTER,
    INCONCLUSIVE,
    MAX_PAIRS,
    MIN_PAIRS,
    SAME,
    SLOWER,
    difference,
    shift_of_logs,
)

#: (jitter, stall rate, stall factors): the noise models of docs/significance.md.
MODELS = {
    "12% jitter, 10% stalls 1.5-3x": (0.12, 0.10, (1.5, 3.0)),
    "20% jitter, 5% stalls 1.3-4x": (0.20, 0.05, (1.3, 4.0)),
    "10% jitter, 10% stalls 1.3-4x": (0.10, 0.10, (1.3, 4.0)),
    "15% jitter, no stalls": (0.15, 0.0, (1.0, 1.0)),
}


def noisy(rng: random.Random, model: str, repeats: int, typical: float = 1.0) -> list[float]:
    """Timings of one job on a shared machine: jitter, and now and then a stall."""
    jitter, rate, stall = MODELS[model]
    times = []
    for _ in range(repeats):
        t = typical * math.exp(rng.gauss(0.0, jitter))
        times.append(t * rng.uniform(*stall) if rng.random() < rate else t)
    return times


def auto(flat: list[float], nested: list[float]) -> str:
    """What -r auto says: the first decision from MIN_PAIRS pairs on, else the last."""
    for n in range(MIN_PAIRS, MAX_PAIRS + 1):
        d = difference(flat[:n], nested[:n])
        if d.decided:
            break
    return d.kind


@pytest.mark.parametrize("model", MODELS)
def test_a_program_against_itself_is_called_different_at_most_1_percent_over_all_looks(model):
    rng = random.Random(sum(map(ord, model)))
    draws = 1500
    said = [auto(noisy(rng, model, MAX_PAIRS), noisy(rng, model, MAX_PAIRS))
            for _ in range(draws)]
    assert sum(k in (FASTER, SLOWER) for k in said) / draws <= 0.01


@pytest.mark.parametrize("model", [m for m in MODELS if not m.startswith("20%")])
def test_nine_pairs_find_1_5x_80_percent_and_2x_95_percent_of_the_time(model):
    rng = random.Random(len(model))
    for effect, power in ((1.5, 0.80), (2.0, 0.95)):
        found = sum(difference(noisy(rng, model, 9, effect), noisy(rng, model, 9)).kind
                    == FASTER for _ in range(400))
        assert found / 400 >= power, (effect, found)


def test_at_20_percent_jitter_nine_pairs_find_2x_but_1_5x_only_about_two_thirds():
    # The limit docs/significance.md states: the jitter alone is as wide as a 1.5× gap
    # (an oracle that knows the noise model finds it 83% of the time).
    rng = random.Random(20)
    model = "20% jitter, 5% stalls 1.3-4x"
    found = {e: sum(difference(noisy(rng, model, 9, e), noisy(rng, model, 9)).kind == FASTER
                    for _ in range(400)) / 400 for e in (1.5, 2.0)}
    assert found[2.0] >= 0.95 and 0.55 <= found[1.5] < 0.80


def test_decision_and_interval_agree():
    rng = random.Random(3)
    for _ in range(1000):
        model = rng.choice(list(MODELS))
        n = rng.choice([2, 3, 5, 9, 20])
        d = difference(noisy(rng, model, n, rng.choice([1.0, 1.5, 3.0])), noisy(rng, model, n))
        assert d.low <= d.ratio <= d.high
        assert (d.kind == FASTER) == (d.low > 1) and (d.kind == SLOWER) == (d.high < 1)
        if d.kind == SAME:
            assert d.low >= 1 / 1.1 and d.high <= 1.1
        assert d.decided == (d.kind != INCONCLUSIVE)
        # the gap the interval needs to leave 1 out is below the gap it called faster
        if d.kind == FASTER:
            assert 1 < d.noise < d.ratio


def test_runs_apart_by_1_5x_always_differ():
    rng = random.Random(7)
    checked = 0
    for _ in range(3000):
        repeats = rng.choice([3, 5, 9])
        slow, fast = noisy(rng, "12% jitter, 10% stalls 1.5-3x", repeats, 2.0), \
            noisy(rng, "12% jitter, 10% stalls 1.5-3x", repeats)
        if min(slow) > 1.5 * max(fast):
            checked += 1
            assert difference(slow, fast).kind == FASTER
            assert difference(fast, slow).kind == SLOWER
    assert checked > 500  # the condition was met often enough to mean something


def test_ranges_apart_with_medians_2x_apart_differ_from_5_runs_on():
    # At 3 runs a stall of up to 4× in two of them can do this by chance, so it is no
    # longer a difference on its own there (docs/significance.md); from 5 runs it is.
    rng = random.Random(8)
    checked = 0
    for _ in range(3000):
        slow, fast = noisy(rng, "12% jitter, 10% stalls 1.5-3x", 5, 2.0), \
            noisy(rng, "12% jitter, 10% stalls 1.5-3x", 5)
        if min(slow) > max(fast) and statistics.median(slow) >= 2 * statistics.median(fast):
            checked += 1
            assert difference(slow, fast).kind == FASTER
    assert checked > 500


def test_one_huge_stall_does_not_hide_a_16x_effect():
    # The report of issue 12: flat trace against nested trace, in seconds.
    d = difference([1.88, 1.91, 4.57], [0.091, 0.12, 0.244])
    assert d.kind == FASTER and d.significant and d.decided and d.enough_data
    assert d.ratio == pytest.approx(1.91 / 0.12)
    assert 1 < d.low < d.ratio < d.high


def test_an_undecided_1_9x_gap_is_inconclusive_with_an_interval():
    d = difference([4.0, 1.9, 4.3], [2.1, 2.2, 3.9])
    assert d.kind == INCONCLUSIVE and not d.decided and not d.significant and d.unresolved
    assert d.ratio == pytest.approx(4.0 / 2.2)
    assert d.low < 1 < d.ratio < d.high


def test_no_measurable_difference_needs_a_tight_interval():
    quiet = [1.0, 1.01, 0.99, 1.005, 0.995, 1.0, 1.002, 0.998, 1.001]
    d = difference(quiet, list(reversed(quiet)))
    assert d.kind == SAME and d.decided and 1 / 1.1 <= d.low <= 1 <= d.high <= 1.1
    # The same samples with a wide spread cannot tell a 10% gap from none.
    wide = [1.88, 1.91, 4.57]
    d = difference(wide, list(wide))
    assert d.kind == INCONCLUSIVE and d.ratio == 1 and d.low < 1 / 1.1


def test_zero_spread_decides_on_the_ratio_alone():
    assert difference([3e-3] * 3, [1e-3] * 3).kind == FASTER
    d = difference([2e-3] * 3, [2e-3] * 3)
    assert d.kind == SAME and d.low == d.high == 1


def test_one_run_a_side_has_no_spread_and_no_interval():
    for before in (1.0, 100.0):
        d = difference([before], [1.0])
        assert d.kind == INCONCLUSIVE and not d.enough_data and not d.decided
        assert math.isnan(d.low) and math.isnan(d.high)


def test_two_runs_a_side_decide_only_wide_gaps():
    assert difference([1.0, 1.05], [0.8, 0.85]).kind == INCONCLUSIVE
    assert difference([3.0, 3.1], [1.0, 1.1]).kind == FASTER


def test_more_than_nine_runs_use_the_rule_at_nine():
    rng = random.Random(11)
    model = "12% jitter, 10% stalls 1.5-3x"
    false = sum(difference(noisy(rng, model, 20), noisy(rng, model, 20)).significant
                for _ in range(600))
    found = sum(difference(noisy(rng, model, 20, 1.3), noisy(rng, model, 20)).kind == FASTER
                for _ in range(300))
    assert false <= 6 and found / 300 >= 0.8


def test_nothing_measured_is_inconclusive_and_no_ratio():
    d = difference([], [0.1, 0.2])
    assert d.kind == INCONCLUSIVE and math.isnan(d.ratio) and not d.enough_data
    assert math.isnan(d.low) and math.isnan(d.high)


def test_the_interval_is_centred_on_the_fastest_runs_and_holds_the_printed_ratio():
    # a stall (100 s) is set aside: the typical time of [1, 2, 4, 100] is 2 s
    assert math.exp(shift_of_logs([1.0, 2.0, 4.0, 100.0], [1.0, 1.0, 1.0, 1.0])) \
        == pytest.approx(2.0)
    # medians 3 s against 1 s, fastest runs' typical 2 s: the interval holds both
    d = difference([1.0, 2.0, 4.0, 100.0], [1.0, 1.0, 1.05, 0.95])
    assert d.ratio == pytest.approx(3.0) and d.low <= 2.0 < 3.0 <= d.high

"""Where a comparison's time goes, checked without timing anything: one cold run per
repeat, its stages read from JAX's own events inside that run, the parts adding up to
the first call, and a staged run only where JAX reports no events."""

from __future__ import annotations

import math
import sys
from typing import NamedTuple

import jax
import jax.numpy as jnp
import pytest

import jitmagic
from jitmagic.measure.sampling.monitor import LOWER_EVENT, TRACE_EVENT, Monitor
from jitmagic.measure.sampling.stages import first_call_run, steady_target
from jitmagic.model.rows import CONTENTION_KEYS, FROM_EVENTS, FROM_STAGED, VariantResult, cpu_key

BODIES = {"entry": 0}


class State(NamedTuple):
    w: jax.Array
    b: jax.Array


def dense(s: State, x):
    return jnp.tanh(x @ s.w + s.b)


def forward(s: State, x):
    BODIES["entry"] += 1  # runs once per trace of the entry, never per call
    for _ in range(4):
        x = dense(s, x)
    return x.sum()


def loss(s: State, x):
    return jax.grad(forward)(s, x).w.sum()


STATE = State(jnp.eye(3), jnp.zeros(3))


def test_stages_are_jax_events_inside_the_first_call_and_the_rest_closes_it():
    monitor = Monitor()
    monitor.durations.append((0.0, TRACE_EVENT, 99.0, "loss"))  # long before: not counted
    with monitor.listening():
        run = first_call_run(loss, (STATE, jnp.ones(3)), {}, monitor)
    assert run.stages_from == FROM_EVENTS and run.traced is None  # no second cold run
    events = {e: s for _, e, s, f in monitor.durations[1:] if f in ("loss", "jit(loss)")}
    assert run.times["trace_s"] == events[TRACE_EVENT]
    assert run.times["lower_s"] == events[LOWER_EVENT]
    stages = run.times["trace_s"] + run.times["lower_s"] + run.times["compile_s"]
    assert 0 < stages <= run.times["first_call_s"]


class _Deaf(Monitor):
    """A JAX that reports no stage events (an older release, another backend)."""

    def _on_duration(self, event, duration_secs, **kw):
        return None


def test_without_events_the_stages_come_from_a_staged_run_and_say_so():
    run = first_call_run(loss, (STATE, jnp.ones(3)), {}, _Deaf())
    assert run.stages_from == FROM_STAGED
    assert run.traced is not None and run.compiled is not None  # trace().lower().compile()
    timed = {"trace_s", "lower_s", "compile_s", "first_call_s"}
    assert set(run.times) - set(CONTENTION_KEYS) == timed | {cpu_key(k) for k in timed}


def test_a_comparison_without_events_says_its_stages_were_staged(monkeypatch):
    monkeypatch.setattr("jitmagic.measure.sampling.runner.Monitor", _Deaf)
    result = jitmagic.compare(forward, STATE, jnp.ones(3), repeat=2, number=2, progress=False)
    assert {v.stages_from for v in result.variants.values()} == {FROM_STAGED}
    staged = [w for w in result.warnings if "separate staged run" in w]
    assert [w.split(":")[0] for w in staged] == ["flat", "nested"]
    assert "rest_s" not in result.flat.first_call_parts()


def test_one_cold_run_per_repeat_and_no_cold_run_for_structure():
    BODIES["entry"] = 0
    result = jitmagic.compare(forward, STATE, jnp.ones(3), repeat=3, number=2, progress=False)
    # discovery, the nested variant's untimed check, and one trace per repeat and variant:
    # the structure counts come from the caches the first calls filled
    assert BODIES["entry"] == 1 + 1 + 3 * 2
    for v in result.variants.values():
        assert v.stages_from == FROM_EVENTS and v.jaxpr_eqns
        assert len(v.samples["first_call_s"]) == len(v.samples["trace_s"]) == 3
        parts = v.first_call_parts()
        assert math.isclose(sum(parts.values()), v.first_call_s)
    assert result.nested.helper_calls == {"dense": 4}


def _variant(stages_from, first=(1.0, 1.2, 0.9), trace=(0.5, 0.6, 0.4)):
    samples = {"trace_s": list(trace), "lower_s": [0.1] * 3, "compile_s": [0.2] * 3,
               "first_call_s": list(first), "execute_s": [1e-3] * 3}
    return VariantResult("flat", samples, execute_loops=10, stages_from=stages_from)


def test_the_parts_are_the_median_runs_and_add_up_to_the_median_first_call():
    parts = _variant(FROM_EVENTS).first_call_parts()  # the median run is the first one
    assert parts == pytest.approx({"trace_s": 0.5, "lower_s": 0.1, "compile_s": 0.2,
                                   "rest_s": 0.2})
    assert "rest_s" not in _variant(FROM_STAGED).first_call_parts()  # not parts of the call
    # the stages' own medians would add up to more than the median first call here
    odd = _variant(FROM_EVENTS, first=(0.40, 0.95, 0.9), trace=(0.05, 0.6, 0.5))
    assert sum(odd.first_call_parts().values()) == pytest.approx(odd.first_call_s)
    assert odd.first_call_parts()["trace_s"] == 0.5 and odd.first_call_parts()["rest_s"] > 0
    even = VariantResult("flat", {k: v[:2] for k, v in odd.samples.items()},
                         stages_from=FROM_EVENTS)
    assert sum(even.first_call_parts().values()) == pytest.approx(even.first_call_s)


def test_stages_inside_the_first_call_are_not_counted_twice_as_measured_time():
    events, staged = _variant(FROM_EVENTS), _variant(FROM_STAGED)
    c = jitmagic.model.comparison.Comparison("f", {"flat": events, "nested": staged}, None)
    assert c.measured_s() == pytest.approx((3.1 + 0.01 * 3) + (3.1 + 0.01 * 3 + 2.4))


@pytest.mark.parametrize(("first_call_s", "target"), [
    (0.001, 0.01), (0.5, 0.025), (1.0, 0.05), (30.0, 0.2)])
def test_a_steady_sample_takes_a_twentieth_of_its_first_call_within_bounds(first_call_s, target):
    assert steady_target(first_call_s) == pytest.approx(target)


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12+ adds one hooked trace for hits")
def test_lines_with_a_comparison_reuse_its_programs_and_trace_nothing_more():
    BODIES["entry"] = 0
    result = jitmagic.compare(forward, STATE, jnp.ones(3), repeat=3, number=2, lines=True,
                              progress=False)
    assert BODIES["entry"] == 1 + 1 + 3 * 2  # as without --lines
    flat = result.lines.tables["flat"]
    assert sum(row.eqns_own for row in flat.rows) == result.flat.jaxpr_eqns


def test_advice_takes_one_cold_run_per_repeat_too():
    BODIES["entry"] = 0
    result = jitmagic.compare(forward, STATE, jnp.ones(3), repeat=3, number=2, advise=True,
                              progress=False)
    assert [c.helper for c in result.advice.ranked] == ["dense"]
    # the comparison's 8 (as above), the attribution's trace, and per repeat one cold run
    # of the advice's flat row and of its one candidate: a staged run would trace twice
    assert BODIES["entry"] == 8 + 1 + 3 * 2

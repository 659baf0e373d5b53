"""Verdict words on hand-built records: the first call leads, the stages explain it,
and a difference the repeats cannot resolve is never called one."""

from __future__ import annotations

import json

import pytest
from support import comparison

from jitmagic.model.comparison import Comparison
from jitmagic.model.orderings import OrderingRow, Orderings
from jitmagic.render.comparison import text_table, verdict
from jitmagic.render.orderings import verdict as ordering_verdict

ISSUE_FLAT_TRACE = [1.88, 1.91, 4.57]
ISSUE_NESTED_TRACE = [0.091, 0.12, 0.244]


def report(flat_first: list[float], nested_first: list[float],
           flat_trace: list[float] | None = None,
           nested_trace: list[float] | None = None) -> Comparison:
    """Made-up runs: their first calls as given, tracing 30% of each (unless given), and
    every other stage 0.1 s; only what is passed varies."""
    return comparison(
        {"first_call_s": flat_first, "trace_s": flat_trace or [0.3 * t for t in flat_first]},
        {"first_call_s": nested_first,
         "trace_s": nested_trace or [0.3 * t for t in nested_first]}, every=0.1)


def test_the_issue_report_flags_its_trace_difference_as_significant():
    c = report([2.3, 2.4, 5.0], [0.4, 0.45, 0.6], flat_trace=ISSUE_FLAT_TRACE,
               nested_trace=ISSUE_NESTED_TRACE)
    assert c.significant("trace_s") is True
    trace_row = next(ln for ln in text_table(c).splitlines() if ln.startswith("trace"))
    assert "15.9×" in trace_row and "not significant" not in trace_row
    assert "by stage: trace 15.9× faster" in verdict(c)


def test_a_faster_first_call_leads_the_verdict():
    c = report([2.3, 2.4, 2.5], [0.4, 0.45, 0.5])
    v = c.verdict
    assert v.kind == "faster" and v.to_dict()["first_call"] == "faster"
    assert verdict(c).startswith("Nested jit on `layer` makes the first call 5.33× faster "
                                 "(2.4 s flat, 450 ms nested)")


def test_a_slower_first_call_is_said_even_when_tracing_got_faster():
    c = report([0.30, 0.31, 0.32], [0.60, 0.62, 0.65],
               flat_trace=[0.2, 0.21, 0.22], nested_trace=[0.05, 0.05, 0.06])
    text = verdict(c)
    assert c.verdict.kind == "slower"
    assert "makes the first call 2× slower" in text and "trace 4.2× faster" in text


def test_same_runs_both_sides_are_no_measurable_difference_whatever_the_medians():
    runs = [0.5, 0.52, 0.9]
    c = report(runs, list(runs))
    assert c.significant("first_call_s") is False
    assert "no measurable difference in the first call" in verdict(c)
    # Medians 20% apart inside a wide spread are not called a difference either:
    # the text says the machine was too noisy and how many runs would tell.
    noisy = report([0.5, 0.6, 0.9], [0.45, 0.5, 0.8])
    text = verdict(noisy)
    assert noisy.verdict.kind == "no measurable difference"
    assert "no measurable difference in the first call" in text
    assert "too noisy" in text and "-r " in text


def test_one_run_each_says_there_is_no_spread():
    c = report([1.0], [0.9])
    assert c.verdict.kind == "no measurable difference"
    assert "From one run each there is no spread" in verdict(c)


def test_the_verdict_is_in_the_saved_report_and_derived_again_on_load():
    c = report([2.3, 2.4, 2.5], [0.4, 0.45, 0.5])
    d = json.loads(json.dumps(c.to_dict()))
    assert d["verdict"] == {"first_call": "faster", "ratio": pytest.approx(2.4 / 0.45),
                            "text": verdict(c)}
    d["verdict"] = {"first_call": "slower", "ratio": 0.1, "text": "edited"}
    again = Comparison.from_dict(d)
    assert again.verdict.kind == "faster" and again.to_dict() == c.to_dict()
    d["verdict"] = "not a verdict at all"  # never read, so never refused
    assert Comparison.from_dict(d).verdict.text == verdict(c)


def orderings(fast: list[float], slow: list[float]) -> Orderings:
    rows = {name: OrderingRow(name, {"first_call_s": [0.1] * len(xs), "execute_s": xs},
                              same_program=True)
            for name, xs in (("jit(vmap(f))", fast), ("vmap(jit(f))", slow))}
    return Orderings("f", 8, 0, True, rows)


@pytest.mark.parametrize(("chosen", "kind", "words"), [
    ("jit(vmap(f))", "faster", "jit(vmap(f)) is 2× faster per call than vmap(jit(f))"),
    ("vmap(jit(f))", "slower", "vmap(jit(f)) is 2× slower per call than jit(vmap(f))"),
])
def test_orderings_verdict_per_call(chosen, kind, words):
    o = orderings([1e-4, 1.1e-4, 1.05e-4], [2e-4, 2.1e-4, 2.2e-4])
    assert o.verdict(chosen).kind == kind
    assert ordering_verdict(o, chosen).startswith(words)
    assert "Python dispatch" in ordering_verdict(o, chosen)
    saved = o.to_dict()["verdict"]
    assert saved["per_call"] == "faster" and saved["ordering"] == "jit(vmap(f))"


def test_orderings_within_the_noise_are_no_measurable_difference():
    o = orderings([1e-4, 1.3e-4, 2.5e-4], [1.1e-4, 1.2e-4, 2.4e-4])
    text = ordering_verdict(o)
    assert o.verdict().kind == "no measurable difference"
    assert text.startswith("jit(vmap(f)) and vmap(jit(f)): no measurable difference per call")
    assert "Python dispatch" not in text

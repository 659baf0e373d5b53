"""Verdict words on hand-built records: the first call leads, the stages explain it,
every ratio carries its interval, and a gap the runs cannot resolve is inconclusive,
never "no measurable difference"."""

from __future__ import annotations

import dataclasses
import json

import pytest
from support import comparison, variant

from jitmagic.model.comparison import Comparison
from jitmagic.model.orderings import Orderings
from jitmagic.model.rows import OrderingRow
from jitmagic.model.stats.rule import difference
from jitmagic.model.stats.units import ratio_figures
from jitmagic.model.stats.verdicts import BUDGET, MOST_ROUNDS
from jitmagic.render.comparison import text_table, verdict
from jitmagic.render.orderings import verdict as ordering_verdict
from jitmagic.render.verdicts import with_interval

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
                                 "(3.07×–9.38×; 2.4 s flat, 450 ms nested, 3 runs)")
    assert v.headline == "Nested jit on `layer`: first call 5.33× faster (3.07×–9.38×), 3 runs"
    assert repr(c) == "<Comparison model: nested 5.33× faster first call (3.07×–9.38×), 3 runs>"


def test_a_slower_first_call_is_said_even_when_tracing_got_faster():
    c = report([0.30, 0.31, 0.32], [0.60, 0.62, 0.65],
               flat_trace=[0.2, 0.21, 0.22], nested_trace=[0.05, 0.05, 0.06])
    text = verdict(c)
    assert c.verdict.kind == "slower"
    assert "makes the first call 2.00× slower" in text and "trace 4.20× faster" in text


def test_tight_runs_both_sides_are_no_measurable_difference():
    runs = [0.5, 0.501, 0.502, 0.499, 0.5]
    c = report(runs, list(reversed(runs)))
    assert c.significant("first_call_s") is False and c.verdict.kind == "no measurable difference"
    assert verdict(c).startswith("Nested jit on `layer`: no measurable difference in the "
                                 "first call (0.99×–1.01×; ")
    assert c.verdict.headline.endswith("no measurable difference in the first call "
                                       "(0.99×–1.01×), 5 runs")


def test_an_undecided_gap_is_inconclusive_with_its_interval_and_why():
    c = report([4.0, 1.9, 4.3], [2.1, 2.2, 3.9])
    v = c.verdict
    assert v.kind == "inconclusive" and not v.difference.decided
    assert "no measurable difference in the first call" not in v.text
    assert v.text.startswith("Nested jit on `layer`: inconclusive, the first call 1.82× faster "
                             "(0.32×–3.07×; 4 s flat, 2.2 s nested) after 3 runs; -r auto or a "
                             "larger -r (say -r 9) may tell.")
    assert repr(c) == "<Comparison model: inconclusive, nested 1.82× faster first call " \
                      "(0.32×–3.07×), 3 runs>"
    budget = dataclasses.replace(c, repeats_ended=BUDGET).verdict.headline
    assert budget == ("Nested jit on `layer`: inconclusive, first call 1.82× faster (0.32×–3.07×) "
                      "after 3 runs; the time budget ran out")
    most = dataclasses.replace(c, repeats_ended=MOST_ROUNDS).verdict.headline
    assert most.endswith("; 9 runs is the most -r auto takes")
    # in full, what one more run would cost: the medians 4 s + 2.2 s of cold first calls
    assert ("the time budget ran out (each further run takes at least 6.2 s of wall time, "
            "flat and nested: a larger --budget") in dataclasses.replace(
                c, repeats_ended=BUDGET).verdict.text
    assert "each further run" not in v.text
    saved = v.to_dict()
    assert saved["ratio_low"] == pytest.approx(1.9 / 3.9 / 1.5)
    assert saved["ratio_high"] == pytest.approx(4.3 / 2.1 * 1.5)


def test_the_same_runs_with_a_wide_spread_are_inconclusive_not_the_same():
    runs = [0.5, 0.52, 0.9]
    c = report(runs, list(runs))
    assert c.significant("first_call_s") is False and c.verdict.kind == "inconclusive"
    assert "inconclusive, the first call 1.00× (" in verdict(c)


def test_a_ratio_that_rounds_to_one_has_no_side_and_its_interval_is_not_turned():
    # just under 1 (0.997): "1.00×" with the table's own interval, not its reciprocal
    d = difference([0.100, 0.090, 0.120], [0.1003, 0.095, 0.110])
    assert d.ratio < 1 and not d.significant
    said = f"1.00× ({ratio_figures(d.low)}×–{ratio_figures(d.high)}×)"
    assert with_interval(d) == said
    c = report([0.100, 0.090, 0.120], [0.1003, 0.095, 0.110])
    assert f"first call {said} after 3 runs" in c.verdict.headline
    assert "slower" not in c.verdict.headline and "faster" not in c.verdict.headline


def test_every_headline_is_one_line():
    for flat, nested in (([2.3, 2.4, 2.5], [0.4, 0.45, 0.5]), ([4.0, 1.9, 4.3], [2.1, 2.2, 3.9]),
                         ([1.0], [0.9]), ([0.5] * 3, [0.5] * 3)):
        headline = report(flat, nested).verdict.headline
        assert "\n" not in headline and headline.startswith("Nested jit on `layer`")


def test_one_run_each_says_there_is_no_spread():
    c = report([1.0], [0.9])
    assert c.verdict.kind == "inconclusive"
    assert "one run a side has no spread to judge by" in verdict(c)
    d = json.loads(json.dumps(c.to_dict()))["verdict"]
    assert d["ratio_low"] is None and d["ratio_high"] is None


def test_the_verdict_is_in_the_saved_report_and_derived_again_on_load():
    c = report([2.3, 2.4, 2.5], [0.4, 0.45, 0.5])
    d = json.loads(json.dumps(c.to_dict()))
    assert d["verdict"] == {"first_call": "faster", "ratio": pytest.approx(2.4 / 0.45),
                            "ratio_low": pytest.approx(c.verdict.difference.low),
                            "ratio_high": pytest.approx(c.verdict.difference.high),
                            "clock": "wall"}  # its clock said; facts, not its sentence
    assert 1 < d["verdict"]["ratio_low"] < d["verdict"]["ratio"] < d["verdict"]["ratio_high"]
    # an earlier report saved the verdict's sentence too: still read (and never believed)
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
    ("jit(vmap(f))", "faster", "jit(vmap(f)) is 2.00× faster per call than vmap(jit(f))"),
    ("vmap(jit(f))", "slower", "vmap(jit(f)) is 2.00× slower per call than jit(vmap(f))"),
])
def test_orderings_verdict_per_call(chosen, kind, words):
    o = orderings([1e-4, 1.1e-4, 1.05e-4], [2e-4, 2.1e-4, 2.2e-4])
    assert o.verdict(chosen).kind == kind
    assert ordering_verdict(o, chosen).startswith(words + " (1.21×–3.30×; ")
    assert "Python dispatch" in ordering_verdict(o, chosen)
    saved = o.to_dict()["verdict"]
    assert saved["per_call"] == "faster" and saved["ordering"] == "jit(vmap(f))"
    assert 1 < saved["ratio_low"] < saved["ratio"] < saved["ratio_high"]
    assert "\n" not in o.verdict(chosen).headline


def test_orderings_within_the_noise_are_inconclusive():
    o = orderings([1e-4, 1.3e-4, 2.5e-4], [1.1e-4, 1.2e-4, 2.4e-4])
    text = ordering_verdict(o)
    assert o.verdict().kind == "inconclusive"
    assert text.startswith("jit(vmap(f)) against vmap(jit(f)): inconclusive, 1.08× slower per "
                           "call (0.28×–3.41×; 130 µs against 120 µs) after 3 runs;")
    assert "Python dispatch" not in text
    assert o.verdict().headline == ("jit(vmap(f)) against vmap(jit(f)): inconclusive, 1.08× "
                                    "slower per call (0.28×–3.41×) after 3 runs; -r auto or a "
                                    "larger -r (say -r 9) may tell")


def test_orderings_with_the_same_times_are_no_measurable_difference():
    o = orderings([1e-4] * 3, [1e-4] * 3)
    assert o.verdict().kind == "no measurable difference"
    assert ordering_verdict(o).startswith("jit(vmap(f)) and vmap(jit(f)): no measurable "
                                          "difference per call (1.00×–1.00×; ")


def test_a_nesting_that_changed_the_program_is_never_called_the_same_program():
    flat = {"jaxpr_eqns": 89, "nested_calls": 0}
    nested = {"helpers": (), "inline": ("block",), "jaxpr_eqns": 36, "nested_calls": 5,
              "noted": ("`block` stays inline: no call of it went through a jit",)}
    c = comparison(variant("flat", every=0.1, **flat), variant("nested", every=0.1, **nested))
    assert verdict(c) == ("A helper of yours was found but no jit call of it was recognised "
                          "in the nested program (see the notes), though nesting changed that "
                          "program: 36 jaxpr equations against 89, 5 jit calls against 0.")
    same = comparison(variant("flat", every=0.1, **flat),
                      variant("nested", every=0.1, **{**nested, **flat}))
    assert verdict(same).endswith("so both variants are the same program.")


def test_auto_that_ended_between_the_quiet_and_busy_most_says_the_machine_grew_quiet():
    # 11 runs: past the quiet 9 (the machine was busy a while), short of the busy 18
    flat, nested = [4.0, 1.9, 4.3, 3.1] * 3, [2.1, 2.2, 3.9, 3.5] * 3
    c = dataclasses.replace(report(flat[:11], nested[:11]), repeats_ended=MOST_ROUNDS)
    said = c.verdict.headline
    assert "after 11 runs" in said and "18 runs is the most" not in said
    assert said.endswith("-r auto takes up to 18 runs only while the machine is busy, and it "
                         "was quiet again after 11")


def test_a_wait_share_just_under_the_busy_threshold_is_not_rounded_onto_it():
    from jitmagic.render.verdicts import waited

    assert waited(0.096) == "waited for a CPU 9.6% of the time they were ready to run"
    assert waited(0.104) == "waited for a CPU 10.4% of the time they were ready to run"
    assert waited(0.61) == "waited for a CPU 61% of the time they were ready to run"


def test_a_tables_interval_shows_which_side_of_one_its_ends_lie():
    # a decided ratio beside "(0.78×–1.00×)" read as an interval that holds 1
    from types import SimpleNamespace

    from jitmagic.render.diff import interval as diff_interval
    from jitmagic.render.verdicts import interval_ends

    assert interval_ends(0.78, 0.9972) == "0.78×–0.997×"
    assert interval_ends(1.0004, 1.31) == "1.0004×–1.31×"
    assert interval_ends(0.78, 1.31) == "0.78×–1.31×"
    assert diff_interval(SimpleNamespace(low=0.78, high=0.9972)) == "0.78×–0.997×"


def test_each_of_the_rules_four_outcomes_has_one_word_on_each_clock():
    from jitmagic.model.stats.witness import CPU
    from jitmagic.render.verdicts import say

    faster = difference([2.0, 2.1, 2.05], [1.0, 1.02, 1.01])
    slower = difference([1.0, 1.02, 1.01], [2.0, 2.1, 2.05])
    runs = [0.5, 0.501, 0.502, 0.499, 0.5]
    same = difference(runs, list(reversed(runs)))
    unsure = difference([4.0, 1.9, 4.3], [2.1, 2.2, 3.9])
    assert [d.kind for d in (faster, slower, same, unsure)] == [
        "faster", "slower", "no measurable difference", "inconclusive"]
    assert [say(d) for d in (faster, slower, same, unsure)] == [
        "2.03× faster", "2.03× slower", "no measurable difference", "inconclusive"]
    assert [say(d, CPU) for d in (faster, slower, same, unsure)] == [
        "2.03× less CPU time", "2.03× more CPU time", "no measurable difference in CPU time",
        "inconclusive"]


def test_the_report_says_each_outcome_in_its_one_word():
    """An undecided stage was "undecided" in the verdict and "inconclusive" in the table;
    a stage with no difference "same" in the table: each outcome now has one word."""
    tight = [0.1, 0.1001, 0.0999, 0.1, 0.1002]
    c = comparison({"first_call_s": [2.0, 2.1, 2.05, 2.0, 2.1], "trace_s": list(tight),
                    "compile_s": [0.4, 0.1, 0.5, 0.2, 0.45],
                    "lower_s": [0.5, 0.51, 0.5, 0.52, 0.5]},
                   {"first_call_s": [1.0, 1.02, 1.01, 1.0, 1.02], "trace_s": tight[::-1],
                    "compile_s": [0.2, 0.45, 0.1, 0.5, 0.3], "lower_s": [0.1] * 5}, every=0.1)
    assert c.difference("trace_s").kind == "no measurable difference"
    assert c.difference("compile_s").kind == "inconclusive"
    full = c.report(verbose=True)
    assert "XLA compile: inconclusive" in c.verdict.text and "undecided" not in full
    (trace,) = [ln for ln in full.splitlines() if ln.startswith("trace ")]
    assert trace.endswith(" no measurable difference") and not trace.endswith(" same")

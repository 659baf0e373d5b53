"""A report against a baseline: jitmagic.diff, its rendering, and `python -m jitmagic diff`
(crafted reports only: nothing is measured here)."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import comparison

import jitmagic
from jitmagic import Diff
from jitmagic.cell.provenance import with_baseline
from jitmagic.frontends.command import main
from jitmagic.model import diff as diffmod
from jitmagic.model.reports.storage import save
from jitmagic.model.rows import PHASES, VariantResult
from jitmagic.model.sweep import Sweep
from jitmagic.render.diff import text

ENV = {"jax": "0.10.2", "jaxlib": "0.10.2", "platform": "Linux-x86_64", "devices": ["cpu"],
       "jitmagic": "0.3.0.dev0"}


def full(d: Diff) -> str:
    """The diff in full, every row (``-v``): what these tests read."""
    return text(d, verbose=True)


def report(scale: float = 1.0, nested_scale: float | None = None, **fields):
    """A comparison whose every phase takes ``scale`` × a fixed, tight set of runs."""
    def samples(k: float) -> dict[str, list[float]]:
        return {p: [k * 0.010, k * 0.0101, k * 0.0102] for p in PHASES}
    fields.setdefault("env", dict(ENV))
    return comparison(samples(scale), samples(nested_scale or scale * 0.5), **fields)


#: A model's structure as jitmagic measures it: 16 calls of a helper, inlined (flat) or
#: nested (one body plus 16 jit calls), and the helper made twice as big.
STRUCTURE = {"flat": dict(jaxpr_eqns=3088, stablehlo_bytes=412_330, nested_calls=0,
                          stablehlo_calls=0, compiled_calls=0),
             "nested": dict(jaxpr_eqns=212, stablehlo_bytes=28_114, nested_calls=16,
                            stablehlo_calls=16, compiled_calls=0)}
DOUBLED = {"flat": dict(STRUCTURE["flat"], jaxpr_eqns=6160, stablehlo_bytes=822_596),
           "nested": dict(STRUCTURE["nested"], jaxpr_eqns=404, stablehlo_bytes=52_330)}


def shaped(structure=None, scale: float = 1.0, **fields):
    """:func:`report` (every phase ``scale`` × the same tight runs) with each variant's
    structure figures those of :data:`STRUCTURE` but where ``structure`` gives others."""
    base = report(scale, **fields)
    figures = {v: {**STRUCTURE[v], **(structure or {}).get(v, {})} for v in STRUCTURE}
    variants = {name: VariantResult(**{**{f.name: getattr(v, f.name)
                                for f in dataclasses.fields(VariantResult)},
                             **figures[name]})
                for name, v in base.variants.items()}
    return dataclasses.replace(base, variants=variants)


@pytest.fixture
def paths(tmp_path):
    """(write, tmp_path): ``write(name, record)`` saves a report and returns its path."""
    def write(name: str, record) -> str:
        path = tmp_path / name
        save(record, path)
        return str(path)
    return write


def test_the_same_report_is_never_called_slower_or_faster():
    d = jitmagic.diff(report(), report())
    assert isinstance(d, Diff) and len(d.stages) == 10
    # three runs a side cannot show the interval inside 0.9–1.1: inconclusive, not "same"
    assert all(s.kind == "inconclusive" and not s.significant for s in d.stages)
    assert d.regressions() == [] and d.warnings == ()
    # the very same runs: said as such, not as a finding about speed
    assert d.same_runs and repr(d) == ("<Diff model: the two reports hold the same runs (a "
                                       "report against itself, or a copy)>")
    assert "no measurable difference" not in full(d)
    other = jitmagic.diff(report(), report(1.001))
    assert not other.same_runs
    assert repr(other) == ("<Diff model: no stage measurably slower or faster (some "
                           "inconclusive)>")


def test_a_slower_new_is_said_as_new_over_old():
    d = jitmagic.diff(report(1.0), report(2.0))
    s = d.stage("flat", "compile_s")
    assert s.new_over_old == pytest.approx(2.0) and s.kind == "slower" and s.significant
    text = full(d)
    assert "NEW is" in text and "2.00× slower" in text and "above 1, NEW is slower" in text
    assert [r.phase for r in d.regressions(1.2) if r.variant == "flat"] == list(PHASES)
    assert d.regressions(2.5) == []  # slower, but not by 2.5×
    assert repr(d) == "<Diff model: 10 stages slower>"


def test_a_faster_new_is_no_regression():
    d = jitmagic.diff(report(2.0), report(1.0))
    s = d.stage("nested", "trace_s")
    assert s.kind == "faster" and s.new_over_old == pytest.approx(0.5)
    assert "2.00× faster" in full(d) and d.regressions() == []


def test_a_phase_measured_in_one_report_only_shows_a_dash():
    old = report()
    new = dataclasses.replace(report(), variants={
        **report().variants, "nested": dataclasses.replace(report().nested, samples={})})
    s = jitmagic.diff(old, new).stage("nested", "compile_s")
    assert not s.measured and not s.significant
    assert "not measured in both" in full(jitmagic.diff(old, new))


def test_another_machine_or_jax_compares_with_a_warning_naming_what_differs():
    new = report(env={**ENV, "jax": "0.10.3", "platform": "Darwin-arm64",
                      "jitmagic": "0.4.0"})
    (warning,) = jitmagic.diff(report(), new).warnings
    assert "jax 0.10.2 → 0.10.3" in warning and "platform Linux-x86_64 → Darwin-arm64" in warning
    assert "jitmagic" not in warning  # a newer jitmagic is expected, not a different machine
    assert "warning: the reports were measured in different environments" in \
        full(jitmagic.diff(report(), new))
    # what one run measured is no environment: the CPU clock's step, a fresh sample's cost
    ran = {**ENV, "cpu_tick_s": 1.554e-06, "cold_samples": {"where": "fresh", "sample_s": 21.4}}
    again = {**ran, "cpu_tick_s": 1.873e-06, "cold_samples": {"where": "fresh", "sample_s": 22.6}}
    assert jitmagic.diff(report(env=ran), report(env=again)).warnings == ()
    here = {**again, "cold_samples": {"where": "session"}}
    (warning,) = jitmagic.diff(report(env=ran), report(env=here)).warnings
    assert "(cold samples each in a fresh process → in a process that had compiled before): " \
        "a difference may come from where the samples were taken, not the code" in warning


def test_a_diff_shows_itself_in_html_escaped():
    d = jitmagic.diff(report(entry="f<x>"), report(2.0, entry="f<x>"))
    bundle = d._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert "f&lt;x&gt;" in bundle["text/html"] and "<table" in bundle["text/html"]
    assert d._repr_mimebundle_(include=["text/plain"]).keys() == {"text/plain"}
    assert json.dumps(d.to_dict())  # null, not NaN, where nothing was measured


def test_the_interval_of_the_newer_rule_is_turned_round(monkeypatch):
    """The rule that gives ``low``/``high`` (OLD/NEW) and ``inconclusive`` reads right."""
    @dataclasses.dataclass(frozen=True)
    class Newer:
        kind: str
        ratio: float
        low: float
        high: float
        significant: bool = True
        runs: int = 3

    monkeypatch.setattr(diffmod, "difference",
                        lambda before, after: Newer("slower", 0.5, 0.4, 0.625))
    s = jitmagic.diff(report(), report()).stage("flat", "trace_s")
    assert (s.new_over_old, s.low, s.high) == pytest.approx((2.0, 1.6, 2.5))
    assert "1.60×–2.50×" in full(jitmagic.diff(report(), report()))
    monkeypatch.setattr(diffmod, "difference",
                        lambda before, after: Newer("inconclusive", 0.8, 0.5, 1.2, False))
    d = jitmagic.diff(report(), report())
    assert not d.stage("flat", "trace_s").significant and d.regressions() == []
    assert "inconclusive" in full(d)


def test_paths_are_read_and_a_sweep_is_refused(paths):
    old, new = paths("old.json", report()), paths("new.json", report(2.0))
    assert jitmagic.diff(old, new).stage("flat", "trace_s").kind == "slower"
    sweep = paths("s.json", Sweep("n", (1,), (report(),), 1.0))
    with pytest.raises(jitmagic.ReportSchemaError,
                       match=r"give two comparisons. reports \(of a sweep, two of its points "
                             r"in Python: jitmagic.diff\(sweep.points\[0\], sweep.points\[1\]\)\)"):
        jitmagic.diff(sweep, new)


# --- python -m jitmagic diff ---------------------------------------------------------


def test_the_command_prints_the_diff_and_exits_0(paths, capsys):
    old, new = paths("old.json", report()), paths("new.json", report(2.0))
    assert main(["diff", old, new]) == 0
    assert "jitcompare diff: model (NEW) against model (OLD)" in capsys.readouterr().out


def test_the_command_shows_the_verdict_first_and_every_row_with_v(paths, capsys):
    old, new = paths("old.json", report()), paths("new.json", report(2.0))
    assert main(["diff", old, new]) == 0
    short = capsys.readouterr().out.splitlines()
    assert short[1].startswith("against the baseline: NEW slower in flat trace 2.00×")
    assert short[-1] == "(-v shows every stage's and figure's row, NEW against OLD)"
    assert len(short) <= 5 and not any(x.startswith("variant  phase") for x in short)
    assert main(["diff", old, new, "--verbose"]) == 0
    full_ = capsys.readouterr().out.splitlines()
    assert full_[:2] == short[:2] and any(x.startswith("variant  phase") for x in full_)
    assert not any(x.startswith("(-v shows") for x in full_)


def test_the_command_fails_on_a_slower_stage(paths, capsys):
    # three runs a side: the rule calls a gap the runs themselves show (a 1.5× one with
    # 1% jitter stays inconclusive at 3 runs: docs/significance.md)
    old, new = paths("old.json", report()), paths("new.json", report(2.5))
    assert main(["diff", old, new, "--fail-on-slower"]) == 1
    assert "regression: flat XLA compile: NEW 2.50× slower" in capsys.readouterr().err
    assert main(["diff", old, new, "--fail-on-slower", "3"]) == 0
    assert main(["diff", new, old, "--fail-on-slower"]) == 0  # NEW faster
    assert main(["diff", old, old, "--fail-on-slower=1.1"]) == 0
    assert main(["diff", "--fail-on-slower", old, new]) == 1  # a path is no ratio


@pytest.mark.parametrize("content", ["not json", '{"schema": "other/1"}', "[1, 2]"])
def test_the_command_exits_2_on_what_is_not_a_report(tmp_path, paths, capsys, content):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    good = paths("good.json", report())
    assert main(["diff", str(bad), good]) == 2
    assert main(["diff", good, str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and "no report at" in err and "Traceback" not in err


def test_the_command_exits_2_on_bad_usage(paths, capsys):
    good = paths("good.json", report())
    for argv in (["diff", good], ["diff", good, good, "--fail-on-slower", "0.5"],
                 ["diff", good, good, "--fail-on-slower", "x"],
                 ["diff", good, good, "--fail-on-larger"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
    assert "--fail-on-slower takes a ratio, a finite number of at least 1" in \
        capsys.readouterr().err


@pytest.mark.parametrize("option", ["--fail-on-slower", "--fail-on-larger"])
@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "-inf", "0.5", "twice"])
def test_a_gate_refuses_a_ratio_that_fails_on_everything_or_nothing(paths, capsys, option,
                                                                    value):
    good = paths("good.json", shaped())
    for argv in (["diff", good, good, option, value], ["diff", good, good, f"{option}={value}"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert f"{option} takes a ratio, a finite number of at least 1" in err
        assert f"not {value!r}: write, for example, {option}=1.3" in err


def test_gate_ratio_reads_what_a_gate_can_use():
    assert diffmod.gate_ratio("1.3", "--x") == 1.3 and diffmod.gate_ratio("1", "--x") == 1.0
    for bad in ("0", "-2", "nan", "inf", "", "1.3x"):
        with pytest.raises(ValueError, match="--x takes a ratio"):
            diffmod.gate_ratio(bad, "--x")


def test_not_measured_is_nan_not_zero():
    assert math.isnan(jitmagic.diff(comparison({}, {}), comparison({}, {})).stages[0].low)


def test_reports_of_another_entry_are_refused_unless_forced(paths, capsys):
    old, other = report(), dataclasses.replace(report(), entry="other")
    with pytest.raises(jitmagic.model.saved.schema.ReportSchemaError, match="--force"):
        jitmagic.diff(old, other)
    forced = jitmagic.diff(old, other, force=True)
    assert any("OLD measured `model`, NEW `other`" in w for w in forced.warnings)
    a, b = paths("old.json", old), paths("other.json", other)
    assert main(["diff", a, b]) == 2 and "--force" in capsys.readouterr().err
    assert main(["diff", a, b, "--force"]) == 0


# --- structure: exact figures beside the timings ------------------------------------


def test_structure_rows_are_exact_beside_the_timing_rows():
    d = jitmagic.diff(shaped(), shaped(DOUBLED))
    eqns = d.figure("flat", "jaxpr_eqns")
    assert (eqns.old, eqns.new, eqns.kind) == (3088, 6160, "larger")
    assert eqns.new_over_old == pytest.approx(6160 / 3088)
    assert d.figure("nested", "stablehlo_bytes").kind == "larger"
    assert d.figure("nested", "nested_calls").kind == "same"
    assert [(f.variant, f.figure) for f in d.structure] == [
        (v, k) for v in ("flat", "nested") for k in ("jaxpr_eqns", "nested_calls",
                                                       "stablehlo_bytes", "stablehlo_calls",
                                                       "compiled_calls")]
    # the same runs on both sides: the timings say nothing, the structure says what grew
    assert d.regressions(1.0) == [] and all(s.kind == "inconclusive" for s in d.stages)
    assert repr(d).endswith("; 4 figures larger>")
    back = jitmagic.diff(shaped(DOUBLED), shaped())
    assert back.figure("flat", "jaxpr_eqns").kind == "smaller" and back.larger(1.0) == []
    assert repr(back).endswith("; 4 figures smaller>")
    same = jitmagic.diff(shaped(), shaped())
    assert {f.kind for f in same.structure} == {"same"} and same.larger(1.0) == []
    saved = json.loads(json.dumps(d.to_dict()))["structure"][0]
    assert saved == {"variant": "flat", "figure": "jaxpr_eqns", "old": 3088, "new": 6160,
                     "new_over_old": pytest.approx(1.99482, abs=1e-5), "kind": "larger",
                     "not_judged": None}


def test_the_text_shows_the_structure_in_a_table_of_its_own():
    lines = full(jitmagic.diff(shaped(), shaped(DOUBLED))).splitlines()
    assert lines[2] == ("structure: NEW larger in flat jaxpr equations 3,088 → 6,160 (1.99×), "
                        "flat StableHLO bytes 412,330 → 822,596 (1.99×), nested jaxpr "
                        "equations 212 → 404 (1.91×), nested StableHLO bytes 28,114 → 52,330 "
                        "(1.86×)")
    timing = lines.index(next(x for x in lines if x.startswith("variant  phase")))
    shape = lines.index(next(x for x in lines if x.startswith("variant  figure")))
    assert timing < shape and lines[shape - 1].startswith("program structure, NEW against OLD")
    assert lines[shape + 1].split() == ["flat", "jaxpr", "equations", "3,088", "6,160",
                                        "1.99×", "larger"]
    assert lines[shape + 2].split() == ["flat", "nested", "jit", "calls", "0", "0", "1.00×",
                                        "same"]
    assert "structure: every figure the same" in full(jitmagic.diff(shaped(), shaped()))
    # a report without structure (hand-made, or before it was recorded) shows no table
    assert "program structure" not in full(jitmagic.diff(report(), report()))


def test_the_html_shows_the_structure_table_escaped_beside_the_timings():
    page = jitmagic.diff(shaped(), shaped(DOUBLED))._repr_mimebundle_()["text/html"]
    assert page.count("<table") == 2
    assert "<th>figure</th><th>OLD</th><th>NEW</th>" in page
    assert "<td>jaxpr equations</td><td>3,088</td><td>6,160</td><td>1.99×</td>" in page
    assert page.index("<th>phase</th>") < page.index("<th>figure</th>")


def test_baseline_shows_the_structure_under_the_verdict():
    shown = with_baseline(shaped(DOUBLED), shaped()).report(verbose=True)
    assert "structure: NEW larger in flat jaxpr equations 3,088 → 6,160 (1.99×)" in shown
    assert "program structure, NEW against OLD" in shown


def test_a_figure_one_report_lacks_is_shown_and_never_judged():
    older = shaped({"flat": dict(jaxpr_eqns=None, stablehlo_bytes=None)})
    d = jitmagic.diff(older, shaped())
    f = d.figure("flat", "jaxpr_eqns")
    assert f.kind == "not recorded in both" and math.isnan(f.new_over_old)
    assert d.larger(1.0) == [] and not f.larger_by(1.0)
    assert d.figure("flat", "stablehlo_calls").kind == "same"
    assert "—" in next(x for x in full(d).splitlines() if x.startswith("flat     jaxpr"))


def test_a_figure_from_zero_is_larger_at_any_ratio():
    d = jitmagic.diff(shaped({"nested": dict(nested_calls=0)}), shaped())
    f = d.figure("nested", "nested_calls")
    assert f.kind == "larger" and f.new_over_old == math.inf and f.larger_by(1000)
    row = next(x for x in full(d).splitlines() if x.startswith("nested   nested jit calls"))
    assert row.split() == ["nested", "nested", "jit", "calls", "0", "16", "from", "0", "larger"]
    assert json.dumps(d.to_dict())  # infinite ratio saved as null


def test_compiled_size_and_cost_are_diffed_where_the_record_holds_them():
    cost = {"flat": dict(STRUCTURE["flat"], compiled_ops=41, compiled_flops=1_048_576.0,
                         compiled_bytes_accessed=3_145_728.0),
            "nested": dict(STRUCTURE["nested"], compiled_ops=41, compiled_flops=1_048_576.0,
                           compiled_bytes_accessed=3_145_728.0)}
    more = {v: dict(f, compiled_flops=2_097_152.0) for v, f in cost.items()}
    d = jitmagic.diff(shaped(cost), shaped(more))
    assert d.figure("flat", "compiled_ops").kind == "same"
    assert d.figure("flat", "compiled_flops").new_over_old == 2.0
    assert [f.figure for f in d.larger(1.3)] == ["compiled_flops", "compiled_flops"]
    rows = {" ".join(x.split()[1:-4]): x.split()[-4:] for x in full(d).splitlines()
            if x.startswith("flat     ")}
    assert rows["flops (XLA's cost analysis)"] == ["1,048,576", "2,097,152", "2.00×", "larger"]
    assert rows["instructions after XLA"] == ["41", "41", "1.00×", "same"]
    assert rows["bytes accessed (XLA's cost analysis)"][-1] == "same"
    # a record without them (today's) has no such rows, and still diffs
    assert "compiled_flops" not in {f.figure for f in jitmagic.diff(shaped(), shaped()).structure}


def test_the_command_fails_on_a_larger_figure(paths, capsys):
    old, new = paths("old.json", shaped()), paths("new.json", shaped(DOUBLED))
    assert main(["diff", old, new, "--fail-on-larger", "1.3", "-v"]) == 1
    captured = capsys.readouterr()
    assert "program structure, NEW against OLD" in captured.out
    assert ("jitmagic diff: larger: flat jaxpr equations: NEW 6,160 against OLD's 3,088, "
            "1.99× larger (1.3× or more fails)") in captured.err
    assert ("jitmagic diff: larger: nested StableHLO bytes: NEW 52,330 against OLD's 28,114, "
            "1.86× larger (1.3× or more fails)") in captured.err
    assert main(["diff", old, new, "--fail-on-larger=1.9"]) == 1
    assert capsys.readouterr().err.count("larger: ") == 3  # nested StableHLO 1.86× passes
    assert main(["diff", old, new, "--fail-on-larger", "2"]) == 0
    assert main(["diff", new, old, "--fail-on-larger", "1.3"]) == 0  # NEW smaller
    assert main(["diff", old, old, "--fail-on-larger", "1"]) == 0  # the same never fails
    assert main(["diff", old, new]) == 0  # no gate asked: shown, not failed


def test_both_gates_at_once_name_every_failure(paths, capsys):
    old, new = paths("old.json", shaped()), paths("new.json", shaped(DOUBLED, 2.5))
    assert main(["diff", "--fail-on-slower", old, new, "--fail-on-larger", "1.3"]) == 1
    err = capsys.readouterr().err
    assert ("regression: flat XLA compile: NEW 2.50× slower (median 25.2 ms against OLD's "
            "10.1 ms; 1.2× or more fails)") in err
    assert "larger: flat jaxpr equations: NEW 6,160" in err


def test_one_function_chooses_the_samples_a_stage_is_judged_on(monkeypatch):
    old, new = shaped(), shaped(scale=2.0)
    assert diffmod.judged_samples(old, new, "flat", "trace_s") == (
        old.flat.samples["trace_s"], new.flat.samples["trace_s"])
    # whatever it chooses is what every stage, its medians and every gate are judged on
    monkeypatch.setattr(diffmod, "judged_samples", lambda a, b, v, p: ([0.01, 0.0101, 0.0102],
                                                                       [0.01, 0.0101, 0.0102]))
    d = jitmagic.diff(old, new)
    assert d.regressions(1.0) == [] and d.stage("flat", "trace_s").new_s == 0.0101


# --- a PARTIAL side, a closed pipe ---------------------------------------------------

#: Why a crafted PARTIAL report stopped, as the runner words it.
STOPPED = "interrupted by the user during the flat variant's first cold run"


def partial(measured: dict | None = None, **fields):
    """A PARTIAL report (``stopped`` set) that measured ``measured`` (samples of the flat
    variant; nothing by default), with neither variant's structure."""
    fields.setdefault("env", dict(ENV))
    return comparison(measured or {}, {}, stopped=STOPPED, **fields)


def test_a_partial_new_that_measured_nothing_is_nothing_to_compare_and_fails_a_gate(
        paths, capsys):
    d = jitmagic.diff(shaped(), partial())
    assert not d.compared_anything and d.new_measured_nothing
    assert d.new_stopped == STOPPED and d.old_stopped is None
    text = full(d)
    assert "no measurable difference" not in text and "every figure the same" not in text
    assert "against the baseline: nothing to compare: NEW measured nothing" in text
    assert f"NEW is PARTIAL: {STOPPED}; compared only what both measured" in text
    assert "structure: no figure recorded in both reports, nothing to compare" in text
    assert repr(d) == "<Diff model: nothing to compare: NEW measured nothing>"
    assert d.to_dict()["new_stopped"] == STOPPED
    old, new = paths("old.json", shaped()), paths("new.json", partial())
    for gate in (["--fail-on-slower"], ["--fail-on-larger", "1.3"]):
        assert main(["diff", old, new, *gate]) == 1
        err = capsys.readouterr().err
        assert (f"jitmagic diff: nothing to judge: NEW measured nothing (NEW is PARTIAL: "
                f"{STOPPED}), so no gate can pass it") in err
    assert main(["diff", old, new]) == 0  # no gate: shown, not failed


def test_a_partial_report_compares_only_what_both_measured(paths, capsys):
    flat = {"trace_s": [0.020, 0.0202, 0.0204]}  # stopped after tracing, 2× slower
    d = jitmagic.diff(report(), partial(flat))
    assert d.compared_anything and not d.new_measured_nothing
    assert [(s.variant, s.phase) for s in d.stages if s.measured] == [("flat", "trace_s")]
    assert d.stage("flat", "trace_s").kind == "slower"
    assert f"NEW is PARTIAL: {STOPPED}; compared only what both measured" in full(d)
    # a PARTIAL baseline is named too, and a NEW that measured is judged as usual
    back = jitmagic.diff(partial(flat), report())
    assert f"OLD is PARTIAL: {STOPPED}; compared only what both measured" in str(back)
    old, new = paths("old.json", report()), paths("new.json", partial(flat))
    assert main(["diff", old, new, "--fail-on-slower"]) == 1
    assert "regression: flat trace: NEW 2.00× slower" in capsys.readouterr().err
    assert main(["diff", new, old, "--fail-on-slower"]) == 0


def test_a_baseline_that_measured_nothing_is_said_not_judged(paths, capsys):
    d = jitmagic.diff(partial(), report())
    assert not d.compared_anything and not d.new_measured_nothing
    assert ("against the baseline: nothing to compare: no stage or figure was measured in "
            "both reports") in full(d)
    old, new = paths("old.json", partial()), paths("new.json", report())
    assert main(["diff", old, new, "--fail-on-slower"]) == 0
    assert (f"jitmagic diff: nothing to compare: no stage or figure was measured in both "
            f"reports (OLD is PARTIAL: {STOPPED}): the gates had nothing to judge"
            ) in capsys.readouterr().err


def test_no_stage_in_both_is_never_no_measurable_difference():
    """Two whole reports, each measuring a phase the other lacks: nothing in both."""
    a = comparison({"trace_s": [0.01, 0.0101, 0.0102]}, {}, env=dict(ENV))
    b = comparison({"lower_s": [0.01, 0.0101, 0.0102]}, {}, env=dict(ENV))
    d = jitmagic.diff(a, b)
    assert d.undecided() == ("nothing to compare: no stage or figure was measured in both "
                             "reports")
    assert "no measurable difference" not in full(d) and d.partial_lines() == []


@pytest.mark.slow  # python -m jitmagic diff in a subprocess
@pytest.mark.parametrize(("gate", "status"), [((), 0), (("--fail-on-slower",), 1)])
def test_a_closed_pipe_ends_the_diff_quietly_with_its_status(paths, gate, status):
    """``python -m jitmagic diff ... | head``: the reader has gone before the diff is
    printed; no BrokenPipeError traceback, and the status the diff decides."""
    old, new = paths("old.json", report()), paths("new.json", report(2.5))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    child = subprocess.Popen([sys.executable, "-m", "jitmagic", "diff", old, new, *gate],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # closed before the child has imported anything
    err = child.stderr.read().decode()
    assert child.wait(timeout=120) == status, err
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert ("regression: flat XLA compile" in err) == bool(gate)


def test_a_word_for_a_ratio_is_a_usage_error(paths, capsys):
    good = paths("good.json", report())
    with pytest.raises(SystemExit) as exc:
        main(["diff", good, good, "--fail-on-slower", "abc"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--fail-on-slower takes a ratio, a finite number of at least 1" in err
    assert "not 'abc': write, for example, --fail-on-slower=1.3" in err


def test_nested_variants_that_nest_different_helpers_are_shown_not_judged(paths, capsys):
    """A new user diffed a --why report (4 helpers nested) against a --nest layernorm one
    of the same code: 'larger: nested jaxpr equations: NEW 141 against OLD's 47' failed
    the gate, nothing saying the nested variants were different choices."""
    write = paths

    def nesting(c, *helpers):
        return dataclasses.replace(c, variants={
            **c.variants, "nested": dataclasses.replace(c.nested, helpers=helpers)})

    old_c = nesting(shaped(), "layer", "norm")
    new_c = nesting(shaped({"flat": {"jaxpr_eqns": 2 * STRUCTURE["flat"]["jaxpr_eqns"]},
                            "nested": {"jaxpr_eqns": 3 * STRUCTURE["nested"]["jaxpr_eqns"]}}),
                    "norm")
    d = jitmagic.diff(old_c, new_c)
    grown = d.figure("nested", "jaxpr_eqns")
    assert grown.kind == "larger" and grown.not_judged.startswith(
        "the nested variants nest different helpers (OLD: `layer`, `norm`; NEW: `norm`)")
    # flat's doubling still fails the gate, the nested tripling does not
    assert [(f.variant, f.figure) for f in d.larger(1.3)] == [("flat", "jaxpr_eqns")]
    assert all(s.not_judged for s in d.stages if s.variant == "nested")
    assert not any(s.not_judged for s in d.stages if s.variant == "flat")
    shown = full(d)
    assert "the nested rows compare two choices of what to nest" in shown
    assert "larger, not judged" in shown and "structure: NEW larger in flat jaxpr" in shown
    old, new = write("old", old_c), write("new", new_c)
    assert main(["diff", old, new, "--fail-on-larger", "2.5"]) == 0  # only nested tripled
    err = capsys.readouterr().err
    assert "the nested variants nest different helpers" in err
    same = jitmagic.diff(old_c, old_c)
    assert same.nest_line() is None and not any(f.not_judged for f in same.structure)

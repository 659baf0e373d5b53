"""A report against a baseline: jitmagic.diff, its rendering, and `python -m jitmagic diff`
(crafted reports only: nothing is measured here)."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from support import comparison

import jitmagic
from jitmagic import Diff
from jitmagic.frontends.command import main
from jitmagic.model import diff as diffmod
from jitmagic.model.rows import PHASES
from jitmagic.model.saved.storage import save
from jitmagic.model.sweep import Sweep

ENV = {"jax": "0.10.2", "jaxlib": "0.10.2", "platform": "Linux-x86_64", "devices": ["cpu"],
       "jitmagic": "0.3.0.dev0"}


def report(scale: float = 1.0, nested_scale: float | None = None, **fields):
    """A comparison whose every phase takes ``scale`` × a fixed, tight set of runs."""
    def samples(k: float) -> dict[str, list[float]]:
        return {p: [k * 0.010, k * 0.0101, k * 0.0102] for p in PHASES}
    fields.setdefault("env", dict(ENV))
    return comparison(samples(scale), samples(nested_scale or scale * 0.5), **fields)


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
    assert "no measurable difference" not in str(d)
    other = jitmagic.diff(report(), report(1.001))
    assert not other.same_runs
    assert repr(other) == ("<Diff model: no stage measurably slower or faster (some "
                           "inconclusive)>")


def test_a_slower_new_is_said_as_new_over_old():
    d = jitmagic.diff(report(1.0), report(2.0))
    s = d.stage("flat", "compile_s")
    assert s.new_over_old == pytest.approx(2.0) and s.kind == "slower" and s.significant
    text = str(d)
    assert "NEW is" in text and "2.00× slower" in text and "above 1, NEW is slower" in text
    assert [r.phase for r in d.regressions(1.2) if r.variant == "flat"] == list(PHASES)
    assert d.regressions(2.5) == []  # slower, but not by 2.5×
    assert repr(d) == "<Diff model: 10 stages slower>"


def test_a_faster_new_is_no_regression():
    d = jitmagic.diff(report(2.0), report(1.0))
    s = d.stage("nested", "trace_s")
    assert s.kind == "faster" and s.new_over_old == pytest.approx(0.5)
    assert "2.00× faster" in str(d) and d.regressions() == []


def test_a_phase_measured_in_one_report_only_shows_a_dash():
    old = report()
    new = dataclasses.replace(report(), variants={
        **report().variants, "nested": dataclasses.replace(report().nested, samples={})})
    s = jitmagic.diff(old, new).stage("nested", "compile_s")
    assert not s.measured and not s.significant
    assert "not measured in both" in str(jitmagic.diff(old, new))


def test_another_machine_or_jax_compares_with_a_warning_naming_what_differs():
    new = report(env={**ENV, "jax": "0.10.3", "platform": "Darwin-arm64",
                      "jitmagic": "0.4.0"})
    (warning,) = jitmagic.diff(report(), new).warnings
    assert "jax 0.10.2 → 0.10.3" in warning and "platform Linux-x86_64 → Darwin-arm64" in warning
    assert "jitmagic" not in warning  # a newer jitmagic is expected, not a different machine
    assert "warning: the reports were measured in different environments" in \
        str(jitmagic.diff(report(), new))


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
    assert "1.60×–2.50×" in str(jitmagic.diff(report(), report()))
    monkeypatch.setattr(diffmod, "difference",
                        lambda before, after: Newer("inconclusive", 0.8, 0.5, 1.2, False))
    d = jitmagic.diff(report(), report())
    assert not d.stage("flat", "trace_s").significant and d.regressions() == []
    assert "inconclusive" in str(d)


def test_paths_are_read_and_a_sweep_is_refused(paths):
    old, new = paths("old.json", report()), paths("new.json", report(2.0))
    assert jitmagic.diff(old, new).stage("flat", "trace_s").kind == "slower"
    sweep = paths("s.json", Sweep("n", (1,), (report(),), 1.0))
    with pytest.raises(jitmagic.ReportSchemaError, match="for a sweep, diff two of its points"):
        jitmagic.diff(sweep, new)


# --- python -m jitmagic diff ---------------------------------------------------------


def test_the_command_prints_the_diff_and_exits_0(paths, capsys):
    old, new = paths("old.json", report()), paths("new.json", report(2.0))
    assert main(["diff", old, new]) == 0
    assert "jitcompare diff: model (NEW) against model (OLD)" in capsys.readouterr().out


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
                 ["diff", good, good, "--fail-on-slower", "x"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
    assert "a slowdown ratio is at least 1" in capsys.readouterr().err


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

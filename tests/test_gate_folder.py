"""One folder for ``--jitmagic-save`` and ``--jitmagic-compare`` (a CI job that keeps its
baselines in place), on real measurements: a helper made twice as big fails the gate, and
fails it again on the next run, since a report that fails its gate is not saved over the
baseline it failed (before, it was, and the rerun passed against itself: "every figure
same"); a run with ``--jitmagic-save`` alone makes it the baseline. Under pytest-xdist
the session's summary counts and tables what every worker saved and compared.

Structure and counts only (exact figures, however busy the machine): no time asserted."""

from __future__ import annotations

import pytest
from support import CRAFTED
from test_gate_structure import MEASURED, REPORT

import jitmagic

pytest_plugins = ["pytester"]

GATE = "--jitmagic-fail-on-larger=1.3"


@pytest.fixture
def run(pytester, monkeypatch):
    """``run(terms, *options)``: a pytest run of :data:`MEASURED` with a helper of
    ``terms`` terms, only this plugin loaded."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_measured=MEASURED)

    def go(terms: int, *options: str) -> pytest.RunResult:
        monkeypatch.setenv("HELPER_TERMS", str(terms))
        return pytester.runpytest_inprocess("-p", "jitmagic.frontends.pytest_plugin", "-p",
                                            "no:cacheprovider", *options)
    return go


@pytest.mark.slow
def test_a_doubled_helper_fails_every_run_against_a_baseline_kept_in_place(run, tmp_path):
    base = tmp_path / "base"
    both = (f"--jitmagic-save={base}", f"--jitmagic-compare={base}", GATE)
    first = run(8, *both)  # no baseline yet: made
    first.assert_outcomes(passed=1)
    first.stdout.fnmatch_lines(["*not compared: no baseline*",
                                f"*jitmagic: saved 1 report in {base}*"])
    before = jitmagic.load(base / REPORT).flat.jaxpr_eqns
    for _ in range(2):  # the second run is judged against the same baseline, and fails
        doubled = run(16, *both)
        doubled.assert_outcomes(failed=1)
        assert jitmagic.load(base / REPORT).flat.jaxpr_eqns == before  # before: replaced
        doubled.stdout.fnmatch_lines([
            "jitmagic: larger: flat jaxpr equations: NEW * against OLD's *× larger*",
            f"(its baseline is kept: a report that fails its gate is not saved over it in "
            f"{base}, so a second run fails again; to make this report the baseline, run "
            f"once with --jitmagic-save={base} alone)",
            f"KEPT test_measured.py::test_model: its baseline {base / REPORT} is kept, not "
            "replaced by a report that failed it",
            f"*jitmagic: saved 0 reports in {base}*"])
    run(8, *both).assert_outcomes(passed=1)  # the unchanged code still passes, and is saved
    run(16, f"--jitmagic-save={base}").assert_outcomes(passed=1)  # accepted on purpose
    after = jitmagic.load(base / REPORT).flat.jaxpr_eqns
    assert after >= 1.3 * before
    run(16, *both).assert_outcomes(passed=1)  # now judged against the accepted one


#: Three tests, each handed the crafted report (no compile), for xdist's workers.
THREE = CRAFTED + """

def test_two(jitcompare, monkeypatch):
    test_model(jitcompare, monkeypatch)

def test_three(jitcompare, monkeypatch):
    test_model(jitcompare, monkeypatch)
"""


@pytest.mark.slow
def test_under_xdist_the_summary_counts_what_the_workers_saved(pytester, tmp_path,
                                                                monkeypatch):
    pytest.importorskip("xdist")
    from test_plugin_safety import crafted

    from jitmagic.model.reports.storage import save

    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    report = tmp_path / "new.json"
    save(crafted(), report)
    monkeypatch.setenv("JITMAGIC_REPORT", str(report))
    pytester.makepyfile(test_crafted=THREE)
    base = tmp_path / "base"
    plugins = ("-p", "jitmagic.frontends.pytest_plugin", "-p", "xdist", "-p",
               "no:cacheprovider", "-n", "2")
    saved = pytester.runpytest_subprocess(*plugins, f"--jitmagic-save={base}")
    saved.assert_outcomes(passed=3)
    assert len(list(base.glob("*.json"))) == 3
    saved.stdout.fnmatch_lines([f"*jitmagic: saved 3 reports in {base}*"])  # was 0
    compared = pytester.runpytest_subprocess(*plugins, f"--jitmagic-compare={base}")
    compared.assert_outcomes(passed=3)
    for test in ("test_model", "test_two", "test_three"):  # each worker's rows, tabled
        compared.stdout.fnmatch_lines([f"test_crafted.py::{test} * every figure * same"])

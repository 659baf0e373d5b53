"""The pytest plugin, in pytest runs of its own (``pytester``, in this process): save the
reports, compare against them, fail on a crafted slower baseline, pass on a faster one."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import jitmagic
from jitmagic.frontends.pytest_plugin import report_name
from jitmagic.model.saved.storage import save

pytest_plugins = ["pytester"]

#: A test file that measures one tiny function (the fixture's real path).
MEASURED = """
import jax.numpy as jnp

def tiny(x):
    return x * 2 + 1

def test_tiny(jitcompare):
    c = jitcompare(tiny, jnp.ones(4), repeat=3, number=2)
    assert c.flat.ok and c.source.startswith("def tiny")
"""

#: A test file whose fixture measures nothing: ``measure`` returns the report in
#: ``JITMAGIC_REPORT`` (crafted by the outer test), so a comparison costs no compile.
CRAFTED = """
import os
import jitmagic
import jitmagic.frontends.pytest_plugin as plugin

def test_model(jitcompare, monkeypatch):
    crafted = jitmagic.load(os.environ["JITMAGIC_REPORT"])
    monkeypatch.setattr(plugin, "measure", lambda fn, *a, **k: crafted)
    assert jitcompare(len, [1]) is crafted
"""

PHASES = ("trace_s", "lower_s", "compile_s", "first_call_s", "execute_s")


def run(pytester, *args: str):
    """A pytest run with only this plugin loaded (no installed plugin autoloads)."""
    return pytester.runpytest_inprocess("-p", "jitmagic.frontends.pytest_plugin", "-p",
                                        "no:cacheprovider", *args)


@pytest.fixture(autouse=True)
def no_autoload(monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def scaled(c: jitmagic.Comparison, k: float) -> jitmagic.Comparison:
    """``c`` with every sample ``k`` times as long."""
    variants = {name: dataclasses.replace(v, samples={p: [k * x for x in xs]
                                                      for p, xs in v.samples.items()})
                for name, v in c.variants.items()}
    return dataclasses.replace(c, variants=variants)


def crafted() -> jitmagic.Comparison:
    from support import comparison

    samples = {p: [0.010, 0.0101, 0.0102] for p in PHASES}
    return comparison(samples, samples, entry="model", env={"jax": "0.10.2"})


def test_names_are_sanitised_node_ids():
    assert report_name("tests/test_a.py::test_b[x/y-1]") == "tests_test_a.py_test_b_x_y-1.json"
    assert report_name("t.py::test", 1) == "t.py_test-2.json"
    assert len(report_name("t.py::" + "x" * 500)) <= 160


def test_save_then_compare_a_real_measurement(pytester, tmp_path):
    pytester.makepyfile(test_measured=MEASURED)
    reports = tmp_path / "reports"
    saved = run(pytester, f"--jitmagic-save={reports}")
    saved.assert_outcomes(passed=1)
    (path,) = reports.iterdir()
    assert path.name == "test_measured.py_test_tiny.json"
    assert jitmagic.load(path).entry == "tiny"
    compared = run(pytester, f"--jitmagic-compare={reports}", "--jitmagic-fail-on-slower=50")
    compared.assert_outcomes(passed=1)
    assert compared.ret == 0
    compared.stdout.fnmatch_lines(["*jitmagic: against*", "*test_measured.py::test_tiny*"])


def test_a_slower_stage_than_the_baseline_fails_the_session(pytester, tmp_path, monkeypatch):
    pytester.makepyfile(test_crafted=CRAFTED)
    new, base = tmp_path / "new.json", tmp_path / "base"
    base.mkdir()
    save(crafted(), new)
    save(scaled(crafted(), 0.5), base / "test_crafted.py_test_model.json")  # OLD 2× faster
    monkeypatch.setenv("JITMAGIC_REPORT", str(new))
    result = run(pytester, f"--jitmagic-compare={base}", "--jitmagic-fail-on-slower")
    result.assert_outcomes(passed=1)  # the test passed; the session fails
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*REGRESSION test_crafted.py::test_model: flat trace 2.00× "
                                 "slower, *nested execute (per call) 2.00× slower "
                                 "(fails at 1.2×)*"])
    assert run(pytester, f"--jitmagic-compare={base}", "--jitmagic-fail-on-slower=3").ret == 0
    assert run(pytester, f"--jitmagic-compare={base}").ret == 0  # reported, not failed


def test_a_faster_stage_than_the_baseline_passes(pytester, tmp_path, monkeypatch):
    pytester.makepyfile(test_crafted=CRAFTED)
    new, base = tmp_path / "new.json", tmp_path / "base"
    base.mkdir()
    save(crafted(), new)
    save(scaled(crafted(), 2.0), base / "test_crafted.py_test_model.json")
    monkeypatch.setenv("JITMAGIC_REPORT", str(new))
    result = run(pytester, f"--jitmagic-compare={base}", "--jitmagic-fail-on-slower")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*flat trace*0.50×*2.00× faster*"])
    assert "REGRESSION" not in result.stdout.str()


def test_a_missing_baseline_is_reported_not_failed(pytester, tmp_path, monkeypatch):
    pytester.makepyfile(test_crafted=CRAFTED)
    new = tmp_path / "new.json"
    save(crafted(), new)
    monkeypatch.setenv("JITMAGIC_REPORT", str(new))
    result = run(pytester, f"--jitmagic-compare={tmp_path / 'empty'}",
                 "--jitmagic-fail-on-slower")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*not compared: no baseline*"])


def test_the_entry_point_names_the_plugin():
    project = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    entry = '[project.entry-points.pytest11]\njitmagic = "jitmagic.frontends.pytest_plugin"\n'
    assert entry in project
    assert json.dumps(crafted().to_dict())

"""The pytest plugin, in pytest runs of its own (``pytester``, in this process): save the
reports, compare against them, fail the test on a crafted slower or larger baseline (pytest
counts it failed), pass on a faster or unchanged one, refuse a bad RATIO."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from support import CRAFTED

import jitmagic
from jitmagic.frontends.pytest_plugin import report_name
from jitmagic.model.reports.storage import save

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


#: Two tests in one file, each given its own crafted report (``JITMAGIC_<TEST>``).
TWO = """
import os
import jitmagic
import jitmagic.frontends.pytest_plugin as plugin

def measured(monkeypatch, name):
    crafted = jitmagic.load(os.environ["JITMAGIC_" + name.upper()])
    monkeypatch.setattr(plugin, "measure", lambda fn, *a, **k: crafted)
    return crafted

def test_doubled(jitcompare, monkeypatch):
    crafted = measured(monkeypatch, "doubled")
    assert jitcompare(len, [1]) is crafted

def test_unchanged(jitcompare, monkeypatch):
    crafted = measured(monkeypatch, "unchanged")
    assert jitcompare(len, [1]) is crafted
"""

PHASES = ("trace_s", "lower_s", "compile_s", "first_call_s", "execute_s")
#: A model's structure as measured: 16 calls of a helper inlined (flat) or nested, and
#: the same helper made twice as big.
STRUCTURE = {"flat": dict(jaxpr_eqns=3088, stablehlo_bytes=412_330, nested_calls=0),
             "nested": dict(jaxpr_eqns=212, stablehlo_bytes=28_114, nested_calls=16)}
DOUBLED = {"flat": dict(jaxpr_eqns=6160, stablehlo_bytes=822_596, nested_calls=0),
           "nested": dict(jaxpr_eqns=404, stablehlo_bytes=52_330, nested_calls=16)}


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


def crafted(structure: dict | None = None) -> jitmagic.Comparison:
    """A report of fixed, tight runs, its variants' structure figures ``structure``."""
    from support import comparison, variant

    samples = {p: [0.010, 0.0101, 0.0102] for p in PHASES}
    flat, nested = (variant(v, samples, **(structure or {}).get(v, {}))
                    for v in ("flat", "nested"))
    return comparison(flat, nested, entry="model", env={"jax": "0.10.2"})


def baselines(tmp_path, monkeypatch, tests: dict[str, tuple]) -> Path:
    """A baseline folder holding OLD for each test of ``tests`` (node id: (OLD, NEW,
    env)), under the name the plugin gives that test's report, each NEW saved where the
    env variable its test reads names it."""
    base = tmp_path / "base"
    base.mkdir()
    for nodeid, (old, new, env) in tests.items():
        name = report_name(nodeid)
        save(old, base / name)
        save(new, tmp_path / f"new-{name}")
        monkeypatch.setenv(env, str(tmp_path / f"new-{name}"))
    return base


def test_names_are_sanitised_node_ids_and_a_hash_of_them():
    name = report_name("tests/test_a.py::test_b[x/y-1]")
    assert re.fullmatch(r"tests_test_a\.py_test_b_x_y-1-[0-9a-f]{10}\.json", name)
    assert report_name("tests/test_a.py::test_b[x/y-1]") == name  # the same every run
    assert report_name("t.py::test", 1) == report_name("t.py::test")[:-5] + "-2.json"
    assert len(report_name("t.py::" + "x" * 500, 998)) <= 150


def test_save_then_compare_a_real_measurement(pytester, tmp_path):
    pytester.makepyfile(test_measured=MEASURED)
    reports = tmp_path / "reports"
    saved = run(pytester, f"--jitmagic-save={reports}")
    saved.assert_outcomes(passed=1)
    (path,) = reports.iterdir()
    assert path.name == report_name("test_measured.py::test_tiny")
    assert jitmagic.load(path).entry == "tiny"
    compared = run(pytester, f"--jitmagic-compare={reports}", "--jitmagic-fail-on-slower=50")
    compared.assert_outcomes(passed=1)
    assert compared.ret == 0
    compared.stdout.fnmatch_lines(["*jitmagic: against*", "*test_measured.py::test_tiny*"])


#: A test that checks the fixture measured one round, whatever it asked for.
ONE_ROUND = """
import jax
import jax.numpy as jnp

def layer(w, x):
    return jnp.tanh(w @ x)

def model(ws, x):
    for w in ws:
        x = layer(w, x)
    return x.sum()

def test_loss_grad(jitcompare):
    c = jitcompare(jax.grad(model), [jnp.eye(4)] * 3, jnp.ones(4), repeat=5, number=4)
    assert c.flat.ok and c.nested.ok
    print("ROUNDS", len(c.flat.samples["first_call_s"]), len(c.nested.samples["first_call_s"]))
"""


def test_disable_measures_one_round_and_saves_compares_and_gates_nothing(pytester, tmp_path,
                                                                         monkeypatch):
    pytester.makepyfile(test_one=ONE_ROUND)
    reports, base = tmp_path / "reports", tmp_path / "base"
    base.mkdir()
    save(scaled(crafted(), 0.01), base / report_name("test_one.py::test_loss_grad"))
    result = run(pytester, "--jitmagic-disable", f"--jitmagic-save={reports}",
                 f"--jitmagic-compare={base}", "--jitmagic-fail-on-slower", "-s")
    result.assert_outcomes(passed=1)  # a baseline 100× faster fails nothing: no gate ran
    result.stdout.fnmatch_lines([
        "*ROUNDS 1 1",
        "*jitmagic: disabled (--jitmagic-disable): each jitcompare call measured one round; "
        "nothing saved, compared or gated (--jitmagic-save, --jitmagic-compare, "
        "--jitmagic-fail-on-slower not used)*"])
    assert not reports.exists()
    assert "against" not in result.stdout.str()


def test_a_slower_stage_than_the_baseline_fails_that_test(pytester, tmp_path, monkeypatch):
    pytester.makepyfile(test_crafted=CRAFTED)
    new, base = tmp_path / "new.json", tmp_path / "base"
    base.mkdir()
    save(crafted(), new)
    save(scaled(crafted(), 0.5), base / report_name("test_crafted.py::test_model"))  # OLD 2× faster
    monkeypatch.setenv("JITMAGIC_REPORT", str(new))
    result = run(pytester, f"--jitmagic-compare={base}", "--jitmagic-fail-on-slower")
    result.assert_outcomes(failed=1)  # the test itself failed, as pytest counts
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "jitmagic: regression: flat XLA compile: NEW 2.00× slower (median 10.1 ms against "
        "OLD's 5.05 ms; 1.2× or more fails)",
        "(this test's report against its baseline *test_crafted.py_test_model-*.json)",
        "*REGRESSION test_crafted.py::test_model: flat trace 2.00× slower, *nested execute "
        "(per call) 2.00× slower (fails at 1.2×)*",
        "*1 failed*"])
    assert run(pytester, f"--jitmagic-compare={base}", "--jitmagic-fail-on-slower=3").ret == 0
    assert run(pytester, f"--jitmagic-compare={base}").ret == 0  # reported, not failed


def test_a_larger_program_fails_that_test_and_an_unchanged_one_passes(pytester, tmp_path,
                                                                       monkeypatch):
    """Structure, not timing: both sides hold the very same runs, so only the figures
    decide, and deterministically."""
    pytester.makepyfile(test_two=TWO)
    base = baselines(tmp_path, monkeypatch, {
        "test_two.py::test_doubled": (crafted(STRUCTURE), crafted(DOUBLED), "JITMAGIC_DOUBLED"),
        "test_two.py::test_unchanged": (crafted(STRUCTURE), crafted(STRUCTURE),
                                        "JITMAGIC_UNCHANGED")})
    result = run(pytester, f"--jitmagic-compare={base}", "--jitmagic-fail-on-larger=1.3",
                 "-rf", "-vv")
    result.assert_outcomes(failed=1, passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "FAILED test_two.py::test_unchanged" not in result.stdout.str()
    result.stdout.fnmatch_lines([
        "test_two.py::test_doubled FAILED*",
        "test_two.py::test_unchanged PASSED*",
        "jitmagic: larger: flat jaxpr equations: NEW 6,160 against OLD's 3,088, 1.99× larger "
        "(1.3× or more fails)",
        "jitmagic: larger: nested StableHLO bytes: NEW 52,330 against OLD's 28,114, 1.86× "
        "larger (1.3× or more fails)",
        "(this test's report against its baseline *test_two.py_test_doubled-*.json)",
        "test_two.py::test_doubled * flat * jaxpr equations * 3,088 * 6,160 * 1.99× * larger",
        "test_two.py::test_unchanged * — * every figure * — * — * — * same",
        "LARGER test_two.py::test_doubled: flat jaxpr equations 3,088 → 6,160 (1.99×), *"
        "(fails at 1.3×)",
        "FAILED test_two.py::test_doubled - jitmagic: larger: flat jaxpr equations: NEW 6,160*",
        "*= 1 failed, 1 passed in *"])
    # twice as big is below 2.5×; and without the gate the change is shown, not failed
    run(pytester, f"--jitmagic-compare={base}", "--jitmagic-fail-on-larger=2.5"
        ).assert_outcomes(passed=2)
    shown = run(pytester, f"--jitmagic-compare={base}")
    shown.assert_outcomes(passed=2)
    assert "LARGER" not in shown.stdout.str()
    shown.stdout.fnmatch_lines(["test_two.py::test_doubled * jaxpr equations * 1.99× * larger"])


def test_a_test_that_failed_already_keeps_its_own_failure(pytester, tmp_path, monkeypatch):
    pytester.makepyfile(test_crafted=CRAFTED.replace("is crafted", "is not crafted"))
    base = baselines(tmp_path, monkeypatch, {
        "test_crafted.py::test_model": (crafted(STRUCTURE), crafted(DOUBLED),
                                        "JITMAGIC_REPORT")})
    result = run(pytester, f"--jitmagic-compare={base}", "--jitmagic-fail-on-larger=1.3")
    result.assert_outcomes(failed=1, errors=0)  # its assert, not an error in teardown
    assert "AssertionError" in result.stdout.str()
    assert "jitmagic: larger" not in result.stdout.str()  # only in the session's table
    result.stdout.fnmatch_lines(["LARGER test_crafted.py::test_model: *"])


@pytest.mark.parametrize("option", ["--jitmagic-fail-on-slower", "--jitmagic-fail-on-larger"])
@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "0.5", "twice"])
def test_a_bad_ratio_is_a_usage_error_naming_what_to_write(pytester, option, value):
    pytester.makepyfile(test_crafted=CRAFTED)
    result = run(pytester, f"{option}={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{option} takes a ratio, a finite number of at least 1 *"
                                 f"not {value!r}: write, for example, {option}=1.3*"])
    assert "passed" not in result.stdout.str()  # refused before any test ran


@pytest.mark.parametrize("gates", [("--jitmagic-fail-on-larger=1.3",),
                                   ("--jitmagic-fail-on-slower", "--jitmagic-fail-on-larger=2")])
def test_a_gate_without_a_baseline_is_a_usage_error(pytester, gates):
    # without --jitmagic-compare no report is judged: the gate could never fail
    pytester.makepyfile(test_crafted=CRAFTED)
    result = run(pytester, *gates)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    named = " and ".join(g.split("=")[0] for g in gates)
    result.stderr.fnmatch_lines([f"*{named} judge each report against a baseline's: give the "
                                 "baseline's folder too, e.g. --jitmagic-compare=*"])
    assert "passed" not in result.stdout.str()


def test_a_faster_stage_than_the_baseline_passes(pytester, tmp_path, monkeypatch):
    pytester.makepyfile(test_crafted=CRAFTED)
    new, base = tmp_path / "new.json", tmp_path / "base"
    base.mkdir()
    save(crafted(), new)
    save(scaled(crafted(), 2.0), base / report_name("test_crafted.py::test_model"))
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
    (tmp_path / "empty").mkdir()
    result = run(pytester, f"--jitmagic-compare={tmp_path / 'empty'}",
                 "--jitmagic-fail-on-slower", "--jitmagic-fail-on-larger=1.3")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*not compared: no baseline*"])


def test_the_entry_point_names_the_plugin():
    project = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    entry = '[project.entry-points.pytest11]\njitmagic = "jitmagic.frontends.pytest_plugin"\n'
    assert entry in project
    assert json.dumps(crafted().to_dict())

"""The structure gate on real measurements: a helper made twice as big fails
``python -m jitmagic diff --fail-on-larger`` and, in a pytest run, the test that measured
it; the same code measured again passes. The figures (jaxpr equations, StableHLO bytes)
are the program's, not the clock's, so this holds however busy the machine is: nothing
here asserts a time."""

from __future__ import annotations

import os

import jax.numpy as jnp
import pytest

import jitmagic
from jitmagic.frontends.command import main
from jitmagic.frontends.pytest_plugin import report_name
from jitmagic.model.reports.storage import save

pytest_plugins = ["pytester"]

#: A test file measuring a model of 4 calls of a helper whose size ``HELPER_TERMS`` sets.
MEASURED = """
import os
import jax.numpy as jnp

def layer(x):
    return sum(i * jnp.sin(x) for i in range(int(os.environ["HELPER_TERMS"])))

def model(x):
    return sum(layer(x) for _ in range(4))

def test_model(jitcompare):
    c = jitcompare(model, jnp.ones(16), repeat=1, number=2, nest=["layer"])
    assert c.flat.ok and c.nested.ok
"""

#: The report a run of :data:`MEASURED` saves.
REPORT = report_name("test_measured.py::test_model")


def layer(x):
    return sum(i * jnp.sin(x) for i in range(int(os.environ["HELPER_TERMS"])))


def model(x):
    return sum(layer(x) for _ in range(4))


def measured(terms: int, monkeypatch) -> jitmagic.Comparison:
    """``model`` measured (one cold run: only its structure is judged) with a helper of
    ``terms`` terms."""
    monkeypatch.setenv("HELPER_TERMS", str(terms))
    return jitmagic.compare(model, jnp.ones(16), repeat=1, number=2, nest=["layer"],
                            progress=False)


@pytest.fixture
def reports(tmp_path, monkeypatch) -> dict[str, str]:
    """Saved reports: ``old`` (8 terms), ``same`` (8 again), ``doubled`` (16)."""
    out = {}
    for name, terms in (("old", 8), ("same", 8), ("doubled", 16)):
        out[name] = str(tmp_path / f"{name}.json")
        save(measured(terms, monkeypatch), out[name])
    return out


def test_the_command_fails_a_helper_made_twice_as_big(reports, capsys):
    old, new = jitmagic.load(reports["old"]), jitmagic.load(reports["doubled"])
    before, after = old.flat.jaxpr_eqns, new.flat.jaxpr_eqns
    assert before and after and after >= 1.3 * before  # the premise: the helper grew
    assert main(["diff", reports["old"], reports["doubled"], "--fail-on-larger", "1.3", "-v"]) == 1
    captured = capsys.readouterr()
    ratio = jitmagic.diff(old, new).figure("flat", "jaxpr_eqns").new_over_old
    assert (f"jitmagic diff: larger: flat jaxpr equations: NEW {after:,} against OLD's "
            f"{before:,}, {ratio:.2f}× larger (1.3× or more fails)") in captured.err
    assert "larger: flat StableHLO bytes" in captured.err
    assert "program structure, NEW against OLD" in captured.out
    # made smaller again is no failure
    assert main(["diff", reports["doubled"], reports["old"], "--fail-on-larger", "1.3"]) == 0


def test_the_same_code_measured_again_has_the_same_structure(reports, capsys):
    d = jitmagic.diff(reports["old"], reports["same"])
    assert d.structure and {f.kind for f in d.structure} == {"same"}
    assert {f.figure for f in d.structure} >= {"jaxpr_eqns", "stablehlo_bytes", "nested_calls"}
    assert d.figure("nested", "nested_calls").new == 4  # the helper really was nested
    assert main(["diff", reports["old"], reports["same"], "--fail-on-larger", "1"]) == 0
    assert "structure: every figure the same" in capsys.readouterr().out


def test_the_plugin_fails_the_test_of_a_helper_made_twice_as_big(pytester, tmp_path,
                                                                 monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_measured=MEASURED)
    base = tmp_path / "base"

    def run(terms: int, *options: str) -> pytest.RunResult:
        monkeypatch.setenv("HELPER_TERMS", str(terms))
        return pytester.runpytest_inprocess("-p", "jitmagic.frontends.pytest_plugin", "-p",
                                            "no:cacheprovider", *options)

    run(8, f"--jitmagic-save={base}").assert_outcomes(passed=1)
    assert (base / REPORT).exists()
    doubled = run(16, f"--jitmagic-compare={base}", "--jitmagic-fail-on-larger=1.3")
    doubled.assert_outcomes(failed=1)
    doubled.stdout.fnmatch_lines(["jitmagic: larger: flat jaxpr equations: NEW * against "
                                  "OLD's *× larger (1.3× or more fails)",
                                  "LARGER test_measured.py::test_model: flat jaxpr equations *",
                                  "*= 1 failed in *"])
    unchanged = run(8, f"--jitmagic-compare={base}", "--jitmagic-fail-on-larger=1.3")
    unchanged.assert_outcomes(passed=1)
    unchanged.stdout.fnmatch_lines(["test_measured.py::test_model * every figure * same",
                                    "*= 1 passed in *"])

"""The recompile gate where CI users meet it: pytest's marker and fixture (``pytester``,
in this process), and ``python -m jitmagic watch`` (a real process)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import jitmagic

pytest_plugins = ["pytester"]

TESTS = '''
import functools
import jax, jax.numpy as jnp
import pytest

@functools.partial(jax.jit, static_argnames="depth")
def forward(x, depth):
    for _ in range(depth):
        x = jnp.tanh(x)
    return x

@pytest.mark.jitwatch(fail_after_warmup=1)
def test_config_changes_between_steps():
    for depth in (2, 3):
        forward(jnp.ones(3), depth=depth)

@pytest.mark.jitwatch(fail_after_warmup=1)
def test_steady_steps():
    for _ in range(5):
        forward(jnp.ones(4), depth=2)

def test_the_fixture_watches_a_block(jitwatch):
    forward(jnp.ones(5), depth=2)  # warm-up, outside the block
    with jitwatch(fail_after_warmup=0) as w:
        for _ in range(3):
            forward(jnp.ones(5), depth=2)
    assert w.ledger.count == 0

@pytest.mark.jitwatch(fail_after_warmup=1)
def test_its_own_failure_stays_its_own():
    assert 1 == 2, "the test's own assertion"
'''


def test_the_marker_fails_a_test_that_recompiles_and_names_why(pytester, monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # only the one named below
    pytester.makepyfile(test_steps=TESTS)
    result = pytester.runpytest_inprocess("-p", "jitmagic.frontends.watch.pytest_plugin",
                                          "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2)
    out = result.stdout.str()
    assert "FAILED test_steps.py::test_config_changes_between_steps" in out
    assert ("`forward` compiled 2 times here, 1 after its warm-up of 1: the first of them "
            "for a static value of `depth`") in out
    assert "static value of `depth`: 2 → 3" in out  # the ledger under the failure
    failures = out.split("short test summary info")[0]  # CI prints the summary in full
    assert "the test's own assertion" in failures
    assert failures.count("jitwatch gate failed") == 1


@pytest.mark.slow
def test_the_command_runs_a_script_as_written_and_gates_it(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent('''\
        import sys
        import jax, jax.numpy as jnp
        step = jax.jit(lambda w, x: w - 0.1 * x.mean())
        w = jnp.zeros(())
        for n in (8, 8, int(sys.argv[1])):
            w = step(w, jnp.ones(n))
        print("trained", float(w))
    '''))
    saved = tmp_path / "ledger.json"

    def watch(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "jitmagic", "watch", *args],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)

    ok = watch("--save", str(saved), str(script), "8")
    assert ok.returncode == 0, ok.stderr
    assert "trained -0.30" in ok.stdout and "none compiled again" in ok.stdout
    assert isinstance(jitmagic.load(saved), jitmagic.Ledger)
    gated = watch("--fail-after-warmup", "1", str(script), "5")
    assert gated.returncode == 1
    assert "shape of `x`: f32[8] → f32[5]" in gated.stdout
    assert "at line 6  w = step(w, jnp.ones(n))" in gated.stdout
    assert "Gate FAILED" in gated.stdout
    script.write_text("raise SystemExit('bad data')\n")
    failed = watch(str(script))
    assert failed.returncode == 1 and "No compiles" in failed.stdout
    missing = watch(str(tmp_path / "nope.py"))
    assert missing.returncode == 2 and "is not a file" in missing.stderr
    assert json.loads(saved.read_text())["source"] == "train.py"

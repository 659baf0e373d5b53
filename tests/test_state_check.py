"""The kernel state check of ``run_magic`` (conftest) still fails a test that passes but
leaves the kernel changed, and shows a failing test's own error before the leak.

The check runs in a pytest run of its own (``pytester``, in this process), with
conftest as its plugin and ``%jitcompare`` replaced by stand-ins that leak on purpose.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).with_name("conftest.py")

TESTS = '''
import pytest
from IPython import get_ipython


@pytest.fixture(scope="session")
def ip():
    return get_ipython()  # the outer run's shell: start_ipython starts one per process


def leaky_magic(ip, raises=None):
    """A stand-in for %jitcompare that leaves a name in the user's namespace."""
    def magic(name, line):
        ip.user_ns["leaked_by_the_magic"] = line
        if raises:
            raise raises
        return "result"
    return magic


@pytest.fixture
def leaky(ip, monkeypatch):
    monkeypatch.setattr(ip, "run_line_magic", leaky_magic(ip))
    yield
    ip.user_ns.pop("leaked_by_the_magic", None)


@pytest.fixture
def leaky_raising(ip, monkeypatch):
    monkeypatch.setattr(ip, "run_line_magic", leaky_magic(ip, ValueError("the magic's own")))
    yield
    ip.user_ns.pop("leaked_by_the_magic", None)


def test_clean(ip, monkeypatch, run_magic):
    monkeypatch.setattr(ip, "run_line_magic", lambda name, line: "result")
    assert run_magic("f(0)")[0] == "result"


def test_passes_but_leaks(leaky, run_magic):
    assert run_magic("f(1)")[0] == "result"


def test_raises_as_expected_but_leaks(leaky_raising, run_magic):
    with pytest.raises(ValueError, match="the magic's own"):
        run_magic("f(2)")


def test_fails_and_leaks(leaky, run_magic):
    run_magic("f(3)")
    assert 1 + 1 == 3, "the test's own error"


def test_magic_fails_and_leaks(leaky_raising, run_magic):
    run_magic("f(4)")
'''


@pytest.fixture
def outcome(pytester, request, monkeypatch, ip):
    """The run of ``TESTS``: (RunResult, {test name: its call-phase report})."""
    conftest = request.config.pluginmanager.get_plugin(str(CONFTEST))
    assert conftest is not None, "conftest is registered under its path"
    pytester.makepyfile(test_leaks=TESTS)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # only what the check needs
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", plugins=[conftest])
    reports = {r.head_line: r for r in result.reprec.getreports("pytest_runtest_logreport")
               if r.when == "call"}
    return result, reports


def leak(call: str) -> str:
    return (f"the magic changed the kernel's state ('{call}'):\n"
            "  namespace: leaked_by_the_magic changed")


def test_a_passing_test_that_leaves_state_behind_fails(outcome):
    result, reports = outcome
    result.assert_outcomes(passed=1, failed=4)
    assert reports["test_clean"].passed
    for name, call in (("test_passes_but_leaks", "f(1)"),
                       ("test_raises_as_expected_but_leaks", "f(2)")):
        report = reports[name]
        assert report.failed
        assert report.longreprtext == ("the kernel's state check failed after the test:\n"
                                       + leak(call))


@pytest.mark.parametrize(("name", "call", "own_error"), [
    ("test_fails_and_leaks", "f(3)", "AssertionError: the test's own error"),
    ("test_magic_fails_and_leaks", "f(4)", "ValueError: the magic's own"),
])
def test_a_failing_test_shows_its_own_error_then_the_leak(outcome, name, call, own_error):
    result, reports = outcome
    report = reports[name]
    assert report.failed
    assert own_error in report.longreprtext
    said = leak(call).splitlines()[0]
    assert said not in report.longreprtext  # the test's error is its own, unchanged
    assert ("kernel state check (after the error above)", leak(call)) in report.sections
    # On the terminal: the test's error, then the leak, in the test's own failure block.
    out = result.stdout.str()
    block = out[out.index(f"_ {name} _"):]
    assert block.index(own_error) < block.index("kernel state check") < block.index(said)

"""A profiler or tracer the user already runs (``%prun``, ``python -m cProfile``, a
coverage or debugger tracer) survives jitmagic: discovery sets no hook (it reads the
plain trace's program; only a trace that raises is profiled, and its ``sys.setprofile``
hook puts back what was there), and ``--lines``' ``sys.settrace`` hook puts back exactly
what was there."""

from __future__ import annotations

import cProfile
import pstats
import sys

import jax.numpy as jnp
import pytest

import jitmagic

ONCE = {"repeat": 1, "number": 1, "quiet": True}


def helper(x):
    return jnp.sin(x) * 2


def model(x):
    return helper(x) + helper(x)


def before_jitmagic():
    return 1


def after_jitmagic():
    return 2


def _functions(profile: cProfile.Profile) -> set[str]:
    return {name for (_, _, name) in pstats.Stats(profile).stats}


@pytest.mark.parametrize("builtins", [True, False])
def test_compare_under_cprofile_keeps_the_profile_collecting(builtins):
    profile = cProfile.Profile(builtins=builtins)
    profile.enable()
    try:
        before_jitmagic()
        result = jitmagic.compare(model, jnp.ones(4), **ONCE)
        assert sys.getprofile() is profile  # enabled again, not replaced by a broken hook
        after_jitmagic()
        len([])
    finally:
        profile.disable()
    assert result.nested.helpers == ("helper",) and result.outputs_match
    names = _functions(profile)
    assert {"before_jitmagic", "after_jitmagic"} <= names  # kept its stats, kept counting
    assert ("<built-in method builtins.len>" in names) is builtins  # its own settings kept


def test_a_python_profile_function_is_set_again():
    calls = []

    def profile(frame, event, arg):
        if event == "call":
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        jitmagic.compare(model, jnp.ones(4), **ONCE)
        assert sys.getprofile() is profile
        after_jitmagic()
    finally:
        sys.setprofile(None)
    assert calls[-1:] == ["after_jitmagic"] or "after_jitmagic" in calls


def test_lines_puts_a_python_tracer_back():
    def tracer(frame, event, arg):  # like a debugger's or coverage's Python tracer
        return None

    sys.settrace(tracer)
    try:
        result = jitmagic.compare(model, jnp.ones(4), lines=True, **ONCE)
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(None)
    assert result.lines is not None


class _CProfilerOfUnknownKind:
    """What ``sys.getprofile()`` returns for a C-level profiler that is neither callable
    nor has ``enable()``: it cannot be put back."""


def test_discovery_sets_no_profile_hook(monkeypatch):
    set_to = []
    monkeypatch.setattr(sys, "setprofile", set_to.append)
    result = jitmagic.compare(model, jnp.ones(4), **ONCE)
    assert result.nested.helpers == ("helper",) and set_to == []  # read from the program


def broken(x):
    return helper(x) + jnp.ones(3)  # (4,) + (3,): the trace raises


def test_a_profiler_that_cannot_be_put_back_is_named_in_one_warning(monkeypatch):
    # only a trace that raises is profiled (what it called before the error)
    monkeypatch.setattr(sys, "getprofile", lambda: _CProfilerOfUnknownKind())
    with pytest.warns(RuntimeWarning) as caught, pytest.raises(jitmagic.UserCodeError):
        jitmagic.compare(broken, jnp.ones(4), **ONCE)
    (warning,) = [w for w in caught if "profiler" in str(w.message)]
    assert str(warning.message) == (
        "jitmagic: the profiler that was running (_CProfilerOfUnknownKind) cannot be put "
        "back after tracing `broken`: it is off now; start it again")
    assert warning.filename == __file__  # the user's line, not one of jitmagic's frames
    monkeypatch.undo()
    assert sys.getprofile() is None

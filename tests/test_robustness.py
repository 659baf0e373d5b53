"""The bad-input and interruption matrix (docs/behaviour.md: "What happens when…").

Every magic run goes through the ``run_magic`` fixture, which checks after
each one — returned or raised — that the kernel is exactly as before: the
namespace, ``jax.jit``, every JAX config flag, monitoring listeners, figures.
"""

from __future__ import annotations

import os
import signal

import jax
import pytest
from IPython.core.error import UsageError
from support import FAST, SMALL_CELL

from jitmagic.measure.sampling.monitor import COMPILE_EVENT

TWO_HELPERS = """\
import jax.numpy as jnp
def helper(x, n):
    return x * n
def model(x):
    return helper(x, 2) + helper(x, 3)
"""


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        (SMALL_CELL.replace("model(jnp.ones(16))", "print(model(jnp.ones(16)))"),
         "`print` is a builtin_function_or_method, not a Python function of yours"),
        (SMALL_CELL.replace("model(jnp.ones(16))", "class A:\n    pass\nA()"),
         "`A` is a class"),
        (SMALL_CELL.replace("model(jnp.ones(16))", "x = model(jnp.ones(16))"),
         "last statement .* is not a call"),
        (SMALL_CELL.replace("model(jnp.ones(16))", "def g():\n    pass"),
         "last statement .* is not a call"),
    ],
)
def test_entry_rules(run_magic, cell, message):
    with pytest.raises(UsageError, match=message):
        run_magic(FAST, cell)


def test_concretization_error_gets_a_hint(run_magic):
    cell = ("import jax.numpy as jnp\ndef helper(x):\n    if x.sum() > 0:\n        return x\n"
            "    return -x\ndef model(x):\n    return helper(x)\nmodel(jnp.ones(3))\n")
    with pytest.raises(UsageError) as info:
        run_magic(FAST, cell)
    text = str(info.value)
    assert "TracerBoolConversionError" in text and "in your function `helper`" in text
    assert "Hint: a helper uses the Python value of a traced argument" in text


def test_string_argument_is_made_static(run_magic):
    cell = TWO_HELPERS.replace("def model(x):", "def model(x, mode):") + "model(jnp.ones(3), 'a')\n"
    result, _ = run_magic(f"-o {FAST}", cell)
    assert result.flat.ok and result.nested.ok and result.outputs_match


def test_unhashable_custom_object_is_refused(run_magic):
    cell = TWO_HELPERS.replace("def model(x):", "class Box:\n    __hash__ = None\n"
                               "def model(x, box):") + "model(jnp.ones(3), Box())\n"
    with pytest.raises(UsageError, match="argument 2 of `model` holds a Box, which is neither"):
        run_magic(FAST, cell)


def test_variants_returning_different_values_are_shown_as_a_mismatch(run_magic):
    # An impure helper: each trace (discovery, flat, nested) sees a larger count.
    cell = ("import jax.numpy as jnp\ntraces = [0]\ndef helper(x):\n    traces[0] += 1\n"
            "    return x * traces[0]\ndef model(x):\n    return helper(x)\n"
            "model(jnp.ones(4))\n")
    result, cap = run_magic(f"-o {FAST}", cell)
    assert result.outputs_match is False and result.max_abs_diff > 0
    assert result.flat.trace_s > 0 and result.nested.trace_s > 0
    assert "MISMATCH" in cap.outputs[0].data["text/plain"]


def test_persistent_cache_is_switched_off_and_restored(run_magic, tmp_path):
    jax.config.update("jax_compilation_cache_dir", str(tmp_path))
    try:
        result, _ = run_magic(f"-o {FAST}", SMALL_CELL)
        assert jax.config.jax_enable_compilation_cache is True
        assert any("persistent compilation cache was switched off" in w for w in result.warnings)
        assert list(tmp_path.iterdir()) == []  # nothing of ours was written there
    finally:
        jax.config.update("jax_compilation_cache_dir", None)


def test_x64_is_measured_in_float64(run_magic):
    jax.config.update("jax_enable_x64", True)
    try:
        cell = SMALL_CELL.replace("jnp.ones(16)", "jnp.ones(16, dtype=jnp.float64)")
        result, _ = run_magic(f"-o {FAST}", cell)
        assert result.env["x64"] is True and result.outputs_match
        assert "f64[16]" in result.flat.jaxpr_text
    finally:
        jax.config.update("jax_enable_x64", False)


def test_disable_jit_is_refused(run_magic):
    with jax.disable_jit(), pytest.raises(UsageError, match=r"jax.disable_jit\(\) is active"):
        run_magic(FAST, SMALL_CELL)


def _interrupt(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)


def _interrupt_after_discovery(calls=[]):  # noqa: B006 (counts calls across the cell's runs)
    """Press stop on the third trace: the first two are untimed (discovery, and the
    nested variant's check under JAX's leak checker)."""
    calls.append(1)
    if len(calls) == 3:
        _interrupt()


def test_interrupt_during_trace_stops_within_that_stage(run_magic, ip):
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN under `nohup` or `&`
    ip.user_ns["press_stop"] = _interrupt_after_discovery
    try:
        cell = SMALL_CELL.replace("def model(x):\n", "def model(x):\n    press_stop()\n")
        result, cap = run_magic(f"-o {FAST}", cell)
    finally:
        del ip.user_ns["press_stop"]
    where = "interrupted by the user during first call of the flat variant's run 1 of 1"
    assert result.stopped == where
    assert result.flat.samples["trace_s"] == []  # the trace was cut, so not timed
    assert result.flat.samples["first_call_s"] == []
    assert result.flat.samples["lower_s"] == [] and result.nested.samples["trace_s"] == []
    assert f"PARTIAL: {where}" in cap.outputs[0].data["text/plain"].replace("\n    ", " ")
    assert signal.getsignal(signal.SIGINT) is before


def test_interrupt_during_compile_waits_for_the_compile(run_magic):
    def on_compile(event, secs, **kw):
        if event == COMPILE_EVENT and kw.get("fun_name") == "jit(model)":
            _interrupt()

    jax.monitoring.register_event_duration_secs_listener(on_compile)
    try:
        result, _ = run_magic(f"-o {FAST}", SMALL_CELL)
    finally:
        jax.monitoring.unregister_event_duration_listener(on_compile)
    # the compile and the first call it is part of run to their end, then it stops
    assert result.stopped == "interrupted by the user after the flat variant's first call"
    assert len(result.flat.samples["compile_s"]) == 1 and result.flat.compile_s > 0
    assert len(result.flat.samples["first_call_s"]) == 1


def test_interrupt_during_the_execute_loop(run_magic, ip):
    calls = []

    def count_and_stop(x):
        calls.append(1)
        if len(calls) == 3:  # first call, then during the steady-state loop
            _interrupt()
        return x

    ip.user_ns["count_and_stop"] = count_and_stop
    try:
        cell = SMALL_CELL.replace(
            "    return sum(layer(x) for _ in range(4))",
            "    y = jax.pure_callback(count_and_stop, jax.ShapeDtypeStruct(x.shape, x.dtype), x)\n"
            "    return sum(layer(y) for _ in range(4))")
        cell = "import jax\n" + cell
        result, _ = run_magic("-o -r 3 -n 50", cell)
    finally:
        del ip.user_ns["count_and_stop"]
    # the loop asks between chunks of calls: it stops inside the sample, which is dropped
    assert result.stopped == ("interrupted by the user during steady state of the flat "
                              "variant's run 1 of 3")
    assert len(result.flat.samples["first_call_s"]) == 1
    assert result.flat.samples["execute_s"] == []
    assert result.nested.samples["trace_s"] == []


def test_timeout_reports_partial_results(run_magic):
    result, cap = run_magic(f"-o {FAST} --timeout 0.000001", SMALL_CELL)
    # the deadline passed in the discovery trace, which counts: no stage starts after it
    assert result.stopped == "stopped by --timeout after finding your helpers"
    assert not any(result.flat.samples.values()) and not any(result.nested.samples.values())
    assert result.verdict.text == "Stopped before any cold run finished: nothing was measured."
    assert "<b>Partial:</b> stopped by --timeout" in cap.outputs[0].data["text/html"]


def test_a_verdict_cut_short_by_a_stop_says_so_not_to_use_more_runs():
    """A new user's -r auto run stopped by --timeout after one run a side read "one run a
    side has no spread to judge by: use -r 3 or more, or -r auto", -r auto being in
    effect: the stop cut the runs short, and the verdict says that."""
    from support import comparison

    one = {"first_call_s": [0.50], "trace_s": [0.2], "lower_s": [0.1], "compile_s": [0.2]}
    other = {"first_call_s": [0.40], "trace_s": [0.1], "lower_s": [0.1], "compile_s": [0.2]}
    stopped = "stopped by --timeout after the nested variant's first call"
    said = comparison(one, other, stopped=stopped).verdict.headline
    assert (f"after 1 run; the measurement was {stopped}, before the rule could decide"
            in said) and "-r auto" not in said
    assert "use -r 3 or more, or -r auto" in comparison(one, other).verdict.headline


@pytest.mark.parametrize("line", ["--timeout 0", "--timeout -3", "--timeout abc", "-r x"])
def test_bad_option_values(run_magic, line):
    with pytest.raises(UsageError):
        run_magic(line, SMALL_CELL)


def test_a_stopped_comparison_measures_no_orderings(run_magic):
    result, _ = run_magic(f"-o {FAST} --vmap --batch 4 --timeout 0.000001", SMALL_CELL)
    assert result.stopped == "stopped by --timeout after finding your helpers"
    assert result.orderings is None


def test_orderings_stop_at_the_deadline():
    import time

    import jax.numpy as jnp

    from jitmagic.measure.parts.batches import prepare_batch
    from jitmagic.measure.parts.orderings import measure_orderings
    from jitmagic.options import Options

    b = prepare_batch(lambda x: jnp.sin(x).sum(), (jnp.ones(3),), {}, batch=4)
    o = measure_orderings(b, Options(repeat=2, number=2), deadline=time.perf_counter())
    assert o.stopped == "stopped by --timeout after the jit(vmap(f)) ordering's first call"
    assert len(o["jit(vmap(f))"].samples["first_call_s"]) == 1
    assert o["vmap(jit(f))"].samples["first_call_s"] == []


def test_a_stopped_sweep_runs_no_further_values(run_magic):
    cell = SMALL_CELL.replace("range(4)", "range(n)")
    result, _ = run_magic(f"-o {FAST} --sweep n=1,2,3 --timeout 0.000001", cell)
    assert result.stopped == "at n=1: stopped by --timeout after finding your helpers"
    assert result.values == (1,)
    assert len(result.points) == 1

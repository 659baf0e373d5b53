"""The causes say where a saving was measured and what a loop puts into the program.

Nesting's saving is split over the stages the rule calls different, the rest said to be
in no one stage (never called tracing); a scan written with ``unroll`` is named as
what XLA is handed, a line that calls a JAX loop is never told to become one, and a
loop whose rewrite jitmagic cannot measure is said with its share of the program and
that its saving is not measured. And the sentences: a verdict of "no measurable
difference" after its subject, a second start's figures each with its start.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from pathlib import Path

import jax
import jax.numpy as jnp
from jax import lax

import jitmagic
from jitmagic.model.causes.cause import NAME, NOT_MEASURED, SAVING, stage_parts
from jitmagic.model.lines import LineRow, Lines, LineTable, LoopCall, LoopSpan
from jitmagic.model.stats.rule import FASTER, SAME, Difference, median
from jitmagic.model.stats.witness import CPU, on
from jitmagic.render.bundle import text as report_text
from jitmagic.render.causes.said import said_of
from tests.support import comparison

# --- nesting's saving, split over the stages it was measured in -------------------------

FLAT_FIRST = [0.400, 0.402, 0.405, 0.398, 0.401]
NESTED_FIRST = [0.241, 0.243, 0.240, 0.244, 0.242]


def _measured(flat_trace, nested_trace, compile_s=(0.33, 0.36, 0.30, 0.35, 0.32)):
    """A comparison whose first call nesting makes 159 ms faster, with the stages given
    (lowering the same in both, XLA's compile noisy alike in both)."""
    lower = [0.020, 0.021, 0.020, 0.022, 0.021]
    flat = {"trace_s": flat_trace, "lower_s": lower, "compile_s": list(compile_s),
            "first_call_s": FLAT_FIRST, "execute_s": [1e-4] * 5}
    nested = {"trace_s": nested_trace, "lower_s": lower,
              "compile_s": list(reversed(compile_s)), "first_call_s": NESTED_FIRST,
              "execute_s": [1e-4] * 5}
    return comparison(flat, nested)


def _nesting(c):
    return next(x for x in c.why if x.name.startswith(NAME))


def test_a_saving_no_stage_holds_is_said_in_no_one_stage_never_tracing():
    """A Haiku model whose XLA compile is 90% of the first call: 159 ms saved nested,
    no stage differing measurably; it was "helpers traced on every call", 159 ms, more
    than the flat trace and lowering took (98 ms)."""
    trace = [0.078, 0.075, 0.080, 0.077, 0.079]
    c = _measured(trace, [0.077, 0.080, 0.076, 0.078, 0.079])
    assert c.difference("first_call_s").kind == FASTER
    assert not any(c.difference(p).significant for p in ("trace_s", "lower_s", "compile_s"))
    cause = _nesting(c)
    assert cause.kind == SAVING and cause.seconds == median(FLAT_FIRST) - median(NESTED_FIRST)
    assert cause.name == f"{NAME} (saved in no one stage)"
    assert "trac" not in cause.name
    assert "no stage differs measurably (Python tracing, lowering to StableHLO, XLA compile):" \
           " the 159 ms are in no one stage" in cause.said
    assert f"1. {NAME} (saved in no one stage), 159 ms: nesting `layer`: the first call is " \
           in c.report(verbose=True)


def test_a_faster_trace_is_its_own_part_never_more_than_the_flat_trace_took():
    trace = [0.060, 0.061, 0.060, 0.062, 0.061]
    c = _measured(trace, [0.010, 0.011, 0.010, 0.010, 0.011])
    assert c.difference("trace_s").kind == FASTER
    cause = _nesting(c)
    assert cause.name == f"{NAME} (saved in Python tracing and no one stage)"
    # the trace's part: its medians' difference, within what the flat trace took
    assert "by stage: Python tracing 51 ms less (6.10× faster, 5.45×–6.20×), 108 ms in no " \
           "one stage" in cause.said
    ((label, seconds, _),) = stage_parts(c)
    assert label == "Python tracing" and seconds <= median(trace)


def test_a_saving_all_in_the_trace_is_tracing_alone():
    flat_first = [0.200, 0.201, 0.202, 0.199, 0.200]
    nested_first = [0.100, 0.101, 0.100, 0.102, 0.100]
    flat = {"trace_s": [0.110, 0.111, 0.112, 0.110, 0.111], "lower_s": [0.02] * 5,
            "compile_s": [0.06] * 5, "first_call_s": flat_first, "execute_s": [1e-4] * 5}
    nested = {"trace_s": [0.010, 0.011, 0.012, 0.010, 0.011], "lower_s": [0.02] * 5,
              "compile_s": [0.06] * 5, "first_call_s": nested_first,
              "execute_s": [1e-4] * 5}
    cause = _nesting(comparison(flat, nested))
    assert cause.name == f"{NAME} (saved in Python tracing)"
    assert "no one stage" not in cause.said


def test_a_stage_nesting_slowed_is_said_as_a_cost_beside_the_faster_one():
    flat = {"trace_s": [0.160, 0.161, 0.160, 0.162, 0.161], "lower_s": [0.02] * 5,
            "compile_s": [0.100, 0.101, 0.100, 0.102, 0.101],
            "first_call_s": [0.300, 0.301, 0.302, 0.299, 0.301], "execute_s": [1e-4] * 5}
    nested = {"trace_s": [0.011, 0.010, 0.011, 0.012, 0.011], "lower_s": [0.02] * 5,
              "compile_s": [0.141, 0.140, 0.142, 0.141, 0.141],
              "first_call_s": [0.191, 0.190, 0.192, 0.191, 0.191], "execute_s": [1e-4] * 5}
    cause = _nesting(comparison(flat, nested))
    assert cause.name == f"{NAME} (saved in Python tracing)"
    assert "Python tracing 150 ms less (" in cause.said
    assert "XLA compile 40 ms more (1.40× slower, " in cause.said
    assert "no one stage" not in cause.said


def stack(x, w):
    """A helper reused in a loss under jax.grad, as a layer stack is trained."""
    return jnp.tanh(x @ w) * 0.5 + jnp.sin(x) * 0.1


def loss(params, x):
    for w in params:
        x = stack(x, w)
    return (x ** 2).mean()


def grads(params, x):
    return jax.grad(loss)(params, x)


def test_on_a_real_run_each_part_is_one_the_rule_called_and_within_its_flat_stage():
    params = [jnp.eye(16) * 0.5 for _ in range(8)]
    c = jitmagic.compare(grads, params, jnp.ones((4, 16)), repeat=3, number=1,
                         progress=False)
    cause = _nesting(c)
    if cause.kind != SAVING:  # a busy machine may leave it undecided: nothing to split
        assert cause.name == NAME and math.isnan(cause.seconds)
        return
    clock = c.clock_of("first_call_s")
    for phase, label in (("trace_s", "Python tracing"), ("lower_s", "lowering to StableHLO"),
                         ("compile_s", "XLA compile")):
        d = c.difference(phase, clock)
        assert (f" {label} " in f" {cause.said}") == d.significant or label == "XLA compile"
        if label in cause.name:
            assert d.kind == FASTER
    flat_python = sum(median(on(c.flat.samples, p, clock)) for p in ("trace_s", "lower_s"))
    if "Python tracing" in cause.name or "lowering" in cause.name:
        assert flat_python > 0


# --- the sentences -------------------------------------------------------------------------

def test_no_measurable_difference_follows_its_subject_on_either_clock():
    same = Difference(SAME, 1.0, True, 9, 0.95, 1.04)
    assert said_of("the first call", same, CPU) == (
        "the first call shows no measurable difference in CPU time (0.95×–1.04×)")
    assert said_of("the first call", same, "wall") == (
        "the first call shows no measurable difference (0.95×–1.04×)")
    # a part decided on wall time, in a section of CPU time: its clock named
    faster = Difference(FASTER, 2.0, True, 5, 1.5, 2.6)
    assert said_of("the first call", faster, "wall", CPU) == (
        "the first call is 2.00× faster in wall time (1.50×–2.60×)")
    assert said_of("the first call", faster, CPU, CPU) == (
        "the first call takes 2.00× less CPU time (1.50×–2.60×)")
    assert said_of("the first call", faster, "wall", "wall") == (
        "the first call is 2.00× faster (1.50×–2.60×)")
    flat = {"trace_s": [0.01] * 5, "lower_s": [0.01] * 5, "compile_s": [0.1] * 5,
            "first_call_s": [0.200, 0.201, 0.202, 0.199, 0.200], "execute_s": [1e-4] * 5}
    nested = dict(flat, first_call_s=[0.201, 0.200, 0.199, 0.202, 0.200])
    c = comparison(flat, nested)
    assert all(" is no measurable" not in x.said for x in c.why)
    assert "nesting `layer`: the first call shows no measurable difference" in _nesting(c).said


def test_docs_say_the_pytest_plugin_needs_pytest_installed():
    text = (Path(__file__).parent.parent / "docs" / "reports.md").read_text()
    assert "`pip install -e .` (or `pip install jitmagic`) does not bring it" in text


# --- loops: unroll, fori_loop, a Python loop --------------------------------------------

W = jnp.eye(16) * 0.5


def step(c, x):
    c = jnp.tanh(c @ W + x)
    return c * jnp.sin(c) + 0.1, c.sum()


def scanned(x, xs):
    """A scan with unroll=8, called twice in a short Python loop."""
    for _ in range(2):
        x, ys = lax.scan(step, x, xs, unroll=8)
    return x.sum() + ys.sum()


SCAN_LINE = scanned.__code__.co_firstlineno + 3


def test_a_scan_with_unroll_is_named_and_never_told_to_become_a_scan():
    c = jitmagic.compare(scanned, jnp.ones(16), jnp.ones((16, 16)), repeat=2, number=1,
                         lines=True, progress=False)
    by_name = {x.name: x for x in c.why}
    compiling, tracing = by_name["XLA compile"], by_name["Python tracing"]
    assert f"line {SCAN_LINE}'s `unroll=8`: `unroll=1` (the default) compiles the body " \
           "once" in compiling.fix
    assert "`jax.lax.scan` compiles its body once" not in compiling.fix
    assert "Python loop" not in tracing.fix and "Python loop" not in compiling.fix
    unrolled = by_name[f"the `jax.lax.scan` at line {SCAN_LINE} (unroll=8, 16 steps)"]
    table = c.lines.flat
    body = next(x for x in table.loop_calls if x.line == SCAN_LINE).body_eqns
    assert unrolled.kind == NOT_MEASURED and unrolled.said.startswith(
        f"XLA compiles 8 copies of the body in each; their bodies are {body} of the "
        f"program's {table.total_eqns} jaxpr equations ({body / table.total_eqns:.0%}); what "
        "rewriting it saves is not measured")
    assert not any(x.name.startswith("the Python loop") for x in c.why)
    assert f"\n  the `jax.lax.scan` at line {SCAN_LINE} (unroll=8, 16 steps): XLA " \
        in report_text(c, verbose=True)


def block(x, xs):
    """A layer whose work is a scan, as a model file holds it."""
    return lax.scan(step, x, xs, unroll=8)[0]


def layered(x, xs):
    for _ in range(2):
        x = block(x, xs)  # a short Python loop elsewhere: the scan's body is traced once
    return x.sum()


def test_a_short_python_loop_around_a_scan_elsewhere_is_not_the_loop_to_rewrite():
    found = jitmagic.lines(layered, jnp.ones(16), jnp.ones((16, 16)))
    assert found.flat.python_loop() is None
    assert not any("Python loop" in h for h in found.hints())
    assert any("with unroll=8, 16 steps: XLA compiles 8 copies" in h for h in found.hints())


def layer(x, xs, scale):
    """A layer whose step closes over its own scale: each call traces a body of its own."""
    def scaled_step(c, x):
        c = jnp.tanh(c @ W * scale + x)
        return c * jnp.sin(c) + 0.1, c.sum()
    return lax.scan(scaled_step, x, xs, unroll=8)[0]


LAYER_SCAN_LINE = layer.__code__.co_firstlineno + 5


def two_layers(x, xs):
    return layer(layer(x, xs, 1.0), xs, 0.5).sum()


def test_a_scan_line_called_twice_gives_both_calls_bodies_as_the_programs_share():
    """The line's share of the program was one call's body: 42% beside a hint saying its
    helper's lines built 92% (the two bodies, 85%)."""
    x, xs = jnp.ones(16), jnp.ones((16, 16))
    found = jitmagic.lines(two_layers, x, xs)
    scans = [e for e in jax.make_jaxpr(two_layers)(x, xs).eqns if e.primitive.name == "scan"]
    bodies = {id(e.params["jaxpr"]): len(e.params["jaxpr"].eqns) for e in scans}
    assert len(scans) == len(bodies) == 2  # two calls, a body each
    (call,) = [c for c in found.flat.loop_calls if c.line == LAYER_SCAN_LINE]
    assert call.calls == 2 and call.body_eqns == sum(bodies.values())
    total = found.flat.total_eqns
    share = f"({call.body_eqns / total:.0%})"
    assert call.body_eqns / total > 0.5  # one body's share was under half
    assert any(h.startswith(f"line {LAYER_SCAN_LINE} calls `jax.lax.scan` 2 times with "
                            f"unroll=8, 16 steps: XLA compiles 8 copies of the body in each; "
                            f"their bodies are {call.body_eqns} of the program's {total} "
                            f"jaxpr equations {share}") for h in found.hints())
    assert LoopCall.from_list(call.to_list()) == call  # the count is saved with it

def deep_step(c, x):
    for _ in range(16):
        c = block_layer(c) + x  # a Python loop inside the scan's step: it unrolls there
    return c, None


def block_layer(c):
    return jnp.tanh(c @ W) * 0.5


def deep(x, xs):
    return lax.scan(deep_step, x, xs)[0].sum()


def test_a_python_loop_inside_a_scans_step_is_still_the_loop_to_rewrite():
    found = jitmagic.lines(deep, jnp.ones(16), jnp.ones((4, 16)))
    row, share = found.flat.python_loop()
    assert row.line == deep_step.__code__.co_firstlineno + 2 and share > 0.5


def counted(x):
    """A fori_loop unrolled 4 steps at a time, in a model's method-like helper."""
    return lax.fori_loop(0, 12, lambda i, c: jnp.tanh(c @ W) + i, x, unroll=4).sum()


def test_a_fori_loop_with_unroll_is_named_as_written():
    found = jitmagic.lines(counted, jnp.ones(16))
    (loop,) = found.flat.loop_calls
    assert (loop.primitive, loop.length, loop.unroll, loop.copies) == ("fori_loop", 12, 4, 4)
    assert any(h.startswith(f"line {loop.line} calls `jax.lax.fori_loop` with unroll=4, "
                            "12 steps: XLA compiles 4 copies of its body") for h in found.hints())
    assert Lines.from_dict(found.to_dict()).flat.loop_calls == found.flat.loop_calls


def plain_scan(x, xs):
    for _ in range(3):
        x = lax.scan(step, x, xs)[0]
    return x.sum()


def test_a_scan_without_unroll_in_a_short_loop_gets_no_advice_to_scan():
    found = jitmagic.lines(plain_scan, jnp.ones(16), jnp.ones((16, 16)))
    assert [x.unroll for x in found.flat.loop_calls] == [1]
    assert found.flat.python_loop() is None
    assert not any("lax.scan" in h or "Python loop" in h for h in found.hints())


def unrolled(x):
    for k in range(32):
        x = jnp.tanh(x @ W) + jnp.sin(x * k) * 0.01
    return x.sum()


def test_a_python_loop_is_said_with_its_share_and_that_the_rewrite_is_not_measured():
    c = jitmagic.compare(unrolled, jnp.ones((4, 16)), repeat=2, number=1, lines=True,
                         progress=False)
    (loop,) = [x for x in c.why if x.name.startswith("the Python loop at line ")]
    row, share = c.lines.flat.python_loop()
    source, first = inspect.getsourcelines(unrolled)
    # named by its own `for` line, the line that builds the program said inside it
    for_line = first + next(i for i, t in enumerate(source) if t.lstrip().startswith("for "))
    assert row.line == for_line + 1 and "jnp.tanh" in source[row.line - first]
    assert loop.kind == NOT_MEASURED and loop.name == f"the Python loop at line {for_line}"
    assert loop.said.startswith(f"line {row.line}, inside it, builds {share:.0%} of the "
                                f"program's {c.lines.flat.total_eqns:,} jaxpr equations, "
                                "unrolled")
    assert f"runs inside the Python loop at line {for_line}: " in c.lines.flat.loop_hint()
    assert "what rewriting it saves is not measured" in loop.said
    assert "what the rewrite saves is not measured" in {x.name: x for x in c.why}[
        "Python tracing"].fix


def test_a_loop_not_measured_is_named_under_the_measured_savings_it_may_outgrow():
    """A 64-step Python loop rewritten as a scan by hand made the first call 3.6× faster,
    nesting 1.5×: the measured saving is ranked, the loop is said not ranked beside it."""
    rows = (LineRow("model.py", 4, "        x = layer(x)", None, 2, 380, 500),
            LineRow("model.py", 8, "    return jnp.sin(x)", None, 380, 380, 500))
    table = LineTable("flat", rows, loops=(LoopSpan("model.py", 3, 4),))
    lines = Lines("model", {"flat": table, "nested": dataclasses.replace(table, variant="nested")})
    c = dataclasses.replace(_measured([0.078, 0.075, 0.080, 0.077, 0.079],
                                      [0.077, 0.080, 0.076, 0.078, 0.079]), lines=lines)
    shown = report_text(c, verbose=True)
    assert (f"1. {NAME} (saved in no one stage), 159 ms: " in shown
            and "\nnot ranked among them, as not measured, and possibly bigger: rewriting the "
            "Python loop at line 3 (below)\n" in shown)
    assert ("\n  the Python loop at line 3: line 4, inside it, builds 99% of the program's "
            "382 jaxpr ") in shown


def test_loop_calls_round_trip_and_an_older_table_has_none():
    call = LoopCall("m.py", 12, "scan", 64, 8, 7)
    assert LoopCall.from_list(call.to_list()) == call and call.copies == 8
    assert LoopCall("m.py", 3, "scan", 5, 8, 2).copies == 5  # unroll past the length
    old = {"flat": [], "entry": "f"}
    assert Lines.from_dict(old).flat.loop_calls == ()

"""--effort's out-of-line row: each helper the comparison nests compiled once as its own
program and called from the caller (Equinox's noinline), on real JAX.

The out-of-line program really calls a separate program (its jaxpr holds the calls, its
StableHLO a host callback, and the helper's program compiles apart from the caller's),
its outputs equal the flat program's, a helper differentiated through is refused with
the reason, the record round-trips and the section says the line to write. No timed
assertion.
"""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import pytest
import realworld_layers as L

from jitmagic.measure.parts.effort import add_inner_compiles, measure_effort, out_of_line_row
from jitmagic.measure.pipeline import variants_of
from jitmagic.measure.sampling.monitor import COMPILE_EVENT, Monitor
from jitmagic.measure.variants.out_of_line import PRIMITIVE, out_of_line_calls
from jitmagic.model.causes.effort import OUT_OF_LINE, Effort, EffortRow, Setting
from jitmagic.model.notes import Parts
from jitmagic.render.causes.effort import text

WS = tuple(jnp.full((8, 8), 0.01 * (i + 1)) for i in range(3))
X = jnp.ones((4, 8))


DENSE = "realworld_layers.dense"


#: Why a helper differentiated through is not kept out of line, word for word.
DIFFERENTIATED = ("it is differentiated through (under jax.grad or jax.jvp): Equinox's "
                  "noinline would compile another program for its tangent and another for "
                  "its transpose, so it would not be the helper compiled once")


def forward(ws, x):
    for w in ws:  # the user's layer module's helper, reused in a loop
        x = L.dense(w, x)
    return x


def loss_grad(ws, x):
    return jax.grad(lambda x: forward(ws, x).sum())(x)  # the helper differentiated through


def row_of(fn, args):
    prepared = variants_of(fn, args, {})
    helpers = prepared["nested"].variant.planned
    return prepared, out_of_line_row(prepared["nested"], helpers)


def test_the_out_of_line_program_calls_the_helper_as_a_separate_program():
    prepared, (row, why) = row_of(forward, (WS, X))
    assert why is None and row is not None
    assert row.kept == {DENSE: 3} and row.refused == {}
    variant = row.prepared.variant
    traced = jax.jit(variant.fn).trace(*row.prepared.args)
    assert out_of_line_calls(traced.jaxpr) == 3
    assert PRIMITIVE in str(traced.jaxpr)
    hlo = traced.lower().as_text()
    assert hlo.count("custom_call @xla_ffi_python_cpu_callback") == 3 or \
        "callback" in hlo  # another backend's callback target
    flat = jax.jit(prepared["flat"].variant.fn).trace(*prepared["flat"].args)
    assert out_of_line_calls(flat.jaxpr) == 0 and "callback" not in flat.lower().as_text()
    assert f"equinox.internal.noinline({DENSE})" in (row.setting.config or "")


def test_the_helper_compiles_as_its_own_program_inside_the_first_call():
    _, (row, _) = row_of(forward, (WS, X))
    assert row is not None
    fn = row.prepared.variant.fn
    jax.clear_caches()
    with Monitor().listening() as monitor:
        jax.block_until_ready(jax.jit(fn)(*row.prepared.args))
    names = [f for _, e, _, f in monitor.durations if e == COMPILE_EVENT]
    assert f"jit({fn.__name__})" in names
    assert len([n for n in names if n != f"jit({fn.__name__})"]) >= 1  # the helper's own
    times = {"compile_s": 0.0}
    add_inner_compiles(times, monitor, 0, fn.__name__)
    inner = sum(s for _, e, s, f in monitor.durations
                if e == COMPILE_EVENT and f != f"jit({fn.__name__})")
    assert times["compile_s"] == pytest.approx(inner) and inner > 0


def test_outputs_equal_the_flat_programs():
    prepared, (row, _) = row_of(forward, (WS, X))
    assert row is not None
    got = jax.jit(row.prepared.variant.fn)(*row.prepared.args)
    want = jax.jit(prepared["flat"].variant.fn)(*prepared["flat"].args)
    assert jnp.allclose(got, want, rtol=1e-6, atol=1e-6)


def test_a_helper_under_grad_is_refused_with_the_reason():
    _, (row, why) = row_of(loss_grad, (WS, X))
    assert row is None
    assert isinstance(why, Parts) and why.kind == "out_of_line_none_kept"  # a fact, said as before
    said = str(why)
    assert said.startswith("out of line was not measured: no helper could be kept out of line (")
    assert f"`{DENSE}` {DIFFERENTIATED}" in said


def test_measured_as_a_row_with_its_helpers_said_and_the_record_round_trips():
    prepared, (row, _) = row_of(forward, (WS, X))
    e = measure_effort(prepared["flat"], rounds=3, settings=[], out_of_line=row)
    r = e.rows[OUT_OF_LINE]
    assert r.kept == {DENSE: 3} and r.outputs in ("exact", "rounding")
    assert len(r.samples["compile_s"]) == 3 and len(r.samples["execute_s"]) == 3
    back = Effort.from_dict(json.loads(json.dumps(e.to_dict())))
    assert back.rows[OUT_OF_LINE].kept == {DENSE: 3}
    shown = text(e)
    assert "out of line" in shown and f"`{DENSE}` kept out of line (traced 3 times)" in shown


def test_an_older_row_without_the_out_of_line_fields_loads():
    d = EffortRow(Setting("s", {"a": 1})).to_dict()
    del d["kept"], d["refused"]
    assert EffortRow.from_dict(d).kept == {} and EffortRow.from_dict(d).refused == {}

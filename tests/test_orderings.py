"""vmap/jit orderings: real measurements on a small batch, the report format, bad input."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import pytest
from hypothesis import given
from hypothesis import strategies as st
from IPython.core.error import UsageError
from support import FAST, VMAP_CELL

import jitmagic
from jitmagic.errors import InputError
from jitmagic.measure.orderings import compare_orderings
from jitmagic.measure.sampling.structure import normalized_hlo
from jitmagic.model.orderings import ORDERINGS, Orderings
from jitmagic.options import parse_in_axes


def small(x):
    for _ in range(2):
        x = jnp.tanh(x @ x.T) + x
    return x.sum()


@pytest.fixture(scope="module")
def compared() -> jitmagic.Comparison:
    """``jitmagic.compare`` with ``batch``: the engine's comparison plus the orderings."""
    return jitmagic.compare(small, jnp.ones((8, 8)), batch=8, repeat=1, number=2)


@pytest.fixture(scope="module")
def measured(compared) -> Orderings:
    return compared.orderings


def test_four_orderings_measured(measured):
    assert tuple(measured.rows) == ORDERINGS
    assert measured.batch == 8 and measured.built_batch and measured.in_axes == 0
    for row in measured.rows.values():
        assert row.error is None
        assert row.first_call_s > 0 and row.execute_s > 0 and row.execute_loops == 2
        assert len(row.samples["first_call_s"]) == 1 and len(row.samples["execute_s"]) == 1
        assert row.compile_events >= 1 and row.jaxpr_eqns >= 1 and row.jaxpr_text
    assert measured.outputs_match is True and measured.max_abs_diff == 0


def test_programs_compared_after_xla(measured):
    rows = measured.rows
    # The same XLA program, whichever way round the jit goes ...
    assert rows["jit(vmap(jit(f)))"].same_program is True
    assert rows["vmap(jit(f))"].same_program is True
    # ... but the jaxprs differ: jit(vmap(f)) is flat, the others hold one jit call.
    assert rows["jit(vmap(f))"].nested_calls == 0 and rows["vmap(jit(f))"].nested_calls == 1
    # No jit at all: op-by-op dispatch, one compile per primitive, no single program.
    assert rows["vmap(f)"].same_program is None and rows["vmap(f)"].stablehlo_bytes is None
    assert rows["vmap(f)"].compile_events > rows["jit(vmap(f))"].compile_events
    assert all(rows[n].stablehlo_bytes > 0 for n in ORDERINGS if n != "vmap(f)")


def test_a_different_function_is_a_different_program():
    xb = jnp.ones((4, 8, 8))
    a = jax.jit(jax.vmap(small)).trace(xb).lower().compile().as_text()
    b = jax.jit(jax.vmap(lambda x: jnp.sin(x).sum())).trace(xb).lower().compile().as_text()
    assert normalized_hlo(a) != normalized_hlo(b)
    assert not any("metadata=" in line for line in normalized_hlo(a))


def test_report_format_round_trips(measured):
    d = json.loads(json.dumps(measured.to_dict()))
    assert d["batch"] == 8 and d["in_axes"] == 0
    assert list(d["rows"]) == ["jit(vmap(f))", "vmap(jit(f))", "vmap(f)", "jit(vmap(jit(f)))"]
    row = d["rows"]["vmap(jit(f))"]
    for key in ("first_call_s", "execute_s", "samples", "jaxpr_eqns", "stablehlo_bytes",
                "same_program", "compile_events"):
        assert key in row
    assert row["first_call_s"] == row["samples"]["first_call_s"][0]
    assert Orderings.from_dict(d).to_dict() == d


def test_users_batch_with_in_axes():
    def affine(x, w, scale):
        return (x @ w) * scale

    xs, w = jnp.ones((5, 3)), jnp.ones((3, 2))
    o = compare_orderings(affine, xs, w, 2.0, in_axes=(0, None, None), repeat=1, number=1)
    assert o.batch == 5 and not o.built_batch and o.in_axes == (0, None, None)
    assert o.outputs_match is True
    assert o["jit(vmap(jit(f)))"].same_program is True


def test_compare_puts_orderings_into_the_comparison(compared):
    assert compared.flat.ok and compared.nested.ok  # the engine's comparison still runs
    assert compared.to_dict()["orderings"]["batch"] == 8
    again = jitmagic.Comparison.from_dict(json.loads(json.dumps(compared.to_dict())))
    assert again.orderings.to_dict() == json.loads(json.dumps(compared.to_dict()))["orderings"]


@pytest.mark.parametrize(("spec", "axes"), [("0", 0), ("0,None", (0, None)), ("1, -", (1, None)),
                                            ("0,", (0,))])
def test_in_axes_spec(spec, axes):
    assert parse_in_axes(spec) == axes


@given(st.lists(st.one_of(st.none(), st.integers(-5, 5)), min_size=2, max_size=6))
def test_in_axes_spec_round_trips(axes):
    assert parse_in_axes(",".join("None" if a is None else str(a) for a in axes)) == tuple(axes)


def test_magic_with_the_users_batch(run_magic):
    cell = ("import jax.numpy as jnp\ndef g(x, w, scale):\n    return jnp.tanh(x @ w) * scale\n"
            "g(jnp.ones((6, 4)), jnp.ones((4, 3)), 2)\n")
    result, _ = run_magic(f"-o {FAST} --no-plot --in-axes 0,None,None", cell)
    o = result.orderings
    assert o.batch == 6 and o.in_axes == (0, None, None) and not o.built_batch
    assert o.outputs_match is True and o["vmap(jit(f))"].same_program is True


@pytest.mark.parametrize(("spec", "message"), [("x", "'x' is not an axis"),
                                               ("None", "maps no argument"),
                                               ("0;1", "is not an axis")])
def test_bad_in_axes_spec(spec, message):
    with pytest.raises(InputError, match=message):
        parse_in_axes(spec)


@pytest.mark.parametrize(
    ("line", "cell", "message"),
    [
        ("--batch 0", VMAP_CELL, "--batch must be at least 1, not 0"),
        ("--batch -3", VMAP_CELL, "--batch must be at least 1"),
        ("--in-axes 0,None", VMAP_CELL, "gives 2 axes but the call has 1"),
        ("--in-axes 2", VMAP_CELL, r"shape \(8, 8\)\) along axis 2, which it does not have"),
        ("--in-axes zero", VMAP_CELL, "'zero' is not an axis"),
        ("--in-axes None", VMAP_CELL, "maps no argument"),
        ("--batch 4 --in-axes 0", VMAP_CELL, "Use one of them"),
        ("--vmap", "def f(n):\n    return n * 2\nf(3)\n", "needs an array argument"),
        ("--in-axes 0,0", "import jax.numpy as jnp\ndef f(x, y):\n    return x + y\n"
         "f(jnp.ones(3), jnp.ones(4))\n", r"different lengths: .* 3; .* 4"),
        ("--in-axes 0,1", "import jax.numpy as jnp\ndef f(x, n):\n    return x * n\n"
         "f(jnp.ones(3), 2)\n", "argument 2 .*holds no array: write None"),
        ("--vmap", "import jax, numpy as np, jax.numpy as jnp\ndef f(x):\n"
         "    return jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)\n"
         "f(jnp.ones(3))\n", "cannot be batched as asked"),
    ],
)
def test_bad_vmap_input_gets_a_clear_message(run_magic, line, cell, message):
    with pytest.raises(UsageError, match=message):
        run_magic(f"{FAST} {line}", cell)

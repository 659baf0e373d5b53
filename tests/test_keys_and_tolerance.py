"""Typed PRNG keys everywhere (--vmap, memory estimates, outputs), and outputs compared
with a tolerance that knows each dtype's rounding (docs/outputs.md)."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jitmagic
from jitmagic.measure.parts import batches
from jitmagic.measure.sampling.outputs import OutputDiff, compare_outputs, within_rounding
from jitmagic.model.comparison import Comparison
from jitmagic.model.saved.schema import ReportSchemaError

ONCE = {"repeat": 1, "number": 1, "quiet": True}


# --------------------------------------------------------------------------- keys


def noise(key, x):
    return x + jax.random.normal(key, x.shape)


def noisy(key, x):
    k1, k2 = jax.random.split(key)
    return noise(k1, x) * noise(k2, x), k1


@pytest.mark.slow
def test_vmap_over_a_typed_key_keeps_the_comparison_and_compares_the_keys():
    result = jitmagic.compare(noisy, jax.random.key(0), jnp.ones(4), vmap=True, batch=2, **ONCE)
    assert result.nested.helpers == ("noise",)
    assert result.outputs_match is True and result.outputs_kind == "exact"
    o = result.orderings
    # vmap(f) runs op by op: its float output may round differently from the jitted ones
    assert o.batch == 2 and o.outputs_match is True and o.outputs_kind in ("exact", "rounding")
    assert o.outputs_leaf in (None, "[0]")  # never the key, `[1]`
    assert all(row.error is None for row in o.rows.values())


def test_memory_estimates_size_keys_by_their_key_data():
    key = jax.random.key(0)
    assert batches._nbytes(key) == jax.random.key_data(key).nbytes == 8
    shaped = jax.ShapeDtypeStruct((64, 3), key.dtype)
    assert batches._nbytes({"k": shaped, "x": jnp.ones(2)}) == 64 * 3 * 8 + 2 * 4


def test_outputs_holding_keys_are_compared_by_their_key_data():
    same = compare_outputs({"k": jax.random.key(0)}, {"k": jax.random.key(0)})
    assert same.kind == "exact" and same.match
    other = compare_outputs({"k": jax.random.key(0)}, {"k": jax.random.key(1)})
    assert other.kind == "mismatch" and other.leaf == "k"


# --------------------------------------------------------------------------- crafted


def test_a_few_ulps_in_float32_is_rounding_at_the_dotted_leaf():
    w = jnp.linspace(-1.0, 1.0, 256, dtype=jnp.float32)
    ulps = w.at[::7].set(jnp.nextafter(jnp.nextafter(w[::7], 2.0), 2.0))  # 2 ulps up
    d = compare_outputs({"params": {"b": w[:3], "w_fc": w}}, {"params": {"b": w[:3],
                                                                        "w_fc": ulps}})
    assert d.kind == "rounding" and d.match and d.describe() is None
    assert d.leaf == "params.w_fc" and d.dtype == "float32"
    assert 0 < d.max_abs_diff < 1e-6


def test_a_difference_of_1e_2_is_a_mismatch_naming_its_leaf():
    w = jnp.linspace(-1.0, 1.0, 256, dtype=jnp.float32)
    d = compare_outputs([{"w": w}], [{"w": w * (1 + 1e-2)}])
    assert d.kind == "mismatch" and not d.match and d.leaf == "[0].w"
    assert str(d.describe()) == "`[0].w` (largest difference 0.01)"


def test_the_rule_scales_with_each_dtype():
    one = np.ones(100)
    for dtype, close, far in ((jnp.float64, 1e-10, 1e-6), (jnp.float32, 1e-5, 1e-2),
                              (jnp.bfloat16, 2e-2, 0.5), (jnp.complex64, 1e-5, 1e-2)):
        x = np.asarray(one, dtype)  # numpy: float64 without jax_enable_x64
        assert compare_outputs(x, x * (1 + close)).kind == "rounding", dtype
        assert compare_outputs(x, x * (1 + far)).kind == "mismatch", dtype
    assert within_rounding(3.4e-4, 1.0, float(jnp.finfo(jnp.float32).eps))
    assert not within_rounding(3.5e-4, 1.0, float(jnp.finfo(jnp.float32).eps))


def test_integer_and_bool_leaves_must_be_exactly_equal():
    big = jnp.full(1000, 10**6, jnp.int32)
    assert compare_outputs(big, big.at[3].add(1)).kind == "mismatch"
    assert compare_outputs(jnp.array([True, False]), jnp.array([True, True])).kind == "mismatch"
    assert compare_outputs(big, big).kind == "exact"


def test_inf_and_nan_compare_by_place_without_a_numpy_warning():
    x = jnp.array([1.0, jnp.nan, jnp.inf, -jnp.inf, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compare_outputs(x, x).kind == "exact"
        assert compare_outputs(x, x.at[0].add(1e-7)).kind == "rounding"
        moved = compare_outputs(x, jnp.array([1.0, jnp.inf, jnp.nan, -jnp.inf, 0.0]))
        flipped = compare_outputs(x, x.at[2].set(-jnp.inf))
        huge = compare_outputs(np.array([1e308, -1e308]), np.array([-1e308, 1e308]))
        all_nan = compare_outputs(jnp.full(3, jnp.nan), jnp.zeros(3))
    assert moved.kind == flipped.kind == huge.kind == all_nan.kind == "mismatch"
    assert "NaN or infinite values in different places" in str(moved.describe())


def test_outputs_that_cannot_be_compared_are_said_so_without_raising():
    class Opaque:
        def __eq__(self, other):
            raise TypeError("no comparing me")

    check = OutputDiff(expected=2)
    check.add("flat", {"x": jnp.ones(2), "o": Opaque()})
    check.add("nested", {"x": jnp.ones(2), "o": Opaque()})
    assert check.result() == (None, None) and check.kind == "uncompared"
    (problem,) = map(str, check.problems)
    assert problem == ("outputs of flat and nested could not be compared "
                       "(TypeError: no comparing me)")


# --------------------------------------------------------------------------- Adam


def _adamw_step(params, grads):
    opt = optax.adamw(1e-3)
    updates, _ = opt.update(grads, opt.init(params), params)
    return optax.apply_updates(params, updates)


def test_adam_amplifying_gradient_rounding_is_still_rounding():
    """Adam's first step is g / (|g| + eps): where |g| is near 1e-7, a gradient that
    differs by 1.7e-8 (a reassociated sum) moves that weight by about 2.7e-5."""
    k1, k2, k3 = jax.random.split(jax.random.key(1), 3)
    params = {"params": {"w_fc": 0.02 * jax.random.normal(k1, (16, 64)), "b": jnp.zeros(64)}}
    grads = jax.tree.map(lambda p: 1e-3 * jax.random.normal(k2, p.shape), params)
    grads["params"]["w_fc"] = grads["params"]["w_fc"].at[0, 0].set(7e-8)
    rounded = jax.tree.map(lambda g: g + 1.7e-8 * jax.random.normal(k3, g.shape), grads)
    rounded["params"]["w_fc"] = rounded["params"]["w_fc"].at[0, 0].set(7e-8 + 1.7e-8)
    assert compare_outputs(grads, rounded).kind == "rounding"
    a, b = _adamw_step(params, grads), _adamw_step(params, rounded)
    d = compare_outputs(a, b)
    assert d.kind == "rounding" and d.leaf == "params.w_fc" and d.dtype == "float32"
    assert 1e-5 < d.max_abs_diff < 1e-4
    # what the old element-wise tolerance (rtol 1e-4, atol 1e-5) called a MISMATCH
    assert not np.allclose(a["params"]["w_fc"], b["params"]["w_fc"], rtol=1e-4, atol=1e-5)


def dense(p, x):
    return jnp.tanh(x @ p["w"] + p["b"])


def mlp_loss(params, x, y):
    return jnp.mean((dense(params["l2"], dense(params["l1"], x)) - y) ** 2)


def mlp_step(params, x, y):
    return _adamw_step(params, jax.grad(mlp_loss)(params, x, y))


@pytest.mark.slow
def test_one_adamw_step_of_a_small_mlp_matches():
    ks = jax.random.split(jax.random.key(0), 4)
    params = {"l1": {"w": 0.1 * jax.random.normal(ks[0], (8, 16)), "b": jnp.zeros(16)},
              "l2": {"w": 0.1 * jax.random.normal(ks[1], (16, 4)), "b": jnp.zeros(4)}}
    x, y = jax.random.normal(ks[2], (4, 8)), jax.random.normal(ks[3], (4, 4))
    result = jitmagic.compare(mlp_step, params, x, y, **ONCE)
    assert set(result.nested.helpers) == {"_adamw_step", "mlp_loss", "dense"}
    # On this machine (JAX 0.10.2, CPU) both variants return identical values; where XLA
    # reassociates differently they match within float32 rounding. Never a mismatch.
    assert result.outputs_kind in ("exact", "rounding") and result.outputs_match is True
    line = [s for s in result.report(verbose=True).splitlines() if s.startswith("outputs:")][0]
    assert line.startswith("outputs: flat and nested match")


# --------------------------------------------------------------------------- the report


def _scaled_by_traces(by: float):
    traces = [0]

    def helper(x):
        traces[0] += 1  # impure on purpose: each trace returns a slightly different value
        return {"out": x * (1.0 + traces[0] * by), "n": jnp.arange(3)}

    def model(x):
        return helper(x)

    return model


def test_the_report_says_rounding_or_mismatch_with_the_leaf():
    x = jnp.linspace(1.0, 2.0, 8)
    rounding = jitmagic.compare(_scaled_by_traces(2.0**-22), x, **ONCE)
    assert (rounding.outputs_kind, rounding.outputs_leaf, rounding.outputs_dtype) == \
        ("rounding", "out", "float32")
    assert rounding.outputs_match is True and not any("outputs of" in w
                                                      for w in rounding.warnings)
    assert (f"outputs: flat and nested match within float32 rounding (largest difference "
            f"{rounding.max_abs_diff:.3g} at `out`)") in str(rounding)
    mismatch = jitmagic.compare(_scaled_by_traces(1e-2), x, **ONCE)
    assert mismatch.outputs_kind == "mismatch" and mismatch.outputs_match is False
    assert "outputs: MISMATCH between flat and nested at `out` (largest difference" \
        in str(mismatch)
    again = Comparison.from_dict(mismatch.to_dict())
    assert (again.outputs_kind, again.outputs_leaf) == ("mismatch", "out")


def _report(**outputs) -> dict:
    samples = {"trace_s": [0.2], "lower_s": [0.1], "compile_s": [0.3], "first_call_s": [0.7],
               "execute_s": [2e-05]}
    variant = {"samples": samples, "execute_loops": 100, "helpers": []}
    return {"schema": "jitmagic.comparison/2", "entry": "model",
            "variants": {"flat": variant, "nested": variant}, **outputs}


def test_saved_kinds_are_checked_and_older_reports_still_load():
    old = Comparison.from_dict(_report(outputs_match=False, max_abs_diff=2.74e-05))
    assert old.outputs_kind is None and "outputs" not in old.to_dict().get("outputs_kind", "")
    assert "outputs: MISMATCH between flat and nested (largest difference 2.74e-05)" in str(old)
    loaded = Comparison.from_dict(_report(outputs_match=True, max_abs_diff=2.7e-05,
                                          outputs_kind="rounding", outputs_leaf="params.w_fc",
                                          outputs_dtype="float32"))
    assert ("outputs: flat and nested match within float32 rounding (largest difference "
            "2.7e-05 at `params.w_fc`)") in str(loaded)
    with pytest.raises(ReportSchemaError, match=r"^outputs_kind: expected one of 'exact'"):
        Comparison.from_dict(_report(outputs_match=True, outputs_kind="close"))
    with pytest.raises(ReportSchemaError, match=r"'mismatch' goes with false"):
        Comparison.from_dict(_report(outputs_match=True, outputs_kind="mismatch"))
    with pytest.raises(ReportSchemaError, match=r"^outputs_leaf: expected a string"):
        Comparison.from_dict(_report(outputs_match=True, outputs_kind="exact", outputs_leaf=3))


def test_a_mismatch_names_its_first_leaf_and_the_largest_difference_over_all():
    """A Flax model's outputs on a new user's trial: the report named the first leaf that
    differed with the largest difference over every leaf (0.0312) while the warning gave
    that leaf's own (0.000427), two numbers for one leaf. Each now says which it is."""
    traces = [0]

    def helper(x):
        traces[0] += 1  # impure on purpose: each trace differs, `a` a little, `b` a lot
        return {"a": x * (1.0 + traces[0] * 1e-3), "b": x * (1.0 + traces[0] * 1e-1)}

    def model(x):
        return helper(x)

    result = jitmagic.compare(model, jnp.linspace(1.0, 2.0, 8), **ONCE)
    warning = next(w for w in result.warnings if "outputs of" in w)
    first = float(warning.split("largest difference ")[1].split(")")[0])
    assert result.outputs_leaf == "a" and first < result.max_abs_diff / 10
    assert (f"outputs: MISMATCH between flat and nested at `a` (largest difference over all "
            f"leaves {result.max_abs_diff:.3g})") in str(result)


def _mixed(by: float, compute: jnp.dtype):
    traces = [0]

    def helper(x):
        traces[0] += 1  # impure on purpose: each trace's value differs by `by`
        return (x.astype(compute) * (1.0 + traces[0] * by)).astype(jnp.float32)

    def model(x):
        return {"loss": helper(x).sum(), "x": x}

    return model


def test_a_float32_output_of_bfloat16_arithmetic_is_judged_by_bfloat16s_rounding():
    """Mixed precision, as TPU models are written (float32 parameters, bfloat16
    compute): a new user's Flax model read MISMATCH on this CPU because its float32
    gradients were held to float32's rounding. A relative difference of 2^-6 is far
    beyond float32's (sqrt(eps) = 3.5e-4) and well within bfloat16's (0.088)."""
    from jitmagic.measure.sampling.structure import coarsest_float

    x = jnp.linspace(1.0, 2.0, 8)
    mixed = jitmagic.compare(_mixed(2.0**-6, jnp.bfloat16), x, **ONCE)
    assert (mixed.outputs_kind, mixed.outputs_dtype) == ("rounding", "bfloat16")
    assert "outputs: flat and nested match within bfloat16 rounding" in str(mixed)
    plain = jitmagic.compare(_mixed(2.0**-6, jnp.float32), x, **ONCE)
    assert plain.outputs_kind == "mismatch"  # float32 arithmetic: float32's rounding
    assert coarsest_float(jax.make_jaxpr(_mixed(0.0, jnp.bfloat16))(x)) == "bfloat16"
    assert coarsest_float(jax.make_jaxpr(lambda i: i + 1)(jnp.arange(3))) is None

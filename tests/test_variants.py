"""Flat and nested variants of real functions, through ``jitmagic.compare``.

Each entry here is measured for real (one cold run, two steady calls); the
assertions are on what each variant traced and on its outputs.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import pytest

import jitmagic
from jitmagic.measure.variants.build import build_variant
from jitmagic.measure.variants.entry import plan_entry

FAST = {"repeat": 1, "number": 2}


def check(fn, *args, nested, calls, **kwargs):
    """Run the comparison and assert the facts every working case shares."""
    r = jitmagic.compare(fn, *args, **FAST, **kwargs)
    assert r.flat.ok and r.nested.ok, (r.flat.error, r.nested.error)
    assert r.nested.helpers == nested and r.flat.helpers == ()
    # Library functions (jax.random, ...) are jitted too: count only what nesting added.
    assert r.nested.nested_calls - r.flat.nested_calls == calls
    assert r.outputs_match is True
    return r


# --- helpers the user jitted themselves ------------------------------------

@jax.jit
def jitted_helper(x):
    return jnp.sin(x) * 2


def uses_jitted(x):
    return jitted_helper(x) + jitted_helper(x + 1)


def test_user_jit_is_taken_off_flat_and_kept_nested():
    check(uses_jitted, jnp.ones(4), nested=("jitted_helper",), calls=2)


@partial(jax.jit, static_argnums=(1,))
def power(x, n):
    for _ in range(n):  # n must be a Python int: static
        x = x * x
    return x


def uses_static(x):
    return power(x, 2) + power(x, 3)


def test_user_static_argnums_are_kept():
    r = check(uses_static, jnp.full(3, 1.01), nested=("power",), calls=2)
    # Two distinct bodies (n=2, n=3) counted inside; the top level has only the two calls.
    assert r.nested.jaxpr_eqns_top < r.flat.jaxpr_eqns_top


def plain_scale(x):
    return x * 3.0


assigned_helper = jax.jit(plain_scale)


def uses_assigned(x):
    return assigned_helper(x) - 1


def test_helper_assigned_from_jax_jit():
    check(uses_assigned, jnp.ones(2), nested=("assigned_helper",), calls=1)


# --- Python values, pytrees, keywords, keys, pytree outputs -----------------

def repeat_sin(x, times):
    for _ in range(times):
        x = jnp.sin(x)
    return x


def uses_int(x):
    return repeat_sin(x, 3) + repeat_sin(x, 4)


def test_python_int_argument_is_made_static():
    r = check(uses_int, jnp.ones(3), nested=("repeat_sin",), calls=2)
    assert r.flat.jaxpr_eqns >= 7  # 3 + 4 sines inlined


def dense(params, x):
    for w, b in params:
        x = jnp.tanh(x @ w + b)
    return x


def mlp(params, x):
    return dense(params, x).sum() + dense(params[:1], x).sum()


def test_pytree_list_of_tuples():
    params = [(jnp.eye(4), jnp.zeros(4)), (jnp.eye(4) * 0.5, jnp.ones(4))]
    check(mlp, params, jnp.ones((2, 4)), nested=("dense",), calls=2)


def norm(d, eps):
    return d["x"] / (jnp.sqrt(jnp.sum(d["x"] ** 2)) + eps) + d["shift"]


def uses_dict(tree, *, eps=1e-6):
    return {"out": norm(tree, eps), "n": jnp.sum(tree["x"])}


def test_dict_argument_keyword_argument_and_dict_output():
    r = check(uses_dict, {"x": jnp.arange(4.0), "shift": jnp.ones(4)}, eps=0.5,
              nested=("norm",), calls=1)
    assert r.flat.execute_s > 0


def noisy(key, x):
    return x + jax.random.normal(key, x.shape)


def uses_key(key, x):
    k1, k2 = jax.random.split(key)
    return noisy(k1, x), noisy(k2, x)


def test_random_keys_and_tuple_output():
    check(uses_key, jax.random.key(0), jnp.zeros(3), nested=("noisy",), calls=2)


def test_legacy_uint32_keys():
    check(uses_key, jax.random.PRNGKey(1), jnp.zeros(3), nested=("noisy",), calls=2)


# --- reaching helpers ---------------------------------------------------------

def leaf(x):
    return x + 1


def middle(x):
    return [leaf(v) for v in (x, x * 2)]


def top(x):
    inner = lambda y: sum(middle(y))  # noqa: E731
    def nested_def(z):
        return inner(z) * 2
    return nested_def(x)


def test_helpers_are_found_through_lambdas_comprehensions_and_nested_defs():
    plan = plan_entry(top, (jnp.ones(2),), {})
    assert list(plan.helpers) == ["nested_def", "<lambda>", "middle", "leaf"]
    assert plan.helpers["leaf"].call_sites == 1  # called twice, from one site in a loop
    # Functions made anew on each call of `top` cannot be nested: they stay inline.
    assert str(plan.helpers["<lambda>"].why_inline) == (
        "it is re-created on every call of `top`, so the function a jit would wrap is not "
        "the one called")
    assert plan.helpers["middle"].why_inline is None


def test_entry_string_argument_is_static():
    def pick(x, mode):
        return jnp.sin(x) if mode == "sin" else jnp.cos(x)
    r = jitmagic.compare(pick, jnp.ones(2), "sin", **FAST)
    assert r.flat.ok and r.nested.ok and r.flat.jaxpr_eqns == 1  # sin alone: "sin" is static


def test_variants_never_modify_the_users_functions():
    before = dict(globals()), middle.__code__
    for entry in (top, uses_jitted):
        plan = plan_entry(entry, (jnp.ones(2),), {})
        for name in ("nested", "flat"):
            jax.jit(build_variant(name, plan).fn)(jnp.ones(2))
    assert (dict(globals()), middle.__code__) == before
    assert globals()["middle"] is middle and globals()["jitted_helper"] is jitted_helper


def test_nest_limits_added_jits_but_keeps_the_users():
    v = build_variant("nested", plan_entry(top, (jnp.ones(2),), {}), nest=("leaf",))
    assert v.nested_helpers == ()  # nothing ran yet
    jax.jit(v.fn)(jnp.ones(2))
    assert v.nested_helpers == ("leaf",)


def test_unknown_nest_name_lists_the_helpers():
    with pytest.raises(jitmagic.InputError, match="--nest names `nope`, which `top` does not "
                                                  "call; its helpers are .*middle`, `leaf`"):
        jitmagic.compare(top, jnp.ones(2), nest=["nope"], **FAST)


def scale_by_each(x, factors):
    for k in factors:  # the factors must stay Python ints
        x = x * k
    return x


def uses_list_of_ints(x):
    return scale_by_each(x, [2, 3]) + scale_by_each(x, (4,))


def test_python_ints_inside_a_list_stay_static_leaves():
    r = jitmagic.compare(uses_list_of_ints, jnp.ones(3), **FAST)
    assert r.flat.ok and r.nested.ok and r.outputs_match
    # Arguments are flattened: the ints in the list and the tuple are static leaves,
    # so both calls are nested and the loops over them still run in Python.
    assert r.nested.nested_calls - r.flat.nested_calls == 2
    assert r.nested.notes == ()


def takes_unhashable(x, opts):
    return x * opts.scale


class Opts:
    __hash__ = None  # an unhashable config object

    def __init__(self, scale):
        self.scale = scale


def uses_unhashable(x):
    return takes_unhashable(x, Opts(2.0))


def test_unhashable_non_array_argument_leaves_that_call_inline_and_says_so():
    r = jitmagic.compare(uses_unhashable, jnp.ones(3), **FAST)
    assert r.flat.ok and r.nested.ok
    assert r.nested.helpers == ()
    # its one call ran inline: the nested program is the flat one, measured once
    assert r.outputs_match is None and r.nested.samples["first_call_s"] == []
    assert any("`takes_unhashable` stays inline for calls with a `Opts` argument" in n
               for n in r.nested.notes)
    assert "note (nested): `takes_unhashable` stays inline" in str(r)

"""Code shaped the way JAX users write it: helpers behind methods, modules, local
modules, transformations and control flow are found by the discovery trace and
nested where they are bound.

Most checks trace the two variants directly (the jaxpr and the outputs); a few go
through ``jitmagic.compare`` and the magic end to end.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import realworld_layers as L

import jitmagic
from jitmagic.measure.sampling.structure import count_equations
from jitmagic.measure.variants.build import build_variant
from jitmagic.measure.variants.entry import plan_entry

FAST = {"repeat": 1, "number": 1}
X = jnp.linspace(0.1, 1.0, 4)


def traced(entry, *args, nest=None):
    """Flat and nested variants of ``entry``: (plan, {variant: (variant, jaxpr, output)})."""
    plan = plan_entry(entry, args, {})
    out = {}
    for name in ("flat", "nested"):
        v = build_variant(name, plan, nest)
        jitted = jax.jit(v.fn, **plan.jit_options)
        out[name] = (v, jitted.trace(*args).jaxpr, jitted(*args))
    return plan, out


def assert_nests(entry, *args, helpers):
    """The nested variant nests exactly ``helpers``, traces fewer equations than flat,
    and both give what the entry itself gives."""
    plan, runs = traced(entry, *args)
    (flat, flat_jaxpr, flat_out), (nested, nested_jaxpr, nested_out) = runs.values()
    assert nested.nested_helpers == helpers, plan.helpers
    assert flat.nested_helpers == ()
    assert count_equations(nested_jaxpr) < count_equations(flat_jaxpr)
    expected = entry(*args)
    for got in (flat_out, nested_out):
        for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(expected), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    return plan


# --- methods --------------------------------------------------------------------

class Tower:
    """A plain class: hashable, holds no arrays, so `self` can be static."""

    def __init__(self, depth):
        self.depth = depth

    def block(self, x):
        return jnp.tanh(x * 1.5 + 0.5) * jnp.sin(x) + jnp.cos(x)

    def __call__(self, x):
        for _ in range(self.depth):
            x = self.block(x)
        return x


def test_method_of_a_plain_class():
    assert_nests(Tower(3), X, helpers=("Tower.block",))


@functools.partial(jax.tree_util.register_dataclass, data_fields=["w", "b"], meta_fields=[])
@dataclasses.dataclass
class Affine:
    w: jax.Array
    b: jax.Array

    def apply(self, x):
        return jnp.tanh(x @ self.w + self.b) * jnp.sin(x)


def two_affines(layer, x):
    return layer.apply(layer.apply(x)).sum()


def test_method_of_a_registered_dataclass_traces_self_as_a_pytree():
    layer = Affine(jnp.eye(4) * 0.5, jnp.ones(4))
    plan = assert_nests(two_affines, layer, X, helpers=("Affine.apply",))
    assert plan.helpers["Affine.apply"].call_sites == 2


class Params(NamedTuple):
    scale: jax.Array
    shift: jax.Array

    def predict(self, x):
        return jnp.sin(x * self.scale) + jnp.cos(x + self.shift) * self.scale


def mse(p, x, y):
    return jnp.mean((p.predict(x) - y) ** 2) + jnp.mean(p.predict(y) ** 2)


def test_method_of_a_named_tuple_under_grad():
    p = Params(jnp.full(4, 0.3), jnp.full(4, 0.1))
    assert_nests(jax.grad(mse), p, X, X * 2, helpers=("Params.predict",))


@dataclasses.dataclass(frozen=True)
class Block:
    """A callable instance holding a plain Python setting: hashable by value, so equal
    blocks share one nested program."""

    k: float

    def __call__(self, x):
        return jnp.sin(x * self.k) + jnp.tanh(x) * self.k


BLOCKS = [Block(1.0), Block(2.0), Block(1.0), Block(1.0)]


def run_blocks(x):
    for b in BLOCKS:
        x = b(x)
    return x


def test_callable_instances_call_method():
    assert_nests(run_blocks, X, helpers=("Block.__call__",))


class Holder:
    """An ordinary object holding an array: static, its array would be baked in."""

    def __init__(self):
        self.w = jnp.ones(4)

    def scale(self, x):
        return jnp.sin(x * self.w) * 2.0


HOLDER = Holder()


def uses_holder(x):
    return HOLDER.scale(x) + HOLDER.scale(x + 1)


def test_method_on_an_object_holding_arrays_stays_inline_and_says_why():
    _, runs = traced(uses_holder, X)
    nested = runs["nested"][0]
    assert nested.nested_helpers == ()
    assert any("a `Holder`, holds arrays but is not a pytree" in n for n in map(str, nested.notes))


# --- modules and transformations --------------------------------------------------

def two_stacks(ws, x):
    return L.stack(ws, x) + L.dense(ws[0], x)


def test_functions_of_a_local_module():
    ws = [jnp.eye(4) * 0.5, jnp.eye(4) * 0.25]
    plan = assert_nests(two_stacks, ws, X,
                        helpers=("realworld_layers.stack", "realworld_layers.dense"))
    # three calls from two sites: one in `stack`'s loop, one in `two_stacks`
    assert plan.helpers["realworld_layers.dense"].call_sites == 2


def predict(w, x):
    return jnp.tanh(x * w) * jnp.sin(x) + jnp.cos(x * w)


def loss_with_aux(w, x):
    y = predict(w, x) + predict(w, x * 2)
    return jnp.sum(y ** 2), y


def train_step(w, x):
    (value, aux), g = jax.value_and_grad(loss_with_aux, has_aux=True)(w, x)
    return w - 0.1 * g, value, aux


def test_value_and_grad_with_aux():
    assert_nests(train_step, X, X, helpers=("loss_with_aux", "predict"))


def per_example(w, x):
    return predict(w, x) + predict(w, -x)


def batched(w, xs):
    return jax.vmap(per_example, in_axes=(None, 0))(w, xs)


def test_helpers_under_vmap():
    assert_nests(batched, X, jnp.stack([X, X * 2]), helpers=("per_example", "predict"))


def two_predicts(w, x):
    return predict(w, x) + predict(w, x * 2)


def remat_twice(w, x):
    return jax.checkpoint(two_predicts)(w, x) * jax.checkpoint(two_predicts)(w, x + 1)


def test_helpers_under_checkpoint():
    assert_nests(remat_twice, X, X, helpers=("two_predicts", "predict"))


@jax.custom_jvp
def soft(x):
    return jnp.log1p(jnp.exp(x)) * jnp.tanh(x)


@soft.defjvp
def soft_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return soft(x), t * jax.nn.sigmoid(x)


@jax.custom_vjp
def clip_grad(x):
    return jnp.sin(x) * 2


clip_grad.defvjp(lambda x: (clip_grad(x), x), lambda x, g: (jnp.clip(g, -1, 1),))


def custom_rules(x):
    return soft(x) + soft(x * 2) + clip_grad(x)


def test_custom_jvp_is_nested_custom_vjp_stays_inline():
    _, runs = traced(custom_rules, X)
    nested = runs["nested"][0]
    assert nested.nested_helpers == ("soft",)
    assert any("`clip_grad` stays inline: it is a custom_vjp" in n for n in map(str, nested.notes))


@jax.custom_vjp
def clip_gradient(x):
    return x


def _clip_fwd(x):
    return x, None


def _clip_bwd(_, g):
    return (jnp.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def clipped_loss(w, x):
    for _ in range(8):
        x = clip_gradient(jnp.tanh(x @ w))
    return jnp.sum(x ** 2)


def test_a_custom_vjp_whose_rules_alone_add_equations_under_grad_is_noted_and_measured_once():
    r = jitmagic.compare(jax.grad(clipped_loss), jnp.eye(4) * 0.5, jnp.ones((2, 4)),
                         **FAST, quiet=True)
    # its body adds no equation; its backward rule does, at its call site in the loss
    assert r.nested.helpers == () and r.nested.inline == ("clip_gradient",)
    why = next(n for n in r.nested.notes if n.startswith("`clip_gradient` stays inline"))
    assert "`jax.custom_vjp` function whose body adds no equation" in why, why
    assert "(`_clip_fwd` forward, `_clip_bwd` in the backward pass)" in why, why
    assert "at its call site in `clipped_loss`" in why, why
    # the entry is not its own helper: nothing to nest, so one program, measured once
    assert "clipped_loss" not in r.nested.inline
    assert r.nested.samples["first_call_s"] == [] and r.flat.samples["first_call_s"]


def cell_update(c, x):
    return jnp.tanh(c * 0.9 + x) * jnp.cos(c)


def scan_step(w, c, x):
    c = cell_update(c, x * w) + cell_update(c, x)
    return c, c.sum()


def control_flow(w, xs):
    c, ys = jax.lax.scan(functools.partial(scan_step, w), jnp.zeros(4), xs)
    c = jax.lax.fori_loop(0, 2, lambda i, c: cell_update(c, w), c)
    c = jax.lax.while_loop(lambda c: c.sum() > 100.0, lambda c: cell_update(c, w), c)
    return jax.lax.cond(ys.sum() > 0, lambda c: cell_update(c, w), lambda c: -c, c)


def test_helpers_in_scan_fori_while_and_cond_bodies():
    plan, runs = traced(control_flow, X, jnp.stack([X, X]))
    nested = runs["nested"][0]
    assert nested.nested_helpers == ("scan_step", "cell_update")
    # Every body calls cell_update: the scan body at two sites, fori, while and cond at one.
    assert plan.helpers["cell_update"].call_sites == 5
    np.testing.assert_allclose(runs["nested"][2], runs["flat"][2], rtol=1e-6)


def relu_mix(x):
    return jnp.maximum(x, 0) * jnp.sin(x) + jnp.cos(x)


ACTIVATIONS = {"mix": lambda x: relu_mix(x) * 2, "id": lambda x: x}


def from_table(x):
    return ACTIVATIONS["mix"](x) + ACTIVATIONS["mix"](x + 1)


def test_lambda_in_a_container_reaches_the_helper():
    # nested at its function object: the lambda in the table too, however it is reached
    plan = assert_nests(from_table, X, helpers=("<lambda>", "relu_mix"))
    assert plan.helpers["<lambda>"].why_inline is None


# --- names are not calls; Python scalars; entries -----------------------------------

def sin(x):  # a user function that shares a name with jnp.sin
    return x * 100.0


def only_library_sin(x):
    return jnp.sin(x) + 1


def test_a_name_is_a_helper_only_if_it_is_called():
    assert plan_entry(only_library_sin, (X,), {}).helpers == {}


f = lambda x: sum(i * x for i in range(64))  # noqa: E731 (the discussion's example, smaller)


def g(x):
    return sum(f(x) for _ in range(8))


def test_python_float_is_traced_like_jax_jit_does():
    r = jitmagic.compare(g, 3.14, **FAST)
    assert r.flat.jaxpr_eqns > 1000  # 8 calls x 128 equations, traced
    assert r.nested.helpers == ("f",) and r.nested.jaxpr_eqns < r.flat.jaxpr_eqns / 5
    assert r.outputs_match is True and r.flat.notes == ()


def repeat_sin(x, n):
    for _ in range(n):
        x = jnp.sin(x)
    return x


def test_python_int_used_as_range_is_held_static_with_a_note():
    plan = plan_entry(repeat_sin, (X, 3), {})
    assert plan.jit_options["static_argnums"] == (1,)
    (note,) = map(str, plan.notes)
    assert "argument 2 of `repeat_sin`" in note and "TracerIntegerConversionError" in note


def test_an_active_profiler_keeps_working_and_is_put_back():
    seen = []

    def profiler(frame, event, arg):
        seen.append(event)

    sys.setprofile(profiler)
    try:
        plan = plan_entry(run_blocks, (X,), {})
        assert sys.getprofile() is profiler
    finally:
        sys.setprofile(None)
    assert "Block.__call__" in plan.helpers and seen


def test_nest_takes_qualified_names():
    r = jitmagic.compare(two_stacks, [jnp.eye(4)], X, nest=["realworld_layers.dense"], **FAST)
    assert r.nested.helpers == ("realworld_layers.dense",) and r.outputs_match is True
    with pytest.raises(jitmagic.InputError, match="its helpers are `realworld_layers.stack`, "
                                                  "`realworld_layers.dense`"):
        jitmagic.compare(two_stacks, [jnp.eye(4)], X, nest=["dense2"], **FAST)


def test_ordinary_object_holding_arrays_as_argument_is_refused():
    with pytest.raises(jitmagic.InputError, match="`Holder`, an ordinary object holding arrays"):
        jitmagic.compare(lambda h, x: h.scale(x), HOLDER, X, **FAST)


@functools.partial(jax.jit, static_argnums=1)
def jitted_power(x, n):
    for _ in range(n):
        x = predict(x, x)
    return x


@pytest.mark.parametrize(("entry", "args", "name"), [
    (jitted_power, (X, 2), "jitted_power"),
    (jax.grad(mse), (Params(X, X), X, X), "grad(mse)"),
    (functools.partial(predict, 0.5), (X,), "partial(predict)"),
    (Tower(2).__call__, (X,), "Tower.__call__"),
    (Tower(2), (X,), "Tower.__call__"),
])
def test_any_callable_is_an_entry_named_as_written(entry, args, name):
    plan = plan_entry(entry, args, {})
    assert plan.name == name
    if entry is jitted_power:  # the user's static_argnums are kept on the outer jit
        assert plan.jit_options["static_argnums"] == (1,)


def test_compare_a_jitted_entry_end_to_end():
    r = jitmagic.compare(jitted_power, X, 2, **FAST)
    assert r.entry == "jitted_power" and r.nested.helpers == ("predict",)
    assert r.outputs_match is True and r.nested.jaxpr_eqns < r.flat.jaxpr_eqns


def test_nothing_the_tool_touched_is_left_changed():
    classes = (Tower, Affine, Params, Block, Holder)
    before = [dict(vars(c)) for c in classes], dict(globals()), dict(vars(L))
    jitmagic.compare(Tower(2), X, **FAST)
    jitmagic.compare(two_stacks, [jnp.eye(4)], X, **FAST)
    jitmagic.compare(jax.grad(mse), Params(X, X), X, X, **FAST)
    after = [dict(vars(c)) for c in classes], dict(globals()), dict(vars(L))
    assert after == before


# --- through the magic ----------------------------------------------------------------

CELL = """\
import jax.numpy as jnp
class Net:
    def __init__(self, n):
        self.n = n
    def layer(self, x):
        return jnp.sin(x) * jnp.cos(x) + jnp.tanh(x)
    def apply(self, x):
        for _ in range(self.n):
            x = self.layer(x)
        return x
    __call__ = apply
net = Net(3)
"""


@pytest.mark.parametrize(("call", "name"), [("net.apply(jnp.ones(4))", "net.apply"),
                                            ("net(jnp.ones(4))", "net.__call__")])
def test_cell_entry_may_be_a_method_or_an_instance(run_magic, call, name):
    result, _ = run_magic("-o -r 1 -n 1", CELL + call + "\n")
    assert result.entry == name
    assert result.nested.helpers == ("Net.layer",) and result.outputs_match is True
    assert result.nested.jaxpr_eqns < result.flat.jaxpr_eqns

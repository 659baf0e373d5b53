"""Equinox and Flax NNX models, measured with the installed packages: module methods
are nested the way each framework jits them, and their own jits on the entry are
taken off in the flat variant."""

from __future__ import annotations

import equinox as eqx  # installed by the test extras; jitmagic itself needs neither
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

import jitmagic
from jitmagic.measure.variants.build import build_variant
from jitmagic.measure.variants.entry import plan_entry

FAST = {"repeat": 1, "number": 1}
X = jnp.linspace(-1.0, 1.0, 4)


def variants(entry, *args):
    """{variant: (variant, top-level equations, output)} traced over the planned arguments."""
    plan = plan_entry(entry, args, {})
    out = {}
    for name in ("flat", "nested"):
        v = build_variant(name, plan)
        jitted = jax.jit(v.fn, **plan.jit_options)
        out[name] = (v, len(jitted.trace(*plan.args).jaxpr.eqns), jitted(*plan.args))
    return plan, out


class Residual(eqx.Module):
    w: jax.Array
    depth: int = eqx.field(static=True)
    act: object = jnp.tanh  # a callable leaf: static under filter_jit

    def __call__(self, x):
        for _ in range(self.depth):
            x = self.act(self.w @ x) + jnp.sin(x)
        return x


class Stack(eqx.Module):
    blocks: list

    def __call__(self, x):
        for block in self.blocks:
            x = block(x)
        return x


STACK = Stack([Residual(jnp.eye(4) * 0.5, 2) for _ in range(3)])


@eqx.filter_jit
def forward(model, x):
    return model(x)


def test_equinox_module_call_is_nested_with_static_fields_kept():
    plan, runs = variants(STACK, X)
    assert plan.name == "Stack.__call__"
    (flat, flat_eqns, flat_out), (nested, nested_eqns, nested_out) = runs.values()
    assert nested.nested_helpers == ("Residual.__call__",) and nested_eqns < flat_eqns
    np.testing.assert_allclose(nested_out, STACK(X), rtol=1e-6)
    np.testing.assert_allclose(flat_out, STACK(X), rtol=1e-6)


def test_equinox_filter_jit_entry_end_to_end():
    before = dict(vars(Residual)), dict(vars(Stack))
    r = jitmagic.compare(forward, STACK, X, **FAST)
    assert r.entry == "forward" and r.flat.ok and r.nested.ok and r.outputs_match is True
    assert r.nested.helpers == ("Stack.__call__", "Residual.__call__")
    assert r.nested.jaxpr_eqns < r.flat.jaxpr_eqns
    assert (dict(vars(Residual)), dict(vars(Stack))) == before


def mse(model, x):
    return jnp.mean((model(x) - 1.0) ** 2)


def test_an_equinox_transformation_as_the_entry_is_named_as_written():
    plan, runs = variants(eqx.filter_grad(mse), STACK, X)
    assert plan.name == "filter_grad(mse)"
    assert any("`filter_grad(mse)` hold Equinox modules" in str(n) for n in plan.notes)
    (flat, _, flat_out), (nested, _, nested_out) = runs.values()
    assert "Stack.__call__" in nested.nested_helpers
    want = eqx.filter_grad(mse)(STACK, X)
    for got in (flat_out, nested_out):
        np.testing.assert_allclose(got.blocks[0].w, want.blocks[0].w, rtol=1e-5)
    value_and_grad = plan_entry(eqx.filter_value_and_grad(mse), (STACK, X), {})
    assert value_and_grad.name == "filter_value_and_grad(mse)"


class Layer(nnx.Module):
    def __init__(self, rngs):
        self.lin = nnx.Linear(4, 4, rngs=rngs)

    def __call__(self, x):
        return jnp.tanh(self.lin(x)) + jnp.sin(x)


class Tower(nnx.Module):
    def __init__(self, rngs):
        self.layers = nnx.List([Layer(rngs) for _ in range(3)])

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


@nnx.jit
def apply_tower(model, x):
    return model(x)


@pytest.mark.parametrize("entry", ["instance", "nnx.jit"])
def test_flax_nnx_module_is_nested_through_nnx_jit(entry):
    tower = Tower(nnx.Rngs(0))
    args = (X,) if entry == "instance" else (tower, X)
    plan, runs = variants(tower if entry == "instance" else apply_tower, *args)
    (flat, flat_eqns, flat_out), (nested, nested_eqns, nested_out) = runs.values()
    assert "Layer.__call__" in nested.nested_helpers and nested_eqns < flat_eqns
    np.testing.assert_allclose(nested_out, tower(X), rtol=1e-6)
    np.testing.assert_allclose(flat_out, tower(X), rtol=1e-6)


def test_flax_linen_submodules_are_lifted_with_nn_jit():
    from flax import linen as nn

    class Cell(nn.Module):
        @nn.compact
        def __call__(self, x):
            return jnp.tanh(nn.Dense(4)(x)) + jnp.sin(x)

    class Chain(nn.Module):
        @nn.compact
        def __call__(self, x):
            for _ in range(2):
                x = Cell()(x)
            return x

    chain = Chain()
    params = chain.init(jax.random.key(0), X)
    r = jitmagic.compare(lambda p, x: chain.apply(p, x), params, X, **FAST)
    assert r.flat.ok and r.nested.ok and r.outputs_match is True
    # Cell is looked up by name in Chain.__call__: lifted there, two jit calls
    assert r.nested.helpers == ("Cell.__call__",) and r.nested.helper_calls == {
        "Cell.__call__": 2}
    assert r.nested.jaxpr_eqns < r.flat.jaxpr_eqns
    # the entry's own module was made before the call: nothing can lift it, and it says so
    assert "Chain.__call__" in r.nested.inline
    assert any("Chain.__call__` stays inline: it is a Flax linen module made before the call" in n
               for n in r.nested.notes)

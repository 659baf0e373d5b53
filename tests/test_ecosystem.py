"""Code written the way the wider JAX ecosystem's docs write it, measured as written:
numpyro models, Haiku modules, Flax linen, functions handed to diffrax, Equinox modules
passed to a plain function, and Python scalars inside NamedTuple state.

Each test checks the one thing a report must never get wrong: a helper is listed as
nested only where the nested program holds jit calls of it, and one that cannot be
nested says why, with both variants measured."""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import pytest

import jitmagic

ONCE = {"repeat": 1, "number": 1, "quiet": True}


def claims_hold(r) -> None:
    assert r.flat.ok and r.nested.ok, (r.flat.error, r.nested.error)
    assert r.outputs_match is not False
    for h in r.nested.helpers:
        assert r.nested.helper_calls[h] >= 1
    for h in r.nested.inline:
        assert any(f"`{h}`" in note for note in r.nested.notes), (h, r.nested.notes)


# --- numpyro: a model runs under effect handlers ----------------------------------------

def _numpyro_logp():
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer.util import log_density

    def predictor(x, w, b):
        return x @ w + b

    def regression(x, y=None):
        w = numpyro.sample("w", dist.Normal(jnp.zeros(3), 1.0))
        b = numpyro.sample("b", dist.Normal(0.0, 1.0))
        numpyro.sample("y", dist.Normal(predictor(x, w, b), 1.0), obs=y)

    x, y = jnp.ones((20, 3)), jnp.zeros(20)

    def potential(params):
        return -log_density(regression, (x,), {"y": y}, params)[0]

    return potential, {"w": jnp.zeros(3), "b": jnp.array(0.0)}


@pytest.mark.slow
def test_a_numpyro_model_stays_inline_and_its_pure_helper_is_nested():
    potential, params = _numpyro_logp()
    r = jitmagic.compare(potential, params, **ONCE)
    claims_hold(r)
    assert r.nested.helpers == ("predictor",)
    assert "regression" in r.nested.inline
    assert any("leaks traced values: it records them on an effect handler's stack "
               "(`numpyro.handlers._PYRO_STACK`)" in n for n in r.nested.notes)


# --- Haiku: modules inside hk.transform ---------------------------------------------------

@pytest.mark.slow
def test_haiku_apply_nests_its_module_and_its_pure_helper():
    import haiku as hk

    def norm(x):
        mean = x.mean(-1, keepdims=True)
        return (x - mean) / jnp.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5)

    class Residual(hk.Module):
        def __call__(self, x):
            return x + norm(jax.nn.gelu(hk.Linear(x.shape[-1])(x)))

    def forward(x):
        for _ in range(3):
            x = Residual()(x)
        return x

    net = hk.without_apply_rng(hk.transform(forward))
    x = jnp.ones((2, 8))
    params = net.init(jax.random.PRNGKey(0), x)
    r = jitmagic.compare(net.apply, params, x, **ONCE)
    claims_hold(r)
    assert "norm" in r.nested.helpers
    assert r.nested.jaxpr_eqns < r.flat.jaxpr_eqns


# --- Flax linen: submodules lifted with nn.jit ---------------------------------------------

def test_flax_linen_submodules_are_nested_with_nn_jit():
    import flax.linen as nn

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.relu(nn.Dense(8)(x)) + x

    class Tower(nn.Module):
        @nn.compact
        def __call__(self, x):
            for _ in range(5):
                x = Block()(x)
            return x

    model, x = Tower(), jnp.ones((2, 8))
    params = model.init(jax.random.PRNGKey(1), x)
    r = jitmagic.compare(model.apply, params, x, **ONCE)
    claims_hold(r)
    assert r.nested.helpers == ("Block.__call__",) and r.nested.helper_calls == {
        "Block.__call__": 5}
    assert r.nested.jaxpr_eqns < r.flat.jaxpr_eqns
    assert r.outputs_match


def test_a_linen_train_state_step_is_one_program_measured_once_and_says_why():
    import flax.linen as nn
    import optax
    from flax.training import train_state

    class MLP(nn.Module):
        features: int = 8

        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.Dense(self.features)(x))
            return nn.Dense(1)(x)

    def create_train_state(rng, x):
        model = MLP()
        params = model.init(rng, x)["params"]
        return train_state.TrainState.create(apply_fn=model.apply, params=params,
                                             tx=optax.sgd(0.1))

    def train_step(state, batch):
        def loss_fn(params):
            pred = state.apply_fn({"params": params}, batch["x"])
            return jnp.mean((pred - batch["y"]) ** 2)

        grads = jax.grad(loss_fn)(state.params)
        return state.apply_gradients(grads=grads)

    x = jnp.ones((4, 3))
    state = create_train_state(jax.random.PRNGKey(0), x)
    r = jitmagic.compare(train_step, state, {"x": x, "y": jnp.zeros((4, 1))}, **ONCE)
    claims_hold(r)
    assert r.nested.helpers == () and set(r.nested.inline) == {"loss_fn", "MLP.__call__"}
    # nesting changes nothing, so the nested variant is not measured again
    assert r.nested.samples["first_call_s"] == [] and r.flat.samples["first_call_s"]
    assert r.same_compiled is None
    assert any("measured once" in n for n in r.nested.notes), r.nested.notes
    # the module `apply` runs: a clone made from its instance's class, not a name
    why = next(n for n in r.nested.notes if n.startswith("`MLP.__call__` stays inline"))
    assert "made before the call" in why and "Module.clone" in why, why


# --- distrax: a normalizing flow whose conditioners are partials of their parameters --------

def _coupling_conditioner(params, x):
    return jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"]


def _affine(shift):
    import distrax

    return distrax.ScalarAffine(shift=shift, log_scale=0.1 * shift)


def make_flow(params, dim):
    import distrax

    layers, mask = [], jnp.arange(dim) % 2 == 0
    for p in params:
        layers.append(distrax.MaskedCoupling(
            mask=mask, bijector=_affine,
            conditioner=functools.partial(_coupling_conditioner, p)))
        mask = ~mask
    return distrax.Chain(layers)


def flow_loss(params, x):
    import distrax

    base = distrax.MultivariateNormalDiag(jnp.zeros(x.shape[-1]), jnp.ones(x.shape[-1]))
    flow = distrax.Transformed(base, make_flow(params, x.shape[-1]))
    return -jnp.mean(flow.log_prob(x))


@pytest.mark.slow  # importing distrax imports TensorFlow Probability: 30 s here
def test_a_distrax_flow_builder_stays_inline_because_its_result_holds_a_traced_partial():
    dim = 4
    params = [{"w1": jnp.full((dim, 8), 0.1 * (i + 1)), "b1": jnp.zeros(8),
               "w2": jnp.full((8, dim), 0.01)} for i in range(2)]
    x = jax.random.normal(jax.random.PRNGKey(0), (5, dim))
    r = jitmagic.compare(jax.grad(flow_loss), params, x, **ONCE)
    claims_hold(r)
    assert r.nested.inline == ("make_flow",)
    assert "_coupling_conditioner" in r.nested.helpers
    why = next(n for n in r.nested.notes if n.startswith("`make_flow` stays inline"))
    # the reason read from the result: a Chain whose aux data holds the partial
    assert ("its result (a `Chain`) holds a `functools.partial` of `_coupling_conditioner` "
            "with traced arguments in its static part (pytree aux data)") in why, why
    assert "global" not in why and "numpyro" not in why, why


# --- diffrax: a vector field handed to a solver ---------------------------------------------

@pytest.mark.slow
def test_a_diffrax_vector_field_and_its_helper_are_found_and_nested():
    import diffrax

    def damping(y):
        return -0.5 * y + jnp.sin(y)

    def field(t, y, args):
        return damping(y) * args

    def solve(y0):
        term = diffrax.ODETerm(field)
        sol = diffrax.diffeqsolve(term, diffrax.Tsit5(), 0.0, 1.0, 0.1, y0, args=2.0)
        return sol.ys

    r = jitmagic.compare(solve, jnp.ones(3), **ONCE)
    claims_hold(r)
    assert "damping" in r.nested.helpers


# --- arguments as jax.jit (and eqx.filter_jit) take them ------------------------------------

class Steps(NamedTuple):
    w: jax.Array
    count: int


def _cell(w, x):
    return jnp.tanh(x @ w)


def _unrolled(state: Steps, x):
    for _ in range(state.count):
        x = _cell(state.w, x)
    return x


def test_a_python_int_inside_namedtuple_state_is_held_static_and_named():
    r = jitmagic.compare(_unrolled, Steps(jnp.eye(3), 4), jnp.ones(3), **ONCE)
    claims_hold(r)
    assert r.nested.helper_calls == {"_cell": 4}
    assert any("argument 1.count" in n for n in r.flat.notes), r.flat.notes


def test_an_equinox_module_passed_to_a_plain_function_keeps_its_int_field_static():
    import equinox as eqx

    class Repeat(eqx.Module):
        weight: jax.Array
        times: int  # not marked static: jax.jit alone would trace it

        def __call__(self, x):
            return jnp.tile(x @ self.weight, self.times)

    def apply(m, x):
        return m(x) + m(x)

    r = jitmagic.compare(apply, Repeat(jnp.eye(3), 2), jnp.ones(3), **ONCE)
    claims_hold(r)
    assert "Repeat.__call__" in r.nested.helpers
    assert any("Equinox modules" in n for n in r.flat.notes)


def test_a_linen_submodule_whose_bool_argument_breaks_nn_jit_stays_inline_with_the_reason():
    import flax.linen as nn

    class Gate(nn.Module):
        @nn.compact
        def __call__(self, x, train: bool):
            x = nn.Dense(4)(x)
            return x * 2 if train else x

    class Gated(nn.Module):
        @nn.compact
        def __call__(self, x):
            for _ in range(2):
                x = Gate()(x, True)
            return x.sum()

    x = jnp.ones((2, 4))
    params = Gated().init(jax.random.PRNGKey(0), x)
    r = jitmagic.compare(Gated().apply, params, x, **ONCE)
    claims_hold(r)
    assert r.nested.inline == ("Gate.__call__",)
    assert any("TracerBoolConversionError" in n for n in r.nested.notes)


def _linen_train_step():
    """A linen training step as Flax's docs write it (layers in a module, `value_and_grad`
    of a loss, optax's Adam): (train_step, its arguments)."""
    import flax.linen as nn
    import optax

    class Layer(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.relu(nn.Dense(8)(x))

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            for _ in range(3):
                x = Layer()(x)
            return nn.Dense(1)(x)

    model, tx = MLP(), optax.adam(1e-3)
    x, y = jnp.ones((4, 8)), jnp.ones((4, 1))
    params = model.init(jax.random.PRNGKey(0), x)

    def loss_fn(params, x, y):
        return jnp.mean((model.apply(params, x) - y) ** 2)

    def train_step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return train_step, (params, tx.init(params), x, y)


def test_attribution_times_linen_submodules_and_their_callers_own_time_excludes_them():
    """``--attribute`` on a linen training step written as Flax's docs write it: each
    submodule's ``__call__`` (reached through linen's wrapped method and ``apply``'s
    clone, never a name) gets its row, and ``loss_fn``'s own time leaves it out."""
    train_step, args = _linen_train_step()

    a = jitmagic.attribute(train_step, *args)
    rows = {h.helper: h for h in a.helpers}
    assert {"loss_fn", "MLP.__call__", "Layer.__call__"} <= set(rows), rows
    assert rows["Layer.__call__"].calls == 3
    loss, mlp = rows["loss_fn"], rows["MLP.__call__"]
    assert loss.own_s < loss.inclusive_s - mlp.inclusive_s * 0.9, loss
    assert mlp.own_s < mlp.inclusive_s - rows["Layer.__call__"].inclusive_s * 0.9, mlp


def test_the_jit_calls_flax_optax_and_jax_make_themselves_are_said_to_be_theirs(tmp_path):
    """A new user read 'nested jit calls 22' under the flat variant, which nests none of
    their helpers, with no word of whose they were: `nn.relu` is JAX's own jit, optax's
    and `jnp.where`'s too. The row below it counts those, in both variants."""
    from jitmagic.render.comparison import text_table

    train_step, args = _linen_train_step()

    r = jitmagic.compare(train_step, *args, **ONCE)
    claims_hold(r)
    flat, nested = r.flat, r.nested
    assert flat.helper_calls == {} and flat.nested_calls >= 3  # 3 relu, at least
    assert flat.library_calls == flat.nested_calls  # none of them the user's
    assert nested.helper_calls["Layer.__call__"] == 3
    # the nested program's own jits (helpers' calls and their backward passes) are not
    assert nested.library_calls == flat.library_calls < nested.nested_calls
    rows = text_table(r).splitlines()
    at = next(i for i, ln in enumerate(rows) if ln.startswith("nested jit calls"))
    assert rows[at + 1].split() == ["of", "them", "JAX's", "or", "libraries'", "own",
                                    str(flat.library_calls), str(nested.library_calls)]
    path = tmp_path / "r.json"
    jitmagic.save(r, path)
    assert jitmagic.load(path).flat.library_calls == flat.library_calls

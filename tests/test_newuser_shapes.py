"""What a new user met on real-world code shapes: helper names as written, helpers
found but not nestable, a cell changing the user's own module or class, scalars held
static one by one, checkpointed helpers, framework-jitted entries, one-run ratios."""

from __future__ import annotations

import json
import re
from typing import NamedTuple

import jax
import jax.numpy as jnp
import newuser_layers as L
import numpy as np
import pytest
from support import comparison

import jitmagic
from jitmagic.errors import InputError
from jitmagic.measure.variants.build import build_variant
from jitmagic.measure.variants.entry import plan_entry
from jitmagic.measure.variants.plan import check_nest
from jitmagic.model.comparison import Comparison
from jitmagic.render.comparison import text_table


def test_a_ratio_from_one_run_a_side_is_marked_as_such():
    c = comparison({"first_call_s": [0.682]}, {"first_call_s": [0.1]}, every=0.01)
    row = next(ln for ln in text_table(c).splitlines() if ln.startswith("first call"))
    assert "6.82× (one run)" in row


# --- --nest names, and what --lines tells to --nest ------------------------------

W = jnp.eye(4) * 0.5
X = jnp.linspace(0.1, 1.0, 4)


def predict(w, x):
    for _ in range(3):
        x = L.block(w, x)
    return x.sum()


def test_nest_takes_a_short_name_or_the_name_as_the_call_site_writes_it():
    plan = plan_entry(predict, (W, X), {})
    assert set(plan.helpers) == {"newuser_layers.block", "newuser_layers.dense"}
    assert check_nest(["dense"], plan) == ("newuser_layers.dense",)
    assert check_nest(["L.block"], plan) == ("newuser_layers.block",)
    with pytest.raises(InputError, match="does not call; its helpers are `newuser_layers.block`"):
        check_nest(["L.nothing"], plan)


class Encoder(NamedTuple):
    w: jax.Array

    def layer(self, x):
        return jnp.tanh(x @ self.w)


class Decoder(NamedTuple):
    w: jax.Array

    def layer(self, x):
        return jnp.sin(x @ self.w)


def autoencode(enc, dec, x):
    return dec.layer(enc.layer(x)).sum() + dec.layer(enc.layer(2 * x)).sum()


def test_an_ambiguous_short_name_is_refused_with_the_candidates():
    plan = plan_entry(autoencode, (Encoder(W), Decoder(W), X), {})
    with pytest.raises(InputError, match=r"could be any of `Encoder.layer` \(tests/"
                                         r"test_newuser_shapes.py:\d+\), `Decoder.layer`"):
        check_nest(["layer"], plan)
    assert check_nest(["Decoder.layer"], plan) == ("Decoder.layer",)


def test_the_lines_hint_names_a_helper_as_nest_takes_it():
    hints = " ".join(jitmagic.lines(predict, W, X).hints())
    named = re.findall(r"--nest ([\w.]+)", hints)
    assert named and all(n.startswith("newuser_layers.") for n in named)
    plan = plan_entry(predict, (W, X), {})
    assert check_nest(named, plan) == tuple(named)


# --- helpers found, none nestable ----------------------------------------------

class MLP:
    """A plain class holding its weights: not a pytree."""

    def __init__(self, ws):
        self.ws = ws

    def layer(self, w, x):
        return jnp.tanh(x @ w)

    def __call__(self, x):
        for w in self.ws:
            x = self.layer(w, x)
        return x.sum()


def mlp_loss(ws, x):
    return MLP(ws)(x) ** 2


def test_helpers_on_a_plain_object_are_found_and_said_to_be_unnestable():
    r = jitmagic.compare(jax.grad(mlp_loss), [W, W], X, repeat=1, number=1)
    assert r.nested.helpers == () and set(r.nested.inline) == {"MLP.__call__", "MLP.layer"}
    assert r.verdict.text.startswith("2 helpers of yours were found but none could be nested")
    notes = " ".join(r.nested.notes)
    assert "not a pytree" in notes and "baked in" not in notes
    again = Comparison.from_dict(json.loads(json.dumps(r.to_dict())))
    assert again.nested.inline == r.nested.inline


def test_nest_refuses_an_unnestable_helper_and_says_what_to_do():
    plan = plan_entry(mlp_loss, ([W, W], X), {})
    with pytest.raises(InputError, match="cannot be nested") as err:
        check_nest(["layer"], plan)
    assert "MLP.layer" in str(err.value) and "register_dataclass" in str(err.value)
    assert "eqx.Module" in str(err.value)


# --- Python scalars: only those used as Python values are static -------------------

def repeat(x, n):
    for _ in range(n):
        x = jnp.sin(x) * 1.5
    return x


def scaled(x, n, scale):
    return (repeat(x, n) * scale).sum() + repeat(x, n).sum()


@pytest.mark.parametrize(("args", "kwargs", "static", "spelled"), [
    ((X, 3, 0.5), {}, {"static_argnums": (1,), "static_argnames": ()},
     "static_argnums=(1,)"),
    ((X,), {"scale": 0.5, "n": 3}, {"static_argnums": (), "static_argnames": ("n",)},
     'static_argnames=("n",)'),
])
def test_only_the_scalar_used_as_a_python_value_is_held_static(args, kwargs, static, spelled):
    plan = plan_entry(scaled, args, kwargs)
    assert plan.jit_options == static
    assert any(spelled in str(n) for n in plan.notes), plan.notes
    flat = jax.jit(build_variant("flat", plan).fn, **plan.jit_options)
    assert "mul" in str(flat.trace(*args, **kwargs).jaxpr)  # scale: an input, not folded


# --- a module-level @jax.checkpoint helper ----------------------------------------

def remat_model(w, x):
    return L.remat_block(w, x).sum() + L.remat_block(w, 2 * x).sum()


def test_a_checkpointed_global_is_nested_where_its_name_binds_it():
    grad = jax.grad(remat_model)
    plan = plan_entry(grad, (W, X), {})
    helper = plan.helpers["newuser_layers.remat_block"]
    assert helper.why_inline is None and helper.bindings
    nested = build_variant("nested", plan)
    out = jax.jit(nested.fn)(W, X)
    assert nested.nested_helpers == ("newuser_layers.remat_block",)
    np.testing.assert_allclose(out, grad(W, X), rtol=1e-6)
    assert L.remat_block is helper.bindings[0].original  # put back


# --- a cell that changes the user's module or class --------------------------------

def test_a_cell_changing_your_module_or_class_is_put_back_and_said(ip, run_magic):
    ip.run_cell("import newuser_layers as L\nimport jax.numpy as jnp\n"
                "class Counter:\n    traces = 0\n"
                "    def layer(self, x):\n        Counter.traces += 1\n"
                "        return jnp.sin(x) * L.SCALE\n"
                "    def __call__(self, x):\n        return self.layer(self.layer(x)).sum()\n"
                "counter = Counter()\nxs = jnp.ones(4)")
    counter = ip.user_ns["Counter"]
    cell = "L.SCALE = L.SCALE * 2\nL.NEW = 1\nCounter.extra = 5\ncounter(xs)"
    result, _ = run_magic("-o -r 1 -n 1 --no-plot", cell)
    assert L.SCALE == 0.5 and not hasattr(L, "NEW")
    assert not hasattr(counter, "extra") and counter.traces == 0
    warning = next(w for w in result.warnings if "your own modules and classes" in w)
    for name in ("newuser_layers.SCALE", "newuser_layers.NEW (added)",
                 "Counter.extra (added)", "Counter.traces"):
        assert name in warning


# --- entries jitted by a framework are named as written ----------------------------

def test_an_entry_under_eqx_filter_jit_is_named_as_written(ip, run_magic):
    ip.run_cell("import equinox as eqx\nimport jax.numpy as jnp\nimport newuser_layers as L\n"
                "def eloss(w, x):\n    return L.block(w, x).sum()\n"
                "ew, ex = jnp.eye(4), jnp.ones(4)")
    result, _ = run_magic("-o -r 1 -n 1 --no-plot", "step = eqx.filter_jit(eloss)\nstep(ew, ex)")
    assert result.entry == "step"

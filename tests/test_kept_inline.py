"""Helpers nested, or kept inline with a reason worded for what they are: a program in
which nothing could be nested is measured once, a library's helper is nested where the
library lets it be, and the report's counts of a helper's jit calls agree with the
program's."""

from __future__ import annotations

import dataclasses

import inline_layers as L
import jax
import jax.numpy as jnp
import pytest
from support import comparison

import jitmagic

ONCE = {"repeat": 2, "number": 1, "quiet": True}


def test_a_program_with_no_helper_nestable_is_measured_once():
    # `embed` is planned, but its one call passes a plain object holding an array,
    # which a jit takes neither traced nor static: its call runs inline, and the
    # nested program is the flat one
    c = jitmagic.compare(jax.grad(L.loss), jnp.ones((4, 3)), jnp.array([1, 2, 3]), **ONCE)
    assert c.nested.helpers == () and c.nested.inline == ("embed",)
    assert c.flat.samples["first_call_s"] and c.nested.samples["first_call_s"] == []
    assert any(n.startswith("`embed` stays inline for calls on a `Table` holding arrays")
               for n in c.nested.notes), c.nested.notes
    assert any("measured once" in n for n in c.nested.notes), c.nested.notes
    assert "both variants are the same program" in c.verdict.text


def test_a_helper_that_takes_no_array_but_reads_a_table_is_nested():
    # `lookup()` passes nothing to trace, yet builds equations on a captured table:
    # a jit of it holds them, as `jax.jit(lookup)` would
    c = jitmagic.compare(jax.grad(L.scaled_loss), jnp.ones((2, 3)), **ONCE)
    assert c.nested.helpers == ("lookup",) and c.nested.helper_calls == {"lookup": 3}
    assert c.nested.jaxpr_eqns < c.flat.jaxpr_eqns
    assert c.outputs_match
    assert not any("`lookup` stays inline" in n for n in c.nested.notes), c.nested.notes


@pytest.mark.slow  # lineax's first trace: seconds here
def test_an_operator_lineax_runs_itself_is_nested_and_what_it_calls_is_named():
    pytest.importorskip("lineax")
    c = jitmagic.compare(L.solve, jnp.linspace(0.0, 1.0, 16), **ONCE)
    assert c.nested.helpers == ("operator",) and c.nested.helper_calls["operator"] >= 1
    assert c.nested.inline == () and c.outputs_match
    assert c.nested.stablehlo_bytes != c.flat.stablehlo_bytes  # a program of its own
    note = next(n for n in c.nested.notes if n.startswith("`operator` is held by lineax"))
    assert "(`laplacian`, `shift`) run inside that jit" in note, note


@pytest.mark.slow  # Haiku's transform: seconds here
def test_a_haiku_module_kept_inline_is_said_in_haikus_terms():
    hk = pytest.importorskip("haiku")
    import haiku_layers as H

    net = hk.without_apply_rng(hk.transform(H.forward))
    x = jnp.ones((2, 8))
    params = net.init(jax.random.PRNGKey(0), x)

    def loss(params, x):
        return jnp.mean(net.apply(params, x) ** 2)

    c = jitmagic.compare(jax.grad(loss), params, x, **ONCE)
    assert "haiku_layers.norm" in c.nested.helpers
    assert "haiku_layers.Block.__call__" in c.nested.inline
    why = next(n for n in c.nested.notes
               if n.startswith("`haiku_layers.Block.__call__` stays inline"))
    assert "it reads its parameters with `hk.get_parameter` from the state `hk.transform` " \
           "keeps" in why, why
    assert "Keras" not in why and "stateless_call" not in why


def test_a_helpers_jit_calls_under_grad_agree_with_the_programs_count():
    c = jitmagic.compare(jax.grad(L.fit_loss), 1.5, jnp.linspace(0.0, 1.0, 32), **ONCE)
    assert c.nested.helper_calls == {"interp": 4}
    grown = c.nested.nested_calls - c.flat.nested_calls
    assert grown == 8  # each call and its backward pass
    note = next(n for n in c.nested.notes if n.startswith("under autodiff"))
    assert "(4 of `interp`; 4 in all)" in note, note
    assert c.nested.helper_calls["interp"] + 4 == grown


def test_the_users_own_jit_is_advised_kept_not_added():
    c = jitmagic.compare(jax.grad(L.stack), jnp.ones(8), **ONCE)
    assert c.nested.helpers == ("smooth_jit",) and c.nested.own_jit == ("smooth_jit",)
    assert c.flat.own_jit == ()
    assert "nested helpers: smooth_jit (4 jit calls, your own jax.jit)" in \
        c.report(verbose=True)
    assert jitmagic.Comparison.from_dict(c.to_dict()).nested.own_jit == ("smooth_jit",)
    # where nesting pays, the advice says to keep the jit the user wrote
    runs = {"first_call_s": [1.0, 1.01, 0.99, 1.0, 1.02, 0.98]}
    faster = comparison(runs, {"first_call_s": [0.5, 0.51, 0.49, 0.5, 0.52, 0.48]},
                        every=0.01)
    own = dataclasses.replace(faster, variants={
        **faster.variants, "nested": dataclasses.replace(
            faster.nested, helpers=("smooth_jit", "dense"), own_jit=("smooth_jit",))})
    fix = next(x.fix for x in own.why if x.name.startswith("helpers inlined on every call"))
    assert fix == ("`jax.jit` on `dense`; keep your own `jax.jit` on `smooth_jit`: the "
                   "nested variant ran it under it"), fix


def test_backward_passes_of_helpers_inside_a_nested_helper_are_counted_too():
    c = jitmagic.compare(jax.grad(L.pair_loss), 1.5, jnp.linspace(0.0, 1.0, 32), **ONCE)
    assert c.nested.helper_calls == {"pair": 2, "interp": 5}
    note = next(n for n in c.nested.notes if n.startswith("under autodiff"))
    assert "(2 of `pair`, 5 of `interp`; 7 in all)" in note, note
    assert c.nested.nested_calls - c.flat.nested_calls == 7 + 7


def test_a_nested_variant_that_raised_says_nothing_of_its_programs_jit_calls():
    # no run of the nested variant finished (`guarded` raises under its own jit, as it
    # runs): its program's jit calls were never read, so no note says `guarded` had none;
    # the helpers shown are those it nested, whose jit raised
    c = jitmagic.compare(L.guarded_mlp, jnp.eye(8), jnp.ones((2, 8)), **ONCE)
    assert c.flat.ok and "raised under its own jit only" in c.nested.error
    assert c.nested.helpers == ("guarded",) and c.nested.inline == ()
    assert c.nested.helper_calls == {} and c.nested.notes == (), c.nested.notes
    assert "nested helpers: guarded\n" in c.report(verbose=True)

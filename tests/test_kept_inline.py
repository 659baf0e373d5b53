"""Helpers nested, or kept inline with a reason worded for what they are: a program in
which nothing could be nested is measured once, a library's helper is nested where the
library lets it be, and the report's counts of a helper's jit calls agree with the
program's."""

from __future__ import annotations

import inline_layers as L
import jax
import jax.numpy as jnp

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

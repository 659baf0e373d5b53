"""Library code a helper runs inside: what is nested, what stays inline, and why."""

from __future__ import annotations

import jax
import jax.numpy as jnp

import jitmagic


def test_a_pallas_kernel_body_stays_inline_with_its_reason():
    from jax.experimental import pallas as pl

    def add_kernel(x_ref, y_ref, o_ref):  # a function of Refs: pallas_call runs it
        o_ref[...] = x_ref[...] + y_ref[...]

    def add(x, y):
        return pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                              interpret=True)(x, y)

    def model(x):
        return add(x, x) + add(x, 2 * x)

    c = jitmagic.compare(model, jnp.ones(8), repeat=1, number=1, progress=False)
    assert c.nested.helpers == ("add",) and c.nested.helper_calls == {"add": 2}
    assert c.nested.inline == ("add_kernel",)
    assert any("`add_kernel` stays inline: it is a Pallas kernel body" in n
               for n in c.nested.notes)
    assert c.outputs_match

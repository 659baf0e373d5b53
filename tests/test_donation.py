"""An entry jitted with donation: the user's arrays are never deleted, and a note says
the variants run without it."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

import jitmagic


def _scale(x):
    return jnp.sin(x) * 2.0 + x


@functools.partial(jax.jit, donate_argnums=0)
def donating_step(x):
    return _scale(x) + _scale(x + 1.0)


def test_a_donating_entry_leaves_the_users_array_intact():
    x = jnp.arange(3.0)
    result = jitmagic.compare(donating_step, x, repeat=2, number=2, progress=False)
    assert not x.is_deleted() and float(x.sum()) == 3.0
    assert result.nested.helpers == ("_scale",) and result.outputs_match
    assert any("donates its arguments (donate_argnums=(0,)" in n for n in result.flat.notes)


def test_the_magic_line_form_leaves_a_donated_array_intact(run_magic, ip):
    ip.user_ns.update(donating_step=donating_step, xd=jnp.ones(3))
    try:
        result, cap = run_magic("-o -v -r 1 -n 2 --no-plot donating_step(xd)")
        assert not ip.user_ns["xd"].is_deleted()
        assert "measures it without donation" in cap.outputs[0].data["text/plain"]
    finally:
        for name in ("donating_step", "xd"):
            ip.user_ns.pop(name, None)

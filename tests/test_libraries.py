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


def test_a_helper_a_lineax_primitive_runs_itself_is_named_with_its_reason():
    import lineax as lx

    def matvec(u):  # traced only inside lineax's primitive, when it is lowered
        return 2.0 * u - jnp.roll(u, 1) - jnp.roll(u, -1) + 0.1 * u

    def solve(b):
        op = lx.FunctionLinearOperator(matvec, jax.eval_shape(lambda: b),
                                       tags=lx.positive_semidefinite_tag)
        return lx.linear_solve(op, b, solver=lx.CG(rtol=1e-6, atol=1e-6)).value

    c = jitmagic.compare(solve, jnp.ones(32), repeat=1, number=1, progress=False)
    assert c.nested.inline == ("matvec",) and c.nested.helpers == ()
    assert ("`matvec` stays inline: it is called inside lineax's `linear_solve`, which runs "
            "it itself: jitmagic cannot nest into it") in c.nested.notes
    assert "calls no helper of yours" not in c.verdict.text


def test_a_host_callback_of_the_users_is_not_nested():
    import numpy as np

    def host(x):  # NumPy on the host: pure_callback runs it at run time
        return np.sin(x)

    def model(x):
        y = jax.pure_callback(host, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        return y * 2

    c = jitmagic.compare(model, jnp.ones(4), repeat=1, number=1, progress=False)
    assert c.flat.ok and c.nested.ok and c.nested.helpers == ()
    assert "host" not in c.nested.inline or any("`host` stays inline" in n
                                                for n in c.nested.notes)


def test_a_function_under_a_wraps_decorator_is_one_helper():
    import functools

    def logged(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            return f(*args, **kwargs)
        return wrapper

    @logged
    def layer(x):
        return jnp.sin(x) * 2

    def model(x):
        return layer(x) + layer(x)

    c = jitmagic.compare(model, jnp.ones(3), repeat=1, number=1, progress=False)
    assert c.nested.helpers == ("layer",) and c.nested.helper_calls == {"layer": 2}

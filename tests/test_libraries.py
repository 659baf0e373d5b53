"""Library code a helper runs inside: what is nested, what stays inline, and why."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import pytest

import jitmagic


def test_a_pallas_kernel_body_is_nested_inside_pallas_call():
    from jax.experimental import pallas as pl

    def add_kernel(x_ref, y_ref, o_ref):  # a function of Refs: pallas_call runs it
        o_ref[...] = x_ref[...] + y_ref[...]

    def add(x, y):
        return pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                              interpret=True)(x, y)

    def model(x):
        return add(x, x) + add(x, 2 * x)

    c = jitmagic.compare(model, jnp.ones(8), repeat=1, number=1, progress=False)
    # a jit of a function of Refs traces inside the kernel (every Pallas lowering has a
    # rule for a jit in a kernel): it is nested, not refused
    assert c.nested.helpers == ("add", "add_kernel")
    assert c.nested.helper_calls == {"add": 2, "add_kernel": 2}
    assert c.nested.inline == ()
    assert any(n.startswith("`add_kernel` is a Pallas kernel body: its jit runs inside")
               for n in c.nested.notes), c.nested.notes
    assert c.outputs_match
    alone = jitmagic.compare(model, jnp.ones(8), repeat=1, number=1, progress=False,
                             nest=["add_kernel"])
    assert alone.nested.helper_calls == {"add_kernel": 2} and alone.outputs_match


@pytest.mark.slow  # a real library's first trace: 4 s here
def test_a_helper_a_lineax_primitive_runs_itself_is_nested_where_the_code_names_it():
    import lineax as lx

    def matvec(u):  # traced only inside lineax's primitive, when it is lowered
        return 2.0 * u - jnp.roll(u, 1) - jnp.roll(u, -1) + 0.1 * u

    def solve(b):
        op = lx.FunctionLinearOperator(matvec, jax.eval_shape(lambda: b),
                                       tags=lx.positive_semidefinite_tag)
        return lx.linear_solve(op, b, solver=lx.CG(rtol=1e-6, atol=1e-6)).value

    c = jitmagic.compare(solve, jnp.ones(32), repeat=1, number=1, progress=False)
    # lineax would run the plain function only as it lowers the program (when the
    # trampoline is gone): handed a jit where `solve` names `matvec`, it traces it at once
    assert c.nested.helpers == ("matvec",) and c.nested.inline == ()
    assert any(n.startswith("`matvec` is held by lineax's `linear_solve`, which runs it "
                            "itself: it is nested by handing that a jit of `matvec`")
               for n in c.nested.notes), c.nested.notes
    assert c.outputs_match


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


def compiled(f):
    """A jit of a wrapper, renamed: the program calls ``compiled_<name>``."""
    @functools.wraps(f)
    def wrapper(*args):
        return f(*args)
    wrapper.__name__ = wrapper.__qualname__ = f"compiled_{f.__name__}"
    return jax.jit(wrapper)


@compiled
def block(w, x):
    return jnp.tanh(w @ x)


def forward(ws, x):
    for w in ws:
        x = block(w, x)
    return x


twice = jax.jit(block)  # wrapped twice: each call of it is two jits, one call of `block`


def forward_then_twice(ws, x):
    return twice(ws[0], forward(ws, x))


def test_a_helper_whose_jit_a_decorator_renames_is_claimed_under_its_own_name():
    ws = [jnp.eye(4) * (i + 1) for i in range(3)]
    c = jitmagic.compare(forward, ws, jnp.ones(4), repeat=1, number=1, progress=False)
    assert "jit[name=compiled_block" in c.nested.jaxpr_text and c.flat.nested_calls == 0
    assert c.nested.helpers == ("block",) and c.nested.helper_calls == {"block": 3}
    assert c.nested.inline == () and "same program" not in c.verdict.text


def test_a_helper_jit_wrapped_twice_counts_once_a_call():
    ws = [jnp.eye(4) * (i + 1) for i in range(3)]
    c = jitmagic.compare(forward_then_twice, ws, jnp.ones(4), repeat=1, number=1,
                         progress=False)
    assert c.nested.nested_calls == 1 + 3 + 2  # `forward`'s jit, 3 of `block`, `twice`'s 2
    assert c.nested.helper_calls == {"forward": 1, "block": 4}


def lora_block(w, x):
    return jax.nn.relu(w @ x)


def lora_forward(params, x):
    for w in params:
        x = lora_block(w, x)
    return x


def lora_params(n: int = 3):
    """``n`` 8×8 weights wrapped as quax's LoRA example wraps one (rank 2), and a batch."""
    import jax.random as jr
    from quax.examples import lora

    keys = jr.split(jr.PRNGKey(0), 2 * n)
    params = [lora.LoraArray(jr.normal(k, (8, 8)), rank=2, key=ka)
              for k, ka in zip(keys[:n], keys[n:], strict=True)]
    return params, jnp.ones((4, 8))


@pytest.mark.slow  # a real library's first trace: 4 s here
def test_a_quax_lora_model_is_claimed_nested_with_its_jit_calls():
    import quax

    params, xs = lora_params()
    entry = quax.quaxify(jax.vmap(lora_forward, in_axes=(None, 0)))
    c = jitmagic.compare(entry, params, xs, repeat=1, number=1, progress=False)
    # quax traces each helper's jit again, as `qfun`: matched by the code it runs
    assert "qfun" in c.nested.jaxpr_text and "lora_block" not in c.nested.jaxpr_text
    assert c.nested.helpers == ("lora_block",) and c.nested.helper_calls == {"lora_block": 3}
    assert c.nested.inline == () and not any("stays inline" in n for n in c.nested.notes)
    assert c.verdict.text.startswith("Nested jit on `lora_block`")
    assert "same program" not in c.verdict.text and c.outputs_match


@pytest.mark.slow  # a real library's first trace: 4 s here
def test_a_function_calling_quaxify_nests_both_of_its_helpers():
    import quax

    def run(params, xs):
        return quax.quaxify(jax.vmap(lora_forward, in_axes=(None, 0)))(params, xs)

    c = jitmagic.compare(run, *lora_params(), repeat=1, number=1, progress=False)
    assert c.nested.helpers == ("lora_forward", "lora_block")
    assert c.nested.helper_calls == {"lora_forward": 1, "lora_block": 3}
    assert "same program" not in c.verdict.text and c.outputs_match

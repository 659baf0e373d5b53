"""A user's layers module, imported by tests/test_kept_inline.py as `L`: a lookup table
that is a plain class (not a pytree), a helper that takes no array, an operator handed
to lineax, a helper called four times in a loss, a layer that raises under a jit of
its own."""

import sys

import jax
import jax.numpy as jnp


class Table:
    """An embedding table kept in a plain object: jit can take it neither traced (it is
    not a pytree) nor static (it holds an array)."""

    def __init__(self, values):
        self.values = values


TABLE = Table(jnp.linspace(-1.0, 1.0, 40).reshape(10, 4))


def embed(table, ids):
    return jnp.take(table.values, ids, axis=0)


def loss(w, ids):
    h = jnp.tanh(embed(TABLE, ids) @ w)
    return jnp.mean(h ** 2)


#: A table the code reads as a global: a helper that takes no argument builds its
#: equations on it.
WEIGHTS = jnp.linspace(0.5, 1.5, 12).reshape(3, 4)


def lookup():
    return jnp.tanh(WEIGHTS) * 2.0


def scaled_loss(x):
    total = 0.0
    for _ in range(3):
        total = total + jnp.sum((x @ lookup()) ** 2)
    return total


def shift(u):
    return jnp.roll(u, 1) + jnp.roll(u, -1)


def laplacian(u):
    return shift(u) - 2.0 * u


def operator(u):  # handed to lineax, whose `linear_solve` runs it itself
    return 1.1 * u - laplacian(u)


def solve(b):
    import jax
    import lineax as lx

    op = lx.FunctionLinearOperator(operator, jax.eval_shape(lambda: b),
                                   tags=lx.positive_semidefinite_tag)
    return lx.linear_solve(op, b, solver=lx.CG(rtol=1e-6, atol=1e-6)).value


def interp(x, w):
    return jnp.tanh(x * w) + jnp.sin(x)


def fit_loss(w, x):
    y = interp(x, w) + interp(2 * x, w) + interp(3 * x, w) + interp(4 * x, w)
    return jnp.sum(y ** 2)


def smooth(x):
    for _ in range(8):
        x = jnp.sin(x) * 0.9 + jnp.cos(x) * 0.1
    return x


smooth_jit = jax.jit(smooth)  # the user's own jitted twin, which `stack` calls


def stack(x):
    for _ in range(4):
        x = smooth_jit(x)
    return jnp.sum(x ** 2)


def pair(x, w):
    return interp(x, w) * interp(2 * x, w)


def pair_loss(w, x):
    return jnp.sum(pair(x, w) + pair(3 * x, w) + interp(x, w))


def _refuse(y):
    raise ValueError("raised under its own jit only")


def guarded(w, x):
    """A layer whose host callback raises where it runs under a jit of its own (nested)."""
    y = jnp.tanh(x @ w)
    if isinstance(x, jax.core.Tracer) and sys._getframe(1).f_code.co_name != "guarded_mlp":
        jax.debug.callback(_refuse, y)
    return y


def guarded_mlp(w, x):
    for _ in range(3):
        x = guarded(w, x)
    return x.sum()

"""A user's layers module whose helpers cannot all be nested, imported by
tests/test_kept_inline.py as `L`: a lookup table that is a plain class (not a pytree)."""

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

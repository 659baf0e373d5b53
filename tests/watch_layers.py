"""Training code in a module of its own, shaped as users write it, for tests/test_watch.py:
an Equinox model with a static config field, a NamedTuple state with a Python float in
it, and a step that takes the gradient of a loss with an auxiliary output."""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp


class MLP(eqx.Module):
    w: jax.Array
    depth: int = eqx.field(static=True)

    def __call__(self, x):
        for _ in range(self.depth):
            x = jnp.tanh(x @ self.w)
        return x


class State(NamedTuple):
    params: jax.Array
    lr: float | jax.Array
    count: int | jax.Array


def loss_fn(params, x):
    y = jnp.tanh(x @ params)
    return jnp.mean(y ** 2), y.shape[0]


@jax.jit
def train_step(state: State, x):
    (loss, _), g = jax.value_and_grad(loss_fn, has_aux=True)(state.params, x)
    decay = jnp.float32(0.99)  # an array: the weak Python float it multiplies turns strong
    return State(state.params - state.lr * g, state.lr * decay, state.count + 1), loss


@eqx.filter_jit
def model_step(model: MLP, x):
    return jnp.sum(model(x))

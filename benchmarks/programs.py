"""The 24-block residual MLP the TPU benchmarks time (bf16, 512 → 2048 → 512, batch 256),
flat and with ``jax.jit`` on its block, for the scripts that run it in a child process
(``tpu_order.py``, ``target_calibration.py``); the discussion's seed is
``seed_by_hand.py``'s. ``tpu_figures.py`` writes the same MLP as a cell of its own, as a
user would."""

from __future__ import annotations

import jax
import jax.numpy as jnp

BLOCKS, WIDTH, HIDDEN, BATCH = 24, 512, 2048, 256


def block(p, x):
    h = jax.nn.gelu(x @ p["w1"])
    return x + h @ p["w2"]


def mlp(params, x):
    for p in params:
        x = block(p, x)
    return x.sum()


def mlp_nested(params, x):
    for p in params:
        x = jax.jit(block)(p, x)
    return x.sum()


def mlp_specs() -> tuple:
    """The MLP's arguments as shapes (to lower and compile without data)."""
    layer = {"w1": jax.ShapeDtypeStruct((WIDTH, HIDDEN), jnp.bfloat16),
             "w2": jax.ShapeDtypeStruct((HIDDEN, WIDTH), jnp.bfloat16)}
    return [layer] * BLOCKS, jax.ShapeDtypeStruct((BATCH, WIDTH), jnp.bfloat16)


def mlp_arguments() -> tuple:
    """The MLP's arguments: small random weights, a batch of ones."""
    keys = jax.random.split(jax.random.key(0), BLOCKS)
    params = [{"w1": jax.random.normal(k, (WIDTH, HIDDEN), jnp.bfloat16) * 0.02,
               "w2": jax.random.normal(k, (HIDDEN, WIDTH), jnp.bfloat16) * 0.02} for k in keys]
    return params, jnp.ones((BATCH, WIDTH), jnp.bfloat16)

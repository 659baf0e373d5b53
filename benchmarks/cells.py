"""The cells the benchmarks measure (the README's example)."""

README_CELL = """\
import jax.numpy as jnp
def layer(x):
    return sum(i * jnp.sin(x) for i in range(64))
def model(x):
    return sum(layer(x) for _ in range(16))
model(jnp.ones(128))
"""

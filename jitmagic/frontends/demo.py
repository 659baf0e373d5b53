"""The example from the JAX discussion that started this project.

``f`` is a reused low-level function; ``g`` calls it 16 times. Nesting jit on
``f`` keeps 16 calls in the IR instead of 16 inlined copies: on an older JAX,
one user measured the cold call of ``jax.jit(g)`` at 2.79 s flat and 36.5 ms
with ``f`` jitted.
"""

import jax.numpy as jnp


def f(x):
    return sum(i * x for i in range(256))


def g(x):
    return sum(f(x) for _ in range(16))


x = jnp.ones(128)

"""A user's own layer module whose helpers share one ``functools.wraps`` decorator,
imported by tests/test_decorated_helpers.py as ``L``."""

import functools

import jax.numpy as jnp


def traced(f):
    """A user's decorator: one wrapper code for every function it decorates."""
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)
    return wrapper


@traced
def attention(x):
    scores = jnp.tanh(x @ x.T)
    return scores @ x


@traced
def ffn(x):
    return jnp.sin(x) * 2.0 + jnp.cos(x)


@traced
def layer_norm(x):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / (x.std(-1, keepdims=True) + 1e-5)


def block(x):
    for _ in range(2):
        x = layer_norm(x + attention(x))
        x = layer_norm(x + ffn(x))
    return x


@traced
def decorated_block(x):
    """The entry itself under the same decorator: it is not its own helper."""
    return block(x)

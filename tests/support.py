"""Plain test data shared by several test modules (imported normally; fixtures live in conftest).

Cells are strings so that ``pytest.mark.parametrize`` can build variants of them at import time.
"""

#: A tiny version of the README's example: cheap to trace, still clearly nested.
SMALL_CELL = """\
import jax.numpy as jnp
def layer(x):
    return sum(i * jnp.sin(x) for i in range(8))
def model(x):
    return sum(layer(x) for _ in range(4))
model(jnp.ones(16))
"""

#: The ``--vmap`` example, made small: 2 matmul steps on 8×8.
VMAP_CELL = """\
import jax.numpy as jnp
def f(x):
    for _ in range(2):
        x = jnp.tanh(x @ x.T) + x
    return x.sum()
f(jnp.ones((8, 8)))
"""

#: The fewest repeats and calls that still measure every phase.
FAST = "-r 1 -n 2"

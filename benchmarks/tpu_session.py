"""``%%jitcompare`` in an IPython shell that holds the TPU (issue 60): the figures are
said to be the session's, with the command line that takes cold ones. On the TPU host:
``PYTHONPATH=$PYTHONPATH:$PWD python benchmarks/tpu_session.py [seed|mlp]`` (the MLP:
``tpu_figures.py``'s cell, as a user writes it)."""

import os
import sys

from IPython.testing.globalipapp import start_ipython

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tpu_figures import MLP  # noqa: E402 (the MLP cell the TPU figures time)

SEED = """\
def f(x):
    return sum(i * x for i in range(256))
def g(x):
    return sum(f(x) for _ in range(16))
g(x)
"""

ip = start_ipython()
ip.run_line_magic("load_ext", "jitmagic")
ip.run_cell("import jax, jax.numpy as jnp\nx = jnp.ones(128)\nprint(jax.devices())")
which = sys.argv[1] if len(sys.argv) > 1 else "seed"
ip.run_cell_magic("jitcompare", "-r 3", MLP if which == "mlp" else SEED)

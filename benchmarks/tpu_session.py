"""``%%jitcompare`` in an IPython shell that holds the TPU (issue 60): the figures are
said to be the session's, with the command line that takes cold ones. On the TPU host:
``python benchmarks/tpu_session.py``."""

from IPython.testing.globalipapp import start_ipython

ip = start_ipython()
ip.run_line_magic("load_ext", "jitmagic")
ip.run_cell("import jax, jax.numpy as jnp\nx = jnp.ones(128)\nprint(jax.devices())")
ip.run_cell_magic("jitcompare", "-r 3", """\
def f(x):
    return sum(i * x for i in range(256))
def g(x):
    return sum(f(x) for _ in range(16))
g(x)
""")

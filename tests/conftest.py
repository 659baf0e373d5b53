"""Shared fixtures: a real IPython shell with jitmagic loaded, and a leak check."""

from __future__ import annotations

import os
import signal

os.environ.setdefault("MPLBACKEND", "Agg")

import jax
import matplotlib.pyplot as plt
import pytest
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output
from jax._src import monitoring

#: A tiny version of the README's example: cheap to trace, still clearly nested.
SMALL_CELL = """\
import jax.numpy as jnp
def layer(x):
    return sum(i * jnp.sin(x) for i in range(8))
def model(x):
    return sum(layer(x) for _ in range(4))
model(jnp.ones(16))
"""

FAST = "-r 1 -n 2"


@pytest.fixture(scope="session")
def ip():
    shell = start_ipython()
    shell.run_line_magic("load_ext", "jitmagic")
    return shell


def kernel_state(shell) -> dict:
    """Everything a run of the magic must leave as it found it."""
    ns = {k: id(v) for k, v in shell.user_ns.items() if not k.startswith("_")}
    return {
        "namespace": ns,
        "jit": id(jax.jit),
        "config": dict(jax.config.values),
        "duration_listeners": list(monitoring._event_duration_secs_listeners),
        "event_listeners": list(monitoring._event_listeners),
        "figures": plt.get_fignums(),
        "sigint": signal.getsignal(signal.SIGINT),
    }


@pytest.fixture
def run_magic(ip):
    """Run ``%%jitcompare`` (``%jitcompare`` when cell is None) and check that the
    kernel is as before, whether the magic returned or raised.

    Returns (result, captured outputs).
    """

    def run(line: str, cell: str | None = None):
        before = kernel_state(ip)
        try:
            with capture_output() as cap:
                if cell is None:
                    result = ip.run_line_magic("jitcompare", line)
                else:
                    result = ip.run_cell_magic("jitcompare", line, cell)
        finally:
            assert kernel_state(ip) == before, "the magic changed the kernel's state"
        return result, cap

    return run

"""Helpers for the tests that run real notebooks: the notebook, and a private Jupyter home."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import nbformat
import psutil

#: The first cell prints the kernel's Python, so a test can check it is this venv's.
KERNEL_CHECK = "import sys\nprint('kernel python:', sys.executable)\n%load_ext jitmagic"

#: The issue's example, small: 2 matmul steps on 8×8, batch 8, one cold run, 5 calls per loop.
ORDERING_CELL = """\
%%jitcompare --vmap --batch 8 -r 1 -n 5
import jax.numpy as jnp
def f(x):
    for _ in range(2):
        x = jnp.tanh(x @ x.T) + x
    return x.sum()
f(jnp.ones((8, 8)))"""


def ordering_notebook(path: Path) -> Path:
    """Write the two-cell notebook (load, then ``%%jitcompare --vmap``) to ``path``."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(KERNEL_CHECK), nbformat.v4.new_code_cell(ORDERING_CELL)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)
    return path


def private_jupyter_env(home: Path) -> dict[str, str]:
    """Environment in which Jupyter, IPython and matplotlib keep all their state under ``home``.

    The kernel is this venv's own ``python3`` spec (``sys.prefix/share/jupyter``),
    whose ``python`` Jupyter replaces by the server's ``sys.executable``.
    """
    dirs = {
        "JUPYTER_CONFIG_DIR": "config",
        "JUPYTER_DATA_DIR": "data",
        "JUPYTER_RUNTIME_DIR": "runtime",
        "JUPYTERLAB_SETTINGS_DIR": "lab-settings",
        "JUPYTERLAB_WORKSPACES_DIR": "lab-workspaces",
        "IPYTHONDIR": "ipython",
        "MPLCONFIGDIR": "matplotlib",
    }
    env = dict(os.environ)
    for var, sub in dirs.items():
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(home / sub)
    env.pop("JUPYTER_PATH", None)
    env["PYTHONNOUSERSITE"] = "1"
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


class KernelMemory:
    """The peak resident memory of the kernels this process started, watched while a
    notebook runs: past ``limit`` bytes the kernel is killed at once, so that a cell that
    walks into XLA's memory cliff fails its test with the cell named, instead of the
    machine's OOM killer ending the kernel (or the test run) minutes later.

    ``on_cell_start`` is nbclient's hook: pass it to ``NotebookClient``."""

    def __init__(self, limit: int, every_s: float = 0.05):
        self.limit, self.every_s = limit, every_s
        self.peak, self.cell, self.killed_in = 0, -1, None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def on_cell_start(self, cell, cell_index: int, **_) -> None:
        self.cell = cell_index

    def __enter__(self) -> KernelMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        me = psutil.Process()
        while not self._done.wait(self.every_s):
            for kernel in me.children(recursive=True):
                try:
                    rss = kernel.memory_info().rss
                except psutil.Error:  # ended between the listing and the read
                    continue
                self.peak = max(self.peak, rss)
                if rss > self.limit and self.killed_in is None:
                    self.killed_in = self.cell
                    kernel.kill()

    def problem(self) -> str | None:
        """Why the run failed on memory, in words (None: it stayed under the limit)."""
        if self.killed_in is None:
            return None
        return (f"the kernel passed {self.limit / 2**30:.1f} GiB in code cell index "
                f"{self.killed_in} and was killed (peak {self.peak / 2**30:.1f} GiB): "
                "that cell compiles past what this machine can hold")

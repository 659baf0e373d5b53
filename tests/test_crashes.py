"""A measurement whose process native code kills (issue 59, item 3): the command says by
which signal, in which variant and stage, and what to do, instead of ending with 139
and nothing said."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from support import SMALL_CELL

#: Stands in for XLA crashing as it compiles the measured program: JAX's monitoring
#: hook, which runs inside the compile, kills the process by SIGSEGV once armed (after
#: the file's own arrays are built).
CRASHES = """\
import os, signal
import jax, jax.numpy as jnp

armed = False

def _crash_on_compile(event, seconds, **kwargs):
    if armed and event == "/jax/core/compile/backend_compile_duration":
        os.kill(os.getpid(), signal.SIGSEGV)

jax.monitoring.register_event_duration_secs_listener(_crash_on_compile)

def f(x):
    return jnp.sin(x) * 2

def g(x):
    return f(x) + f(x)

x = jnp.ones(8)
armed = True
g(x)
"""


@pytest.mark.slow
@pytest.mark.parametrize("quiet", [[], ["-q"]])
def test_a_compile_that_kills_the_process_is_said_with_its_variant_and_stage(tmp_path,
                                                                            quiet):
    (tmp_path / "cell.py").write_text(CRASHES)
    done = subprocess.run([sys.executable, "-m", "jitmagic", "cell.py", "-r", "1", *quiet,
                           "--save", "r.json"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert done.returncode == 128 + signal.SIGSEGV
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("jitmagic: killed by SIGSEGV at jitcompare g: flat 1/1 · ")
    assert "native code (XLA, libtpu, or an extension your code calls) crashed" in last
    assert "Fatal Python error: Segmentation fault" in done.stderr  # faulthandler's
    assert not (tmp_path / "r.json").exists() and done.stdout == ""


def test_a_measurement_that_ends_well_ends_as_before(tmp_path):
    (tmp_path / "cell.py").write_text("import sys\nprint('ran')\nsys.exit(5)\nf(1)\n")
    done = subprocess.run([sys.executable, "-m", "jitmagic", "cell.py", "-r", "1", "-q"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 1 and "ran" in done.stdout
    assert "killed by" not in done.stderr


@pytest.mark.slow
def test_a_terminals_ctrl_c_reaches_the_watched_measurement_which_stops_as_before(tmp_path):
    """A terminal sends Ctrl-C to its foreground process group: the command's process and
    the child that measures. The child stops at its next checkpoint and shows what it
    measured (status 4); the command only waited."""
    (tmp_path / "cell.py").write_text(SMALL_CELL)
    proc = subprocess.Popen([sys.executable, "-m", "jitmagic", "cell.py", "-r", "50"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, start_new_session=True,
                            env={**os.environ, "JAX_PLATFORMS": "cpu"})
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # a log: one progress line a stage
            if " 2/" in line:  # the second round has begun
                break
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 4, err
    assert "interrupted by the user" in out

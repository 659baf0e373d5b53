"""A measurement whose process native code kills (issue 59, item 3): the command says by
which signal, in which variant and stage, and what to do, instead of ending with 139
and nothing said."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from support import SMALL_CELL

from jitmagic.backends import memory
from jitmagic.frontends.script.crashes import IN_ONE_PROCESS
from jitmagic.model.progress import Crashed

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
@pytest.mark.parametrize(("quiet", "part"), [([], "--lines"), (["-q"], "--lin")])
def test_a_compile_that_kills_the_process_is_said_with_its_variant_and_stage(tmp_path,
                                                                            quiet, part):
    """With a part (``--lines``, or as argparse takes it, ``--lin``) the samples stay in
    one process: the crash ends it, not measured again."""
    (tmp_path / "cell.py").write_text(CRASHES)
    done = subprocess.run([sys.executable, "-m", "jitmagic", "cell.py", "-r", "1", *quiet,
                           part, "--save", "r.json"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert done.returncode == 128 + signal.SIGSEGV
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("jitmagic: killed by SIGSEGV at jitcompare g: flat 1/1 · ")
    assert "native code (XLA, libtpu, or an extension your code calls) crashed" in last
    assert "run that step of that variant alone (flat: `jax.jit` on the function compared" in last
    assert "Fatal Python error: Segmentation fault" in done.stderr  # faulthandler's
    assert "measuring again" not in done.stderr  # it would crash again in one process
    assert not (tmp_path / "r.json").exists() and done.stdout == ""


@pytest.mark.slow
def test_a_crash_in_one_variant_is_its_finding_and_the_others_figures_are_kept(tmp_path):
    """The comparison alone: native code killing its process in the nested variant, the
    command measures again, each cold sample in a fresh process, as where the compiler
    remembers: the crash is the nested variant's finding, flat's figures are kept."""
    fixture = Path(__file__).parent / "fixtures" / "fresh" / "nested_fails.py"
    env = {k: v for k, v in os.environ.items() if k != memory.STANDIN_ENV}
    done = subprocess.run([sys.executable, "-m", "jitmagic", str(fixture), "-r", "2",
                           "--save", "r.json", "--", "crash"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300,
                          env={**env, "JAX_PLATFORMS": "cpu", "TMPDIR": str(tmp_path)})
    assert done.returncode == 1, done.stderr  # a variant failed: as for one that raised
    assert ("jitmagic: killed by SIGSEGV at jitcompare mlp: nested 1/2 · first call: native "
            "code crashed the process; measuring again with each cold sample in a fresh "
            "process, where a crash in a sample is its variant's finding") in done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert len(report["variants"]["flat"]["samples"]["first_call_s"]) == 2
    error = report["variants"]["nested"]["error"]
    assert "killed by SIGSEGV during the nested variant's run 1 of 2 · first call" in error
    assert 'nested_fails.py", line 14 in _fail' in error
    crash = report["env"]["cold_samples"]["after_crash"]
    assert crash == "SIGSEGV at jitcompare mlp: nested 1/2 · first call"
    said = " ".join(done.stdout.split())
    assert f"in one process the command was killed by {crash}" in said
    assert not list(tmp_path.glob("jitmagic-*"))


def test_a_crash_is_a_variants_in_its_rounds_only():
    """Only a crash in a round is measured again: one in the leak check's trace of the
    nested program (a trial's) would crash the command's own process again."""
    said = {stage: Crashed(signal.SIGSEGV, stage).in_variant for stage in (
        "jitcompare g: nested 1/2 · first call", "jitcompare g: flat 2/3 · XLA compile",
        "jitcompare g: checking the nested variant leaks nothing",
        "jitcompare: finding helpers", None)}
    assert list(said.values()) == [True, True, False, False, False]


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
    out, err, status, _ = _interrupted(tmp_path, lambda pid: os.killpg(pid, signal.SIGINT))
    assert status == 4, err
    assert "interrupted by the user" in out


def _interrupted(tmp_path, press):
    """The command measuring a cell, ``press(pid)`` once its second round has begun (a
    log: one progress line a stage): its stdout, stderr, status and the children it had."""
    (tmp_path / "cell.py").write_text(SMALL_CELL)
    proc = subprocess.Popen([sys.executable, "-m", "jitmagic", "cell.py", "-r", "50"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, start_new_session=True,
                            env={**os.environ, "JAX_PLATFORMS": "cpu"})
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if " 2/" in line:
                break
        children = psutil.Process(proc.pid).children()
        press(proc.pid)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return out, err, proc.returncode, children


def _command(tmp_path, *args, env=None):
    return subprocess.run([sys.executable, "-m", "jitmagic", *args], capture_output=True,
                          text=True, cwd=tmp_path, timeout=300,
                          env={**os.environ, "JAX_PLATFORMS": "cpu", **(env or {})})


#: A cell-shaped script whose function ends the process at once, with a status of its own.
ENDS_EARLY = """\
import os
import jax.numpy as jnp
def layer(x): return jnp.sin(x) * 2
def model(x):
    os._exit({status})
    return layer(x)
model(jnp.ones(8))
"""


@pytest.mark.parametrize("status", [0, 3])
def test_code_that_ends_the_process_early_is_said_and_never_passes(tmp_path, status):
    """``os._exit(0)`` in the measured code: no report, and no 0 (measured, every report
    written); nor its 3 (cannot write a report): one line, and 1."""
    (tmp_path / "cell.py").write_text(ENDS_EARLY.format(status=status))
    done = _command(tmp_path, "-r", "1", "-q", "--save", "e.json", "cell.py")
    assert done.returncode == 1, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"jitmagic: the process ended with status {status} at jitcompare")
    assert last.endswith("before it had finished (your code, or a library it calls, ended "
                         "it: os._exit); nothing was measured or saved")
    assert not (tmp_path / "e.json").exists() and done.stdout == ""
    one = _command(tmp_path, "-r", "1", "-q", "cell.py", env={IN_ONE_PROCESS: "1"})
    assert one.returncode == status  # in one process nothing is left to say it


#: Three compiles, then the process ended at once: the watch's ledger is never made.
WATCHED_ENDS_EARLY = """\
import os
import jax, jax.numpy as jnp
f = jax.jit(lambda x: x * 2)
for n in (1, 2, 3):
    f(jnp.ones(n))
os._exit(0)
"""


def test_a_watched_program_that_ends_the_process_early_fails_its_gate(tmp_path):
    (tmp_path / "oexit.py").write_text(WATCHED_ENDS_EARLY)
    done = _command(tmp_path, "watch", "--fail-after-warmup", "0", "--save", "w.json",
                    "oexit.py")
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "jitmagic watch: the process ended with status 0 before it had finished (your code, "
        "or a library it calls, ended it: os._exit); no ledger was made or saved, so no gate "
        "could judge it")
    assert not (tmp_path / "w.json").exists()


@pytest.mark.parametrize(("name", "said"), [
    ("SIGKILL", "killed by SIGKILL before the measurement began: out of memory (the kernel's "
                "out-of-memory killer), or another process killed it; nothing was measured "
                "or saved"),
    ("SIGTERM", "ended by signal SIGTERM before the measurement began (sent by another "
                "process: a timeout, kill); nothing was measured or saved"),
    ("SIGUSR1", "ended by signal SIGUSR1 before the measurement began (sent by another "),
])
def test_a_signal_from_outside_is_not_called_a_crash_of_native_code(tmp_path, name, said):
    number = getattr(signal, name)
    (tmp_path / "cell.py").write_text(f"import os\nos.kill(os.getpid(), {int(number)})\n"
                                      "def f(x):\n    return x\nf(1)\n")
    done = _command(tmp_path, "-r", "1", "cell.py")
    assert done.returncode == 128 + number
    assert done.stderr.strip().splitlines()[-1].startswith(f"jitmagic: {said}")
    assert "native code" not in done.stderr and "jax-ml" not in done.stderr


@pytest.mark.slow
def test_sigint_to_the_commands_pid_alone_stops_it_as_a_terminals_ctrl_c(tmp_path):
    """``kill -INT PID`` reaches the command's process only, not its group: the command
    hands it on to the child that measures, which stops as for Ctrl-C (status 4), and no
    process is left."""
    out, err, status, child = _interrupted(tmp_path, lambda pid: os.kill(pid, signal.SIGINT))
    assert status == 4, err
    assert "interrupted by the user" in out
    assert len(child) == 1 and not psutil.pid_exists(child[0].pid)

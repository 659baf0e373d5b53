"""The switch loses nothing and is never silent (issue 59): under ``JITMAGIC_WATCH`` a
program's own files, output and ending are as they are unwatched, and the gate's verdict
reaches the exit status and the ledger file whatever becomes of stderr (and of the
command's stdout). Real processes running a real JAX loop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_watch_env import HOOKED, RECOMPILES, _env, _hooked, _site

import jitmagic

pytestmark = pytest.mark.slow

#: The loop, then a file it writes and never closes (kept: a module global).
UNCLOSED = RECOMPILES + 'kept = open("data.txt", "w")\nkept.write("x" * 23)\n'


@pytest.mark.parametrize(("value", "status"), [(None, 0), ("fail_after_warmup=1", 1),
                                               ("save=missing/ledger.json", 3)])
def test_the_gates_status_keeps_the_files_the_program_left_open(tmp_path, value, status):
    """``python train.py`` as run (its module, not an ``exec``'s namespace, holds the
    file): the interpreter's own shutdown flushes it, watched as unwatched."""
    (tmp_path / "train.py").write_text(UNCLOSED)
    done = subprocess.run([sys.executable, "train.py"], cwd=tmp_path, capture_output=True,
                          text=True, env=_env(value, **_site(tmp_path)), timeout=300)
    assert done.returncode == status, done.stderr
    assert (tmp_path / "data.txt").read_text() == "x" * 23
    assert done.stdout == "done -0.9\n"


def _started(tmp_path: Path, source: str, value: str, **pipes: object) -> subprocess.Popen[str]:
    script = tmp_path / "train.py"
    script.write_text(source)
    return subprocess.Popen([sys.executable, "-c", HOOKED, str(script)], cwd=tmp_path,
                            env=_env(value), text=True, **pipes)  # type: ignore[call-overload]


def test_a_stderr_whose_reader_has_gone_changes_neither_status_nor_file(tmp_path):
    run = _started(tmp_path, RECOMPILES, "fail_after_warmup=1,save=ledger.json",
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run.stderr.close()  # the reader goes before the program has written a line there
    assert run.stdout.read() == "done -0.9\n"
    assert run.wait(timeout=300) == 1  # the gate failed, said or not
    assert jitmagic.load(str(tmp_path / "ledger.json")).source == "train.py"


def test_the_command_writes_its_report_when_stdout_is_gone(tmp_path):
    (tmp_path / "train.py").write_text(RECOMPILES.replace('print("done"', 'str(("done"'))
    run = subprocess.Popen([sys.executable, "-m", "jitmagic", "watch", "--save", "l.json",
                            "--fail-after-warmup", "1", "train.py"], cwd=tmp_path,
                           env=_env(None), text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    run.stdout.close()
    said = run.stderr.read()
    assert run.wait(timeout=300) == 1, said
    assert "Traceback" not in said and "BrokenPipe" not in said
    assert jitmagic.load(str(tmp_path / "l.json")).source == "train.py"


def test_with_stderr_closed_the_ledger_goes_nowhere_not_into_stdout(tmp_path):
    run = _started(tmp_path, RECOMPILES, "fail_after_warmup=1,save=ledger.json",
                   stdout=subprocess.PIPE, preexec_fn=lambda: os.close(2))
    out, _ = run.communicate(timeout=300)
    assert out == "done -0.9\n"  # the program's data alone: no live line, no ledger
    assert run.returncode == 1 and (tmp_path / "ledger.json").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_SETPIPE_SZ is Linux's")
def test_a_stderr_pipe_nobody_reads_does_not_hold_the_exit(tmp_path):
    import fcntl

    reader, writer = os.pipe()
    fcntl.fcntl(writer, 1031, 4096)  # F_SETPIPE_SZ: a 4 kB pipe, as on some systems
    source = RECOMPILES + 'import sys\nsys.stderr.write("." * 3500)\nsys.stderr.flush()\n'
    run = _started(tmp_path, source, "fail_after_warmup=1,save=ledger.json",
                   stdout=subprocess.PIPE, stderr=writer)
    os.close(writer)
    try:
        out, _ = run.communicate(timeout=120)  # stderr is never read
    finally:
        run.kill()
        os.close(reader)
    assert out == "done -0.9\n" and run.returncode == 1
    assert (tmp_path / "ledger.json").exists()


def test_a_relative_save_is_where_the_program_started(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    done = _hooked(tmp_path, RECOMPILES + 'os.chdir("elsewhere")\n', "save=ledger.json")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "ledger.json").exists()
    assert not (tmp_path / "elsewhere" / "ledger.json").exists()


def _run_under(tmp_path: Path, name: str, value: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / name).write_text(RECOMPILES)
    return subprocess.run([sys.executable, "-c", HOOKED, name], cwd=tmp_path,
                          env=_env(value), capture_output=True, text=True, timeout=300)


def test_a_second_program_under_one_save_says_whose_ledger_it_replaced(tmp_path):
    first = _run_under(tmp_path, "prep.py", "save=ledger.json")
    assert first.returncode == 0 and "replaced" not in first.stderr
    second = _run_under(tmp_path, "evaluate.py", "save=ledger.json")
    assert second.returncode == 0, second.stderr
    assert (f"jitwatch: save= replaced the ledger of prep.py in {tmp_path / 'ledger.json'}:"
            " give each program its own (e.g. JITMAGIC_WATCH=save=ledger-evaluate.json)"
            in second.stderr)
    assert json.loads((tmp_path / "ledger.json").read_text())["source"] == "evaluate.py"
    again = _run_under(tmp_path, "evaluate.py", "save=ledger.json")
    assert "replaced" not in again.stderr  # the same program again: its own ledger


def test_a_forked_child_runs_no_gate_and_writes_no_ledger(tmp_path):
    source = RECOMPILES + ('child = os.fork()\n'
                           'if child == 0:\n'
                           '    raise SystemExit(0)\n'
                           'os.waitpid(child, 0)\n')
    done = _hooked(tmp_path, source, "save=ledger.json")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count(" compiles took ") == 1  # the parent's ledger alone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ledger.json", "train.py"]


def test_jitmagics_own_measuring_compiles_count_against_no_gate(tmp_path):
    """A ``jitmagic.compare()`` inside the program compiles its function again and again
    (flat and nested, cold and warm): measurements, not the program's recompiles."""
    source = RECOMPILES.replace("(4, 4, 5)", "(4, 4, 4)") + (
        "import jitmagic\n"
        "jitmagic.compare(lambda x: step(w, x) * 2, jnp.ones(4))\n"
        "print('compared')\n")
    done = _hooked(tmp_path, source, "fail_after_warmup=1,save=ledger.json")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "done -0.6\ncompared\n"
    ledger = jitmagic.load(str(tmp_path / "ledger.json"))
    assert [c.function for c in ledger.compiles if not c.eager] == ["step"]


def test_the_command_watches_its_program_in_the_child_it_runs_it_in(tmp_path):
    """``python -m jitmagic watch`` runs the program in a supervised child, started by
    jitmagic's runner of child processes: the program's compiles are the run's, not
    jitmagic's own measuring (they were all left out, and every gate held)."""
    (tmp_path / "train.py").write_text(RECOMPILES)
    env = {k: v for k, v in _env(None).items() if k != "JITMAGIC_IN_ONE_PROCESS"}
    done = subprocess.run([sys.executable, "-m", "jitmagic", "watch", "--fail-after-warmup",
                           "0", "--save", "w.json", "train.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "done -0.9" in done.stdout and "`step` compiled 2 times" in done.stdout
    saved = json.loads((tmp_path / "w.json").read_text())
    assert [c["function"] for c in saved["compiles"] if c["function"] == "step"] == ["step"] * 2


@pytest.mark.parametrize("end", ["sys.exit(0)", "sys.exit(main())"])
def test_a_script_that_ends_with_sys_exit_0_is_judged_by_its_gate(tmp_path, end):
    """``sys.exit(main())`` is how scripts end: status 0 there is the run's ordinary end,
    which the gate judges (it read "Gate not checked: the run raised before its end")."""
    (tmp_path / "train.py").write_text(RECOMPILES.replace("import os", "import os, sys")
                                       + "def main():\n    return 0\n" + end + "\n")
    env = {k: v for k, v in _env(None).items() if k != "JITMAGIC_IN_ONE_PROCESS"}
    done = subprocess.run([sys.executable, "-m", "jitmagic", "watch", "--fail-after-warmup",
                           "0", "train.py"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr  # the gate's failure
    assert "Gate FAILED" in done.stdout and "not checked" not in done.stdout


def test_what_the_script_sets_before_importing_jax_counts_as_unwatched(tmp_path):
    """``os.environ["JAX_PLATFORMS"] = "cpu"`` before ``import jax`` counts, as under
    ``python FILE.py``: the command starts the watch as the script's import of jax ends.
    (It imported jax first: JAX read nothing, tried every backend it has and, where libtpu
    is installed on a machine with no TPU, printed libtpu's warnings on stderr.)"""
    (tmp_path / "train.py").write_text(
        'import os, time\nos.environ["JAX_PLATFORMS"] = "cpu"\ntime.sleep(3)\nimport jax\n'
        "print(jax.config.jax_platforms)\njax.jit(lambda x: x + 1)(1.0)\n")
    env = {k: v for k, v in _env(None).items()
           if k not in ("JITMAGIC_IN_ONE_PROCESS", "JAX_PLATFORMS")}
    done = subprocess.run([sys.executable, "-m", "jitmagic", "watch", "--save", "w.json",
                           "train.py"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == "cpu"
    assert "TPU" not in done.stderr  # libtpu never started
    ledger = jitmagic.load(str(tmp_path / "w.json"))
    assert [c.function for c in ledger.compiles if not c.eager] == ["<lambda>"]
    assert ledger.wall_s < 3  # timed from jax's import, as JITMAGIC_WATCH's hook times it

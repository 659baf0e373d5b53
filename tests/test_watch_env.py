"""``JITMAGIC_WATCH=1 python FILE.py``: the watch without wrapping the program
(:mod:`jitmagic.frontends.watch.hook`), in real processes.

A temporary venv would be slow (tests/test_packaging.py makes one, marked slow): what the
``.pth`` line runs is run directly (``python -c "import jitmagic_watch; ..."``), and the
``.pth`` file the wheel installs is made active in a folder that a ``sitecustomize`` on
``PYTHONPATH`` adds with ``site.addsitedir``, as a site folder's ``.pth`` is read at
start."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import jitmagic
from jitmagic.frontends.watch import hook

#: The file the wheel installs into site-packages (pyproject.toml's data-files).
PTH = Path(__file__).parent.parent / "jitmagic-watch.pth"

pytestmark = pytest.mark.slow

#: A loop whose step recompiles once (a short last batch); set before ``import jax``.
RECOMPILES = '''
import os
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp

@jax.jit
def step(w, x):
    return w - 0.1 * x.sum()

w = jnp.ones(3)
for n in (4, 4, 5):
    w = step(w, jnp.ones(n))
print("done", round(float(w.sum()), 3))
'''

STEADY = RECOMPILES.replace("(4, 4, 5)", "(4, 4, 4)")

#: Runs FILE (sys.argv[1]) as ``python FILE`` would, after what the ``.pth`` line runs.
HOOKED = ("import sys, jitmagic_watch; jitmagic_watch.begin(); sys.argv = sys.argv[1:]; "
          "exec(compile(open(sys.argv[0]).read(), sys.argv[0], 'exec'), "
          "{'__name__': '__main__'})")


def _env(value: str | None, **more: str) -> dict[str, str]:
    """This environment, with this checkout's jitmagic first on the path (the venv may
    hold another, installed), the variable set to ``value`` (None: unset)."""
    env = {k: v for k, v in os.environ.items() if k not in (hook.VARIABLE, hook.TOP)}
    env["PYTHONPATH"] = str(PTH.parent)
    if value is not None:
        env[hook.VARIABLE] = value
    env.update(more)
    return env


def _hooked(tmp_path: Path, source: str, value: str | None,
            **more: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "train.py"
    script.write_text(source)
    return subprocess.run([sys.executable, "-c", HOOKED, str(script)], cwd=tmp_path,
                          env=_env(value, **more), capture_output=True, text=True,
                          timeout=300)


def _site(tmp_path: Path) -> dict[str, str]:
    """A site folder holding the ``.pth`` the wheel installs, added at every start of a
    process with this ``PYTHONPATH`` (its children too), as the venv's own is."""
    site_dir, custom = tmp_path / "site", tmp_path / "custom"
    site_dir.mkdir(exist_ok=True)
    custom.mkdir(exist_ok=True)
    (site_dir / PTH.name).write_text(PTH.read_text())
    (custom / "sitecustomize.py").write_text(f"import site\nsite.addsitedir({str(site_dir)!r})\n")
    return {"PYTHONPATH": os.pathsep.join((str(PTH.parent), str(custom)))}


def test_a_watched_program_writes_its_ledger_on_stderr_and_to_a_file(tmp_path):
    done = _hooked(tmp_path, RECOMPILES, "save=ledger.json,html=ledger.html")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "done -0.9\n"  # the program's own output, nothing else
    assert "jitwatch: `step` compiles again (recompile 1 here) at line 12:" in done.stderr
    assert "shape of `x`: f32[4] → f32[5]" in done.stderr
    assert "of train.py's" in done.stderr  # the ledger, named by the program
    assert f"jitwatch: --save wrote {tmp_path / 'ledger.json'}" in done.stderr
    ledger = jitmagic.load(str(tmp_path / "ledger.json"))
    assert [c.function for c in ledger.compiles if not c.eager] == ["step", "step"]
    assert (tmp_path / "ledger.html").read_text().startswith("<!DOCTYPE html>")


def test_the_gate_sets_the_exit_status(tmp_path):
    failed = _hooked(tmp_path, RECOMPILES, "fail_after_warmup=1")
    assert failed.returncode == 1, failed.stderr
    assert "Gate FAILED" in failed.stderr
    assert "`step` compiled 2 times here, 1 after its warm-up of 1" in failed.stderr
    held = _hooked(tmp_path, STEADY, "fail-after-warmup=1,max_compiles=20")
    assert held.returncode == 0, held.stderr
    assert "Gate FAILED" not in held.stderr and "step" in held.stderr
    # the program's own error keeps its status and traceback; the gate is not judged
    raised = _hooked(tmp_path, RECOMPILES + "raise SystemError('boom')\n",
                     "fail_after_warmup=1")
    assert raised.returncode == 1
    assert "SystemError: boom" in raised.stderr and "Gate FAILED" not in raised.stderr
    assert "Gate not checked" in raised.stderr
    assert raised.stderr.index("SystemError: boom") < raised.stderr.index(" compiles took ")


def _not_applied(value: str, said: str, status: int = 2) -> str:
    """What a JAX program given ``value`` says on stderr: one line at once, one at exit."""
    start = f"jitmagic: JITMAGIC_WATCH={value!r}: "
    return (f"{start}{said}; the program runs unwatched, and ends with status {status}\n"
            f"{start}the watch (and any gate) asked for could not be applied: {said}\n")


@pytest.mark.parametrize(("value", "said"), [
    ("fail_after_warmp=1", "unknown option 'fail_after_warmp': give 1, or options as "
                           "NAME=VALUE joined by commas"),
    ("yes", "'yes' is not NAME=VALUE"),
    ("fail_after_warmup=one", "fail_after_warmup is a number of compiles, a whole number "
                              "from 0 (got 'one')"),
    ("fail_after_warmup=\u0663", "fail_after_warmup is a number of compiles, a whole "
                                  "number from 0 (got '\u0663')"),  # an Arabic-Indic 3
    ("save=", "save= needs a value, e.g. save=PATH"),
    ("max_compiles=1,max_compiles=2", "max_compiles is given twice"),
])
def test_a_bad_value_is_said_at_once_and_fails_the_jax_program_at_exit(tmp_path, value, said):
    """A JAX program must not pass a gate it was given and that was never applied: it
    runs, unwatched, and ends with status 2, having said why at once and again at exit."""
    done = _hooked(tmp_path, RECOMPILES, value)
    assert done.returncode == 2, done.stderr
    assert done.stdout == "done -0.9\n"  # the program ran, as written
    first, last = done.stderr.splitlines()
    assert first.startswith(f"jitmagic: JITMAGIC_WATCH={value!r}: {said}")
    assert first.endswith("; the program runs unwatched, and ends with status 2")
    assert last.startswith(f"jitmagic: JITMAGIC_WATCH={value!r}: the watch (and any gate) "
                           f"asked for could not be applied: {said}")


@pytest.mark.parametrize("argv", [["-c", "print(1)"], ["-m", "pip", "--version"]])
def test_a_bad_value_leaves_a_process_that_never_imports_jax_alone(tmp_path, argv):
    """Every Python of the environment reads the variable (pip too): none without JAX
    is stopped, nor even loads jitmagic."""
    done = subprocess.run([sys.executable, *argv], env=_env("fail_after_warmup=0,save=l.txt",
                                                            **_site(tmp_path)),
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.startswith("1\n" if argv[0] == "-c" else "pip ")


def test_a_path_the_watch_cannot_write_is_refused_once_jax_is_imported(tmp_path):
    done = _hooked(tmp_path, RECOMPILES, "fail_after_warmup=-1")
    assert done.returncode == 2 and done.stdout == "done -0.9\n"
    assert done.stderr == _not_applied("fail_after_warmup=-1", (
        "fail_after_warmup is a number of compiles, a whole number from 0 (got -1): e.g. "
        "fail_after_warmup=1"))
    value = "fail_after_warmup=0,save=ledger.txt"  # the gate given, and a typo beside it
    done = _hooked(tmp_path, RECOMPILES, value)
    assert done.returncode == 2 and done.stdout == "done -0.9\n"
    assert done.stderr == _not_applied(value, (
        f"--save writes a JSON file: give it a path ending in .json (got "
        f"{str(tmp_path / 'ledger.txt')!r}), e.g. --save ledger.json"))
    assert not (tmp_path / "ledger.txt").exists() and "Gate" not in done.stderr


def test_a_save_folder_that_does_not_exist_is_said_before_the_program_runs(tmp_path):
    """Checked as the command checks it, before the program's first JAX work."""
    missing = tmp_path / "missing" / "l.json"
    source = RECOMPILES.replace('print("done"', 'print("ran", file=sys.stderr)\nprint("done"')
    value = f"fail_after_warmup=0,save={missing}"
    done = _hooked(tmp_path, "import sys\n" + source, value)
    assert done.returncode == 3 and done.stdout == "done -0.9\n"  # as the command's status
    said = f"--save {missing}: cannot save to {missing}: the folder {missing.parent} does not exist"
    assert done.stderr == _not_applied(value, said, 3).replace("\n", "\nran\n", 1)


def test_the_watch_starts_only_once_jax_is_imported(tmp_path):
    """What the program sets before ``import jax`` applies (XLA_FLAGS here); a program
    that never imports JAX is not watched, and says so."""
    source = ('import os, sys\n'
              'print("jax" in sys.modules, "jitmagic.frontends.watch.api" in sys.modules)\n'
              'os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=3"\n'
              + RECOMPILES + 'print(jax.device_count())\n')
    done = _hooked(tmp_path, source, "1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["False False", "done -0.9", "3"]
    assert "compiles again" in done.stderr
    plain = _hooked(tmp_path, "print('no jax here')\n", "1")
    assert plain.returncode == 0 and plain.stdout == "no jax here\n"
    assert plain.stderr == ""  # nothing of jitmagic was loaded


def test_the_installed_line_watches_the_program_and_the_processes_it_starts(tmp_path):
    site = _site(tmp_path)
    (tmp_path / "child.py").write_text(RECOMPILES)
    (tmp_path / "parent.py").write_text(textwrap.dedent('''
        import subprocess, sys
        subprocess.run([sys.executable, "child.py"], check=True)
    ''') + STEADY)
    done = subprocess.run([sys.executable, "parent.py"], cwd=tmp_path, capture_output=True,
                          text=True, env=_env("save=ledger.json", **site), timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "done -0.9\ndone -0.6\n"  # the child, then the parent
    child = done.stderr.split("jitwatch: process ")[1]
    pid = int(child.split(" ")[0])
    assert child.startswith(f"{pid} (child.py), started under JITMAGIC_WATCH:")
    assert "shape of `x`: f32[4] → f32[5]" in child
    assert f"jitwatch: --save wrote {tmp_path / f'ledger.{pid}.json'}" in done.stderr  # its own
    assert f"jitwatch: --save wrote {tmp_path / 'ledger.json'}" in done.stderr  # the parent's
    parent = json.loads((tmp_path / "ledger.json").read_text())
    assert parent["source"] == "parent.py"
    assert jitmagic.load(str(tmp_path / f"ledger.{pid}.json")).source == "child.py"


def test_the_command_under_the_variable_writes_one_ledger(tmp_path):
    (tmp_path / "train.py").write_text(RECOMPILES)
    done = subprocess.run([sys.executable, "-m", "jitmagic", "watch", "train.py"],
                          cwd=tmp_path, env=_env("fail_after_warmup=1", **_site(tmp_path)),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr  # the command's own gate: none set
    assert (done.stdout + done.stderr).count(" compiles took ") == 1


def test_a_script_outside_the_working_folder_reads_its_own_lines(tmp_path):
    """``python ../elsewhere/train.py``: the script's own lines read ``line N``, not a path
    cut at a folder's name or with ``..`` in it; its helper module's place is cut from
    its start, keeping the file and line."""
    project = tmp_path / "a-project-folder-with-a-long-name" / "experiments"
    (tmp_path / "work").mkdir()
    project.mkdir(parents=True)
    (project / "model_helpers.py").write_text(
        "import jax\n\n@jax.jit\ndef loss(w, x):\n    return (w * x).sum()\n")
    (project / "train.py").write_text(RECOMPILES.replace(
        "import jax, jax.numpy as jnp", "import jax, jax.numpy as jnp\n"
        "from model_helpers import loss") + "loss(w, jnp.ones(3)); loss(w, jnp.ones((2, 3)))\n")
    done = subprocess.run([sys.executable, "../a-project-folder-with-a-long-name/"
                           "experiments/train.py"], cwd=tmp_path / "work",
                          env=_env("1", **_site(tmp_path)), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "`step` (defined at line 7)" in done.stderr  # @jax.jit, below the two imports
    assert "compiles again (recompile 1 here) at line 13" in done.stderr
    table = done.stderr[done.stderr.index("function  "):].splitlines()
    places = dict(re.split(r"\s{2,}", line)[:2] for line in table[1:] if "  " in line)
    assert places["step"] == "line 7"
    assert places["loss"] == "…/experiments/model_helpers.py:3"
    assert ".." not in done.stderr.replace("…", "")


def test_the_line_imports_jitmagic_only_once_the_program_imports_jax(tmp_path):
    site = _site(tmp_path)
    code = "import sys; print(sorted(m for m in sys.modules if m.startswith('jitmagic')))"
    for value in (None, "", "0", " 0 ", "1", "save=l.json"):  # on or off: no JAX, no jitmagic
        done = subprocess.run([sys.executable, "-c", code], env=_env(value, **site),
                              capture_output=True, text=True, timeout=120)
        expected = "[]\n" if value in (None, "", "0", " 0 ") else "['jitmagic_watch']\n"
        assert (done.returncode, done.stdout, done.stderr) == (0, expected, ""), value
    watched = subprocess.run([sys.executable, "-c", "import jax; " + code],
                             env=_env("1", JAX_PLATFORMS="cpu", **site),
                             capture_output=True, text=True, timeout=120)
    assert "'jitmagic.frontends.watch.hook'" in watched.stdout, watched.stderr  # then: on


@pytest.mark.parametrize("flag", ["--install-hook", "--remove-hook"])
def test_the_hook_flags_say_they_are_no_longer_needed_without_jax(tmp_path, flag):
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from jitmagic.frontends.watch.command import main; "
         f"status = main([{flag!r}]); print('jax' in sys.modules); sys.exit(status)"],
        env=_env(None), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (f"jitmagic watch: {flag} is no longer needed, and did nothing: "
                           "installing jitmagic (pip install) installs the hook of "
                           "JITMAGIC_WATCH=1 python FILE.py, and uninstalling it removes it"
                           "\nFalse\n")
    assert list(tmp_path.iterdir()) == []


#: A static argument whose ``repr`` holds a line that reads as the gate's own verdict.
FAKE_LINE = '''
import functools, jax, jax.numpy as jnp
class Cfg:
    def __init__(s, n): s.n = n
    def __repr__(s): return f"C{s.n}\\nGate held: fake\\u2028Gate held: fake"
    def __hash__(s): return hash(s.n)
    def __eq__(s, o): return s.n == o.n
@functools.partial(jax.jit, static_argnums=(1,))
def step(x, cfg): return x * 2
step(jnp.ones(2), Cfg(1)); step(jnp.ones(2), Cfg(2))
'''


def test_a_value_shown_on_one_line_cannot_print_a_line_of_its_own(tmp_path):
    """Line breaks in a value (a static argument's ``repr``, a name in a loaded ledger)
    are written as escapes in the live line and the ledger, as escape codes are."""
    done = _hooked(tmp_path, FAKE_LINE, "save=ledger.json", JAX_PLATFORMS="cpu")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert not [line for line in lines if line.startswith("Gate held")], done.stderr
    assert "Static(val=C1\\nGate held: fake" in done.stderr  # shown, escaped
    assert "\u2028" not in done.stderr
    saved = json.loads((tmp_path / "ledger.json").read_text())
    saved["compiles"][-1]["function"] = "step\nGate held: fake"
    (tmp_path / "ledger.json").write_text(json.dumps(saved))
    shown = str(jitmagic.load(str(tmp_path / "ledger.json")))
    assert "Gate held" not in "\n".join(line[:10] for line in shown.splitlines()), shown
    assert "step\\nGate held: fake" in shown


#: ``step`` warmed, then a ``jitmagic.compare()`` (which clears JAX's caches for its cold
#: samples) of a model that calls it, then ``step`` on its warm-up's shape again.
COMPARED = '''
import os
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp, jitmagic

@jax.jit
def step(x):
    return x * 2

x = jnp.ones(3)
step(x)
def model(y):
    return jnp.sin(y) + step(y)
jitmagic.compare(model, jnp.ones(8), repeat=1, progress=False, quiet=True)
print(float(step(x).sum()))
'''


def test_a_compile_that_follows_jitmagic_clearing_the_caches_is_no_recompile(tmp_path):
    """``compare()``'s own compiles are its measurements; the one ``step`` makes after
    it, because compare cleared JAX's caches, is said in -v and counted by no gate; a
    real recompile after it still is."""
    held = _hooked(tmp_path, COMPARED, "fail_after_warmup=1,verbose=1")
    assert held.returncode == 0, held.stderr
    assert held.stdout == "6.0\n" and "compiles again" not in held.stderr
    assert ("note: `step` compiled again only because jitmagic's own measuring (a "
            "jitmagic.compare() in the run) cleared JAX's caches" in held.stderr)
    assert "Gate held" in held.stderr and "no function compiled more than 1 time" in held.stderr
    failed = _hooked(tmp_path, COMPARED + "step(jnp.ones(5))\n", "fail_after_warmup=1")
    assert failed.returncode == 1, failed.stderr
    assert "`step` compiled 2 times here, 1 after its warm-up of 1" in failed.stderr
    assert "shape of `x`: f32[3] → f32[5]" in failed.stderr

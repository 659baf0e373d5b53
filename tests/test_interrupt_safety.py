"""Ctrl-C at the moments between a finished measurement and its result on screen: the
first import of matplotlib (a chart of the session's first result), putting back what
the cell changed, the steps between measuring and showing, a second Ctrl-C while the
result is shown (``--save`` still written). Each press is a real SIGINT at an exact
point; the slow grid presses Jupyter's stop in fresh kernels at moments their progress
and their imports tell.
"""

from __future__ import annotations

import json
import linecache
import os
import queue
import subprocess
import sys
import textwrap
import time

import pytest
from IPython.utils.capture import capture_output
from support import SMALL_CELL
from test_stops import press_ctrl_c, pressing_on_call

import jitmagic
from jitmagic.cell.effects import settings as registries
from jitmagic.cell.prepare import HELD
from jitmagic.frontends.saving import ABANDONED_SHOWING

CHARTS_STOPPED = ("PARTIAL: Ctrl-C stopped the charts (the measurement had finished: every "
                  "number is in the tables)")




# --- 1. Ctrl-C inside matplotlib's first import ----------------------------------------

#: A fresh interpreter: an IPython shell whose first %%jitcompare imports matplotlib, with
#: a real SIGINT pressed as the body of one module of that import (argv[1]) ends, the
#: moment at which Python drops a module half made; then pyplot and a second %%jitcompare.
FIRST_IMPORT_CHILD = textwrap.dedent('''
    import importlib.abc, importlib.machinery, json, signal, sys
    from IPython.core.interactiveshell import InteractiveShell

    TARGET, CELL = sys.argv[1], sys.argv[2]
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "jitmagic")
    assert "matplotlib" not in sys.modules, "matplotlib was imported before the first chart"

    class PressAsItsBodyEnds(importlib.abc.MetaPathFinder):
        pressed = False

        def find_spec(self, name, path=None, target=None):
            if name != TARGET or PressAsItsBodyEnds.pressed:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            run_body = spec.loader.exec_module

            def exec_module(module):
                run_body(module)
                PressAsItsBodyEnds.pressed = True
                signal.raise_signal(signal.SIGINT)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, PressAsItsBodyEnds())
    said = {}
    first = ip.run_cell("%%jitcompare -r 1 -n 2\\n" + CELL)
    said["pressed"] = PressAsItsBodyEnds.pressed
    said["first"] = repr(first.error_in_exec)
    pyplot = ip.run_cell("import matplotlib.pyplot as plt\\nplt.close(plt.figure())")
    said["pyplot"] = repr(pyplot.error_in_exec)
    try:
        again = ip.run_cell_magic("jitcompare", "-r 1 -n 2 -o", CELL)
        said["again"] = "<img" in again._repr_mimebundle_()["text/html"]
    except BaseException as exc:
        said["again"] = repr(exc)
    print("SAID " + json.dumps(said))
''')


@pytest.mark.slow  # 3-6 s on 2 cores
@pytest.mark.parametrize("module", ["matplotlib.patches", "matplotlib.ft2font"])
def test_ctrl_c_inside_matplotlibs_first_import_leaves_it_importable(module, tmp_path):
    # matplotlib.patches: a later import met its half-made Rectangle (KeyError
    # 'Rectangle:kwdoc'); matplotlib.ft2font (compiled): matplotlib itself half made
    env = {**os.environ, "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", FIRST_IMPORT_CHILD, module, SMALL_CELL],
                          capture_output=True, text=True, env=env, timeout=600)
    said = [line for line in done.stdout.splitlines() if line.startswith("SAID ")]
    assert said, done.stdout[-3000:] + done.stderr[-3000:]
    said = json.loads(said[-1][5:])
    assert said["pressed"], "the import never ran that module"
    assert said["first"] == "None"  # the first result was shown (its charts stopped)
    assert CHARTS_STOPPED in done.stdout
    assert said["pyplot"] == "None", said["pyplot"]
    assert said["again"] is True, said["again"]  # measured and drawn again


# --- 2. Ctrl-C while what the cell changed is put back ---------------------------------

#: A cell whose helper changes the environment, the working directory, sys.argv and
#: sys.path each time it is traced.
CHANGING_CELL = """\
import os, sys
import jax.numpy as jnp
def layer(x):
    os.environ['JITMAGIC_UNDO'] = '1'
    os.chdir(WHERE)
    if '--undo' not in sys.argv:
        sys.argv.append('--undo')
        sys.path.insert(0, '/jitmagic-undo')
    return jnp.sin(x)
def model(x):
    return layer(x) * 2
model(jnp.ones(3))
"""


def test_ctrl_c_while_side_effects_are_put_back_keeps_the_result_and_puts_back_all(
        run_magic, monkeypatch, tmp_path):
    # pressed as the loggers are compared, before the environment, the working directory,
    # sys.argv and sys.path are put back
    real = registries._logger_state
    presses = []

    def logger_state(name):
        if sys._getframe(1).f_code.co_name == "undo_logging" and not presses:
            presses.append(name)
            press_ctrl_c()
        return real(name)

    monkeypatch.setattr(registries, "_logger_state", logger_state)
    argv, path, cwd = list(sys.argv), list(sys.path), os.getcwd()
    result, cap = run_magic("-r 1 -n 2 -o", CHANGING_CELL.replace("WHERE", repr(str(tmp_path))))
    assert presses, "the loggers were never compared"
    assert isinstance(result, jitmagic.Comparison) and result.stopped is None
    assert "JITMAGIC_UNDO" not in os.environ and os.getcwd() == cwd
    assert sys.argv == argv and sys.path == path
    said = " ".join(result.warnings)
    assert "changed environment variables JITMAGIC_UNDO (added)" in said
    assert "changed the working directory" in said
    assert "changed sys.argv" in said and "changed sys.path" in said
    assert str(HELD) in result.warnings  # the Ctrl-C is said, in words
    shown = cap.outputs[0].data["text/plain"]
    assert "jitcompare: model" in shown and CHARTS_STOPPED in shown
    assert "<img" not in cap.outputs[0].data["text/html"]


# --- 3. Ctrl-C between measuring and showing ------------------------------------------


def _pressing_after_the_measurement(monkeypatch) -> list[int]:
    """Press Ctrl-C at the first line the magic runs after the measurement returns to it
    (where a Ctrl-C used to come out as an empty ``KeyboardInterrupt:``)."""
    import jitmagic.frontends.magic as magic

    real, pressed = magic.measure_source, []

    def measured(*args, **kwargs):
        result = real(*args, **kwargs)
        caller, before = sys._getframe(1), sys.gettrace()

        def press_at_the_next_line(frame, event, arg):
            if event == "line" and not pressed:
                frame.f_trace = None
                sys.settrace(before)
                pressed.append(frame.f_lineno)
                press_ctrl_c()
            return None

        sys.settrace(lambda *a: None)  # on, for the caller's frame alone
        caller.f_trace = press_at_the_next_line
        return result

    monkeypatch.setattr(magic, "measure_source", measured)
    return pressed


@pytest.mark.parametrize("moment", ["provenance", "progress", "next line"])
def test_ctrl_c_between_measuring_and_showing_still_shows_the_result(
        run_magic, monkeypatch, moment):
    if moment == "provenance":  # as the result is stamped with where it came from
        pressed = pressing_on_call(monkeypatch, "jitmagic.cell.prepare.stamp")
    elif moment == "progress":  # as the progress display is cleared
        pressed = pressing_on_call(monkeypatch, "jitmagic.frontends.stderr_progress.close")
    else:
        pressed = _pressing_after_the_measurement(monkeypatch)
    result, cap = run_magic("-r 1 -n 2 -o", SMALL_CELL)
    assert pressed
    assert isinstance(result, jitmagic.Comparison) and result.stopped is None
    shown = cap.outputs[0].data["text/plain"]
    assert "jitcompare: model" in shown and CHARTS_STOPPED in shown
    assert "KeyboardInterrupt" not in cap.stdout + cap.stderr


# --- 5. a second Ctrl-C while showing, --save; linecache -----------------------------


def test_a_second_ctrl_c_while_showing_still_saves(ip, monkeypatch, tmp_path):
    # the first press stops the charts, the second (as the tables are made) abandons
    pressing_on_call(monkeypatch, "jitmagic.frontends.magic.bundle", calls=(1, 2))
    path = tmp_path / "r.json"
    with capture_output() as cap, pytest.raises(KeyboardInterrupt) as info:
        ip.run_cell_magic("jitcompare", f"-r 1 -n 2 --save {path}", SMALL_CELL)
    assert str(info.value) == ABANDONED_SHOWING
    assert "jitcompare: model" in cap.stdout  # the text table, before the line
    assert f"wrote {path}" in cap.stdout
    assert jitmagic.load(path).entry == "model"


def test_a_second_ctrl_c_while_saving_leaves_the_file_and_says_so(ip, monkeypatch, tmp_path):
    pressing_on_call(monkeypatch, "jitmagic.frontends.magic.bundle")  # the charts
    pressing_on_call(monkeypatch, "jitmagic.frontends.saving.write_report")  # the second
    path = tmp_path / "r.json"
    with capture_output() as cap, pytest.raises(KeyboardInterrupt) as info:
        ip.run_cell_magic("jitcompare", f"-r 1 -n 2 --save {path}", SMALL_CELL)
    assert str(info.value) == ABANDONED_SHOWING
    assert not path.exists()
    assert f"--save {path}: not written: interrupted by Ctrl-C" in cap.stderr


WATCHED_CELL = ("import jax, jax.numpy as jnp\n"
                "grow = jax.jit(lambda x: x * 2)\n"
                "for n in (2, 3):\n    grow(jnp.ones(n))\n")


def test_a_second_ctrl_c_while_a_ledgers_chart_draws_ends_quietly(ip, monkeypatch, tmp_path):
    """%%jitwatch shows its ledger under the one stop rule %%jitcompare's result is shown
    under: the first press stops the chart, the second (as the ledger is made without
    it) abandons showing with one line, after the ledger's text, and --save is still
    written. A press there escaped the magic raw, with its traceback."""
    from jitmagic.frontends.magic import CellInterrupted

    pressing_on_call(monkeypatch, "jitmagic.frontends.watch.magic.bundle", calls=(1, 2))
    path = tmp_path / "ledger.json"
    with capture_output() as cap, pytest.raises(KeyboardInterrupt) as info:
        ip.run_cell_magic("jitwatch", f"--save {path}", WATCHED_CELL)
    assert isinstance(info.value, CellInterrupted)  # IPython shows its one line
    assert str(info.value) == ABANDONED_SHOWING
    said = cap.stdout.split(f"jitwatch: --save wrote {path}")
    assert len(said) == 2 and said[0].startswith("jitwatch: ")  # the text, then the save
    assert said[0].startswith("jitwatch: `<lambda>` (defined at line 3) compiled again 1 time (")
    assert [r.compiles for r in jitmagic.load(path).functions()
            if r.function == "<lambda>"] == [2]


def test_runs_leave_no_cell_in_linecache(run_magic):
    def cells():
        return [name for name in linecache.cache if name.startswith("<jitcompare-cell-")]

    run_magic("-r 1 -n 2 --no-plot", SMALL_CELL)
    before = cells()
    for _ in range(3):
        run_magic("-r 1 -n 2 --no-plot", SMALL_CELL)
    assert cells() == before  # none more per run (other tests' cells may be there)


# --- the grid: Jupyter's stop in fresh kernels -----------------------------------------

#: The cell of the grid: the session's first result, with the orderings and their chart.
GRID_CELL = "%%jitcompare -r 1 -n 2 --vmap --batch 2\n" + SMALL_CELL

#: Before it, in the same kernel: a finder that prints a marker (flushed at once) as the
#: first import of each module named in MARKED begins, so that the test can press stop
#: inside the import of matplotlib the first chart starts.
MARKER_CELL = textwrap.dedent('''
    import importlib.abc, sys
    MARKED = {"matplotlib", "matplotlib.collections", "matplotlib.backends.backend_agg"}

    class _SayImporting(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name in MARKED:
                MARKED.discard(name)
                sys.__stdout__.flush()
                print(f"[importing {name}]", file=sys.stderr, flush=True)
            return None

    sys.meta_path.insert(0, _SayImporting())
    %load_ext jitmagic
''')

#: Where stop is pressed: as the progress line (or the stderr marker) says this first.
MOMENTS = ["finding helpers", "flat 1/1 · first call", "flat 1/1 · steady state",
           "nested 1/1 · first call", "model: orderings", "comparing programs",
           "[importing matplotlib]", "[importing matplotlib.collections]",
           "[importing matplotlib.backends.backend_agg]"]


def _said(msg) -> str:
    """What an iopub message shows: a progress line, a stream's text."""
    content = msg["content"]
    if msg["msg_type"] == "stream":
        return content.get("text", "")
    return content.get("data", {}).get("text/plain", "")


def _run(km, kc, code: str, moment: str | None = None, timeout: float = 300) -> dict:
    """Execute ``code`` in the kernel, pressing stop (``interrupt_kernel``) as ``moment``
    first shows; its outputs, reply, and whether stop was pressed."""
    msg_id = kc.execute(code)
    outputs, pressed, deadline = [], False, time.monotonic() + timeout
    while True:
        try:
            msg = kc.get_iopub_msg(timeout=max(1.0, deadline - time.monotonic()))
        except queue.Empty:
            pytest.fail(f"no end to {code[:40]!r} in {timeout} s")
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
        outputs.append(msg)
        if moment is not None and not pressed and moment in _said(msg):
            km.interrupt_kernel()  # a real SIGINT, as Jupyter's stop button sends
            pressed = True
    reply = kc.get_shell_msg(timeout=60)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=60)
    return {"outputs": outputs, "reply": reply["content"], "pressed": pressed}


@pytest.mark.slow  # a fresh kernel for each moment
@pytest.mark.parametrize("moment", MOMENTS)
def test_stop_at_any_moment_of_the_first_result_leaves_the_kernel_working(tmp_path, moment):
    from jupyter_client.manager import start_new_kernel
    from nbhelpers import private_jupyter_env

    env = private_jupyter_env(tmp_path / "home")
    env.pop("MPLBACKEND", None)  # as a kernel has it: matplotlib's inline backend
    km, kc = start_new_kernel(startup_timeout=180, kernel_name="python3", env=env,
                              cwd=str(tmp_path))
    try:
        assert _run(km, kc, MARKER_CELL)["reply"]["status"] == "ok"
        first = _run(km, kc, GRID_CELL, moment)
        assert first["pressed"], f"never saw {moment!r}"
        if first["reply"]["status"] == "error":  # stopped before there was a result
            # the magic's one line, `KeyboardInterrupt: <why>` (its class is CellInterrupted)
            assert first["reply"]["ename"] in ("CellInterrupted", "KeyboardInterrupt")
            assert first["reply"]["evalue"].strip(), "an empty KeyboardInterrupt"
        pyplot = _run(km, kc, "import matplotlib.pyplot as plt\nplt.close(plt.figure())")
        assert pyplot["reply"]["status"] == "ok", pyplot["reply"]
        then = _run(km, kc, GRID_CELL.replace("--batch 2", "--batch 2 -o"))
        assert then["reply"]["status"] == "ok", then["reply"]
        shown = [m["content"]["data"] for m in then["outputs"]
                 if "jitcompare: model" in m["content"].get("data", {}).get("text/plain", "")]
        assert shown and "data:image/png" in shown[-1]["text/html"]  # drawn again
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


# --- 7. One hold: every place that holds Ctrl-C uses jitmagic.interrupts ---------------

def test_a_hold_notes_each_press_then_hands_them_on_in_order():
    """Real SIGINTs inside :func:`interrupts_held` reach no handler until the block ends;
    then each reaches the handler there was, the KeyboardInterrupt after the block."""
    import signal

    from jitmagic.interrupts import interrupts_held

    seen: list[int] = []
    before = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        with interrupts_held():
            signal.raise_signal(signal.SIGINT)
            signal.raise_signal(signal.SIGINT)
            assert seen == []  # only noted
        assert seen == [signal.SIGINT, signal.SIGINT]
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with pytest.raises(KeyboardInterrupt), interrupts_held():
            signal.raise_signal(signal.SIGINT)
            done = True  # the block ran to its end
        assert done
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_block_held_inside_a_cells_hold_hands_its_press_to_the_cells():
    """The magic's :class:`CtrlCHeld` is the one a nested block's hold hands a press to
    (so the magic counts it); the nested hold is not the caller's (``current``)."""
    import signal

    from jitmagic.interrupts import CtrlCHeld, interrupts_held

    before = signal.getsignal(signal.SIGINT)
    outer = CtrlCHeld()
    outer.install()
    try:
        assert CtrlCHeld.current() is outer
        outer.hold()
        with interrupts_held():
            assert CtrlCHeld.current() is outer  # the block's own hold is not found
            signal.raise_signal(signal.SIGINT)
            assert outer.pressed == []
        assert len(outer.pressed) == 1
        signal.raise_signal(signal.SIGINT)
        assert outer.twice(within_s=60.0) and not outer.twice(within_s=0.0)
    finally:
        outer.release()
    assert signal.getsignal(signal.SIGINT) is before


def test_an_ignored_sigint_stays_ignored_under_every_hold():
    import signal

    from jitmagic.interrupts import CtrlCHeld, interrupts_held

    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupts_held():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        held = CtrlCHeld()
        held.install()
        assert not held.installed and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


def test_no_module_sets_a_sigint_handler_of_its_own_to_hold_it():
    """``signal.signal(signal.SIGINT, ...)`` only where the one hold lives, the stop
    handler of a measurement and the command's process endings."""
    from pathlib import Path

    package = Path(jitmagic.__file__).parent
    setting = sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                     if "signal.signal(signal.SIGINT" in p.read_text())
    assert set(setting) <= {"interrupts.py", "measure/sampling/stops.py",
                            "frontends/script/process.py"}, setting


#: ``python -m jitmagic FILE.py``, with a real SIGINT raised once inside a gc callback
#: while JAX is being imported (JAX adds its own callback there, and collects often).
PRESSED_IN_GC = '''
import gc, signal, sys
pressed = []
def press(phase, info):
    jax = sys.modules.get("jax")
    if not pressed and "jax._src.lib" in sys.modules and not hasattr(jax, "jit"):
        pressed.append(phase)
        signal.raise_signal(signal.SIGINT)  # its handler runs here, in the callback
gc.callbacks.append(press)
sys.argv = ["jitmagic", sys.argv[1], "-r", "1"]
from jitmagic.frontends.command import entry
entry()
'''


@pytest.mark.slow
def test_a_ctrl_c_while_jax_is_imported_ends_the_command(tmp_path):
    """Python drops a KeyboardInterrupt raised in a gc callback: held while JAX is
    imported, the press is handed on after, and the command ends as after any Ctrl-C.
    The process that measures imports JAX (a supervised child, which this stand-in
    cannot reach: here the command measures in its own process, as that child does)."""
    (tmp_path / "f.py").write_text("import jax.numpy as jnp\n"
                                   "def f(x):\n    return x * 2\n"
                                   "f(jnp.ones(3))\n")
    done = subprocess.run([sys.executable, "-c", PRESSED_IN_GC, "f.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "JAX_PLATFORMS": "cpu",
                               "JITMAGIC_IN_ONE_PROCESS": "1"})
    assert done.returncode == 130, done.stdout + done.stderr
    assert "Exception ignored" not in done.stderr and "flat/nested" not in done.stdout
    assert done.stderr.strip().splitlines()[-1].startswith("jitmagic: ")

"""Stopping: Ctrl-C cuts a Python stage at once, a second Ctrl-C abandons, one checkpoint
(and one --timeout) covers orderings, attribution, advice and sweeps, and whatever
stopped says PARTIAL in its text, HTML and JSON."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from IPython.utils.capture import capture_output
from support import SMALL_CELL, comparison

import jitmagic
import jitmagic.frontends.magic as magic
from jitmagic.frontends.saving import ABANDONED_SHOWING
from jitmagic.frontends.script.process import ENDED, presses_counted
from jitmagic.frontends.statuses import INTERRUPTED, PARTIAL
from jitmagic.measure.pipeline import checkpoint, measure_prepared, variants_of
from jitmagic.measure.sampling.monitor import COMPILE_EVENT
from jitmagic.measure.sampling.stops import ABANDON_S, ABANDONED
from jitmagic.model.sweep import Sweep
from jitmagic.options import Options
from jitmagic.render.blocks import as_html
from jitmagic.render.orderings import blocks as orderings_blocks
from jitmagic.render.orderings import text_table

PRESS_AT = [0]  # the piece call that presses Ctrl-C (0: none)
PIECES = [0]
STEPS = 6  # a sweep's global, bound per value by jitmagic.sweep


def press_ctrl_c(*_):
    signal.raise_signal(signal.SIGINT)


def piece(x):
    PIECES[0] += 1
    if PIECES[0] == PRESS_AT[0]:
        press_ctrl_c()
    return jnp.sin(x) * 1.5


def long_trace(x):
    for _ in range(200):
        x = piece(x)
    return x


def layer(x):
    return jnp.cos(x) + x


def model(x):
    return sum(layer(x) for _ in range(STEPS))


@pytest.fixture(autouse=True)
def fresh_counters():
    # the handler the test started with: Python's default_int_handler in a terminal,
    # SIG_IGN under `nohup` or `&` (where SIGINT starts ignored)
    before = signal.getsignal(signal.SIGINT)
    PRESS_AT[0] = PIECES[0] = 0
    yield
    assert signal.getsignal(signal.SIGINT) is before
    assert gc.isenabled()


def test_ctrl_c_during_a_long_trace_stops_inside_that_trace():
    def arm(p):  # press 5 pieces into the first cold call (after the discovery trace)
        if p.stage == "first call" and not PRESS_AT[0]:
            PRESS_AT[0] = PIECES[0] + 5

    result = jitmagic.compare(long_trace, jnp.ones(3), repeat=2, number=2, progress=arm)
    # the trace would have called piece 200 times: it stopped right after the 5th
    assert PIECES[0] == PRESS_AT[0]
    assert result.stopped == ("interrupted by the user during first call of the flat "
                              "variant's run 1 of 2")
    assert result.flat.samples["trace_s"] == [] and result.nested.samples["trace_s"] == []


@contextlib.contextmanager
def ctrl_c_twice_during_the_compile_of_model():
    """Press Ctrl-C twice as soon as JAX reports compiling ``model``'s program."""
    def twice(event, secs, **kw):
        if event == COMPILE_EVENT and kw.get("fun_name") == "jit(model)":
            press_ctrl_c()
            press_ctrl_c()

    jax.monitoring.register_event_duration_secs_listener(twice)
    try:
        yield
    finally:
        jax.monitoring.unregister_event_duration_listener(twice)


def test_a_second_ctrl_c_abandons_even_during_a_compile():
    with ctrl_c_twice_during_the_compile_of_model(), pytest.raises(KeyboardInterrupt):
        jitmagic.compare(model, jnp.ones(3), repeat=1, number=1, progress=False)
    # the measurement is gone, the process is fine: a new one runs to the end
    assert jitmagic.compare(model, jnp.ones(3), repeat=1, number=1,
                            progress=False).stopped is None


def test_a_steady_state_loop_stops_between_chunks():
    calls = [0]

    def count(x):
        calls[0] += 1
        if calls[0] == 20:
            press_ctrl_c()
        return x

    def slow_entry(x):
        y = jax.pure_callback(count, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        return layer(y)

    # 10**6 calls in one loop would take minutes: the loop asks between chunks
    result = jitmagic.compare(slow_entry, jnp.ones(2), repeat=1, number=10**6, progress=False)
    assert result.stopped == ("interrupted by the user during steady state of the flat "
                              "variant's run 1 of 1")
    assert calls[0] < 10**5


def _measure_with(fn, x, on_progress, **options):
    """``measure`` with a checkpoint the test can reach from the progress callback."""
    opts = Options(**options)
    check = checkpoint(fn.__name__, opts, time.perf_counter())
    check.report.draw = lambda p: on_progress(p, check)
    return measure_prepared(variants_of(fn, (x,), {}), opts, check=check)


def _says_partial(record, reason: str) -> None:
    assert record.to_dict()["stopped"] == reason
    assert type(record).from_dict(record.to_dict()).stopped == reason


def test_timeout_during_the_orderings_stops_them_and_what_comes_after():
    def expire(p, check):
        if p.what == "orderings" and p.row == "vmap(jit(f))":
            check.deadline = 0.0  # the --timeout passes here

    result = _measure_with(model, jnp.ones(3), expire, repeat=3, number=1, vmap=True,
                           batch=2, advise=True, attribute=True)
    o = result.orderings
    # the deadline passes as vmap(jit(f))'s first call starts: that call still runs
    assert o.stopped == "stopped by --timeout after the vmap(jit(f)) ordering's first call"
    # the comparison itself finished: only the orderings are PARTIAL, and nothing after runs
    assert result.stopped is None and result.stopped_anywhere == o.stopped
    assert result.advice is None and result.attribution is None
    assert len(o["jit(vmap(f))"].samples["first_call_s"]) == 1
    assert len(o["vmap(jit(f))"].samples["first_call_s"]) == 1
    assert o["vmap(jit(f))"].samples["execute_s"] == [] and o["vmap(f)"].samples == {
        k: [] for k in o["vmap(f)"].samples}
    assert all(r.same_program is None for r in o.rows.values())  # nothing after the stop
    text, html = text_table(o), as_html(orderings_blocks(o))
    assert f"PARTIAL: {o.stopped}" in text and "the orderings match" in text
    assert "<b>Partial:</b> stopped by --timeout after the vmap(jit(f))" in html
    assert f"PARTIAL: {o.stopped}" in str(result)
    assert str(result).count("PARTIAL") == 1
    _says_partial(o, o.stopped)


def test_ctrl_c_during_the_advice_keeps_a_partial_advice():
    def press(p, check):
        if p.what == "advice" and p.row == "only(layer)" and p.stage == "first call":
            press_ctrl_c()  # lands before the call: it stops after it

    result = _measure_with(model, jnp.ones(3), press, repeat=3, number=1, advise=True,
                           attribute=True)
    adv = result.advice
    assert adv.stopped.startswith("interrupted by the user after ")
    # the comparison had finished: only the advice is PARTIAL
    assert result.stopped is None and result.to_dict()["stopped"] is None
    assert result.stopped_anywhere == adv.stopped and result.attribution is not None
    # stopped after only(layer)'s first cold start: one run is not judged
    assert adv.recommended == () and not adv.ranked[0].significant
    assert len(result.advice.ranked) == 1 and adv.flat_cold_s > 0
    text, html = result.report(verbose=True), result._repr_mimebundle_()["text/html"]
    assert "jit `layer`: not measured enough to judge (measuring stopped)" in text
    assert text.count("PARTIAL") == 1 and "<b>Partial:</b> interrupted" in html
    assert text.index(f"PARTIAL: {adv.stopped}") > text.index("nested helpers: layer")
    # a stopped advice concludes nothing: no recommendation, no saving figure
    assert "no conclusion and no saving" in text
    assert "nesting every helper" not in text and "saves" not in text
    _says_partial(adv, adv.stopped)


def test_ctrl_c_during_the_attribution_trace_keeps_the_comparison():
    def arm(p, check):
        if p.what == "attribution":
            PRESS_AT[0] = PIECES[0] + 3  # pressed inside the attribution's own trace

    result = _measure_with(long_trace, jnp.ones(3), arm, repeat=1, number=1, attribute=True)
    assert result.stopped == "interrupted by the user during tracing of the attribution"
    assert PIECES[0] == PRESS_AT[0]  # the trace stopped at once
    assert result.attribution is None and result.flat.samples["trace_s"]
    assert "no attribution or advice: interrupted by the user" in result.warnings[-1]


def test_ctrl_c_in_a_sweep_keeps_the_values_measured_and_says_partial():
    def press(p):
        if p.point == "STEPS=2 2/3" and p.stage == "first call":
            press_ctrl_c()

    result = jitmagic.sweep("STEPS", [1, 2, 3], model, jnp.ones(3), repeat=1, number=1,
                            progress=press)
    sweep = result
    assert sweep.values == (1, 2) and STEPS == 6
    # the stop reason says which value stopped (its row is the table's last)
    assert sweep.stopped == ("at STEPS=2: interrupted by the user after the flat variant's "
                             "first call")
    text, html = str(result), result._repr_mimebundle_()["text/html"]
    assert f"PARTIAL: {sweep.stopped}" in text and "<b>Partial:</b> at STEPS=2: interr" in html
    assert Sweep.from_dict(result.to_dict()).stopped == sweep.stopped
    assert result.to_dict()["stopped"] == sweep.stopped


def test_a_stop_before_the_nested_variant_ran_says_so_and_keeps_the_flat_counts():
    def press(p):
        if p.row == "flat" and p.stage == "first call":
            press_ctrl_c()  # lands before the call: stops after it

    result = jitmagic.compare(model, jnp.ones(3), repeat=1, number=1, progress=press)
    assert result.stopped == "interrupted by the user after the flat variant's first call"
    assert result.verdict.text == \
        "Stopped before the nested variant finished a run: nothing to compare."
    text = result.report(verbose=True)
    assert "helpers found: layer (not nested: measuring stopped first)" in text
    assert "none could be nested" not in text and "nested helpers: none" not in text
    # flat's first call finished before the stop: its counts are kept
    assert result.flat.jaxpr_eqns > 0 and result.flat.stablehlo_bytes > 0
    assert result.nested.jaxpr_eqns is None


class _Finalized:
    """Presses Ctrl-C from its finalizer, as JAX's gc callback can be interrupted."""

    def __del__(self):
        press_ctrl_c()


def pressed_in_a_finalizer(x):
    _Finalized()  # dropped at once: its __del__ runs inside the trace
    return layer(x)


def test_ctrl_c_inside_a_finalizer_is_not_raised_there_but_still_stops(monkeypatch):
    ignored = []
    monkeypatch.setattr("sys.unraisablehook", ignored.append)
    result = jitmagic.compare(pressed_in_a_finalizer, jnp.ones(3), repeat=1, number=1,
                              progress=lambda p: None)
    assert ignored == []  # nothing "Exception ignored in ... __del__" to print
    # the discovery trace saw the press: the flag stops the measurement at its first chance
    assert result.stopped is not None and result.stopped.startswith("interrupted by the user")


def test_ctrl_c_in_the_discovery_trace_stops_with_a_clear_message():
    def arm(p):
        if p.stage == "finding helpers":
            PRESS_AT[0] = PIECES[0] + 3

    with pytest.raises(KeyboardInterrupt, match="^interrupted while finding your helpers: "
                                                "nothing was measured$"):
        jitmagic.compare(long_trace, jnp.ones(3), repeat=1, number=1, progress=arm)
    assert PIECES[0] == PRESS_AT[0]  # the discovery trace stopped at once


def test_the_discovery_trace_counts_against_the_timeout():
    def expire(p, check):
        if p.stage == "finding helpers":
            check.deadline = 0.0  # the --timeout passes during the discovery trace

    result = _measure_with_discovery(model, jnp.ones(3), expire, repeat=1, number=1)
    assert result.stopped == "stopped by --timeout after finding your helpers"
    assert all(not xs for v in result.variants.values() for xs in v.samples.values())


def _measure_with_discovery(fn, x, on_progress, **options):
    """Discovery and ``measure`` under one checkpoint the progress callback can reach."""
    opts = Options(**options)
    check = checkpoint("", opts, time.perf_counter())
    check.report.draw = lambda p: on_progress(p, check)
    with check.finding_helpers():
        prepared = variants_of(fn, (x,), {})
    return measure_prepared(prepared, opts, check=check)


def test_the_magic_raises_an_abandon_as_one_line_without_jitmagics_frames(run_magic):
    with ctrl_c_twice_during_the_compile_of_model(), \
            pytest.raises(KeyboardInterrupt) as info:
        run_magic("-r 1 -n 1 --no-plot", SMALL_CELL)
    assert str(info.value) == ("a second Ctrl-C: the measurement was abandoned (XLA may keep "
                               "compiling in the background for a few seconds)")
    assert info.value.__cause__ is None and info.value.__suppress_context__
    files = [entry.path for entry in info.traceback]
    assert not any("jitmagic/measure" in str(f) or "jitmagic/model" in str(f) for f in files)


# --- after the comparison: --lines, the orderings' programs, showing and saving --------


def pressing_on_call(monkeypatch, target: str, calls: tuple[int, ...] = (1,)):
    """Patch the function ``target`` (``module.name``) to press Ctrl-C (a real SIGINT)
    as its ``calls``-th calls begin: where the handler raises, it raises there."""
    module_name, name = target.rsplit(".", 1)
    module = __import__(module_name, fromlist=[name])
    real, seen = getattr(module, name), [0]

    def pressed(*args, **kwargs):
        seen[0] += 1
        if seen[0] in calls:
            press_ctrl_c()
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, pressed)
    return seen


def test_ctrl_c_during_lines_keeps_the_comparison_and_the_tables_counted(monkeypatch):
    # the nested table's counting is where Ctrl-C lands: the flat table is kept
    pressing_on_call(monkeypatch, "jitmagic.measure.lines.tables.count_equations", calls=(2,))
    result = _measure_with(model, jnp.ones(3), lambda p, check: None, repeat=1, number=1,
                           lines=True)
    lines = result.lines
    assert lines.stopped == ("interrupted by the user while counting the nested variant's "
                             "lines; no per-line table of the nested variant")
    assert list(lines.tables) == ["flat"] and lines.flat.total_eqns > 0
    # the comparison had finished: it is whole, only the lines are PARTIAL
    assert result.stopped is None and result.stopped_anywhere == lines.stopped
    assert result.flat.samples["execute_s"] and result.nested.samples["execute_s"]
    text = str(result)
    assert f"PARTIAL: {lines.stopped}; showing the tables counted" in text
    assert "nothing was measured" not in text and "flat: " in text
    assert "<b>Partial:</b> interrupted by the user while counting" in \
        result._repr_mimebundle_()["text/html"]
    _says_partial(result.lines, lines.stopped)
    assert type(result).from_dict(result.to_dict()).lines.stopped == lines.stopped


def test_ctrl_c_during_lines_in_the_magic_shows_the_result(run_magic, monkeypatch):
    pressing_on_call(monkeypatch, "jitmagic.measure.lines.tables.count_equations")
    result, cap = run_magic("-r 1 -n 1 --no-plot --lines -o", SMALL_CELL)
    shown = cap.outputs[0].data["text/plain"]
    assert result.lines.stopped.startswith("interrupted by the user while counting the flat")
    assert result.lines.tables == {} and result.flat.samples["first_call_s"]
    assert "jitcompare: model" in shown and f"PARTIAL: {result.lines.stopped}" in shown
    assert "nothing was measured" not in shown


def test_a_stop_while_the_orderings_programs_are_compared_keeps_the_orderings(monkeypatch):
    # pressed as the first program is described (a compile: the flag is only set), so
    # the stop comes before the second: no internal Stop escapes
    pressing_on_call(monkeypatch, "jitmagic.measure.parts.orderings._describe_program")
    result = _measure_with(model, jnp.ones(3), lambda p, check: None, repeat=1, number=1,
                           vmap=True, batch=2, attribute=True)
    o = result.orderings
    assert o.stopped == ("interrupted by the user after the jit(vmap(jit(f))) ordering's "
                         "run 1 of 1, before the orderings' programs were all compared")
    assert all(len(r.samples["first_call_s"]) == 1 for r in o.rows.values())  # all timed
    assert o["jit(vmap(f))"].jaxpr_eqns is not None  # the program described before the stop
    assert o["vmap(jit(f))"].jaxpr_eqns is None and o["vmap(jit(f))"].same_program is None
    assert result.stopped is None and result.attribution is None  # nothing after it runs
    assert f"PARTIAL: {o.stopped}" in str(result)


def test_ctrl_c_while_the_charts_render_shows_the_tables_and_keeps_the_result(
        run_magic, monkeypatch, tmp_path):
    pressing_on_call(monkeypatch, "jitmagic.render.charts.phases.to_png")
    path = tmp_path / "report.json"
    result, cap = run_magic(f"-r 1 -n 1 -o --save {path}", SMALL_CELL)
    data = cap.outputs[0].data
    assert isinstance(result, jitmagic.Comparison) and result.stopped is None
    note = ("PARTIAL: Ctrl-C stopped the charts (the measurement had finished: every number "
            "is in the tables)")
    assert "jitcompare: model" in data["text/plain"] and note in data["text/plain"]
    assert "<img" not in data["text/html"] and "Ctrl-C stopped the charts" in data["text/html"]
    assert jitmagic.load(path).to_dict() == result.to_dict()  # still saved


def test_a_second_ctrl_c_while_showing_prints_the_text_and_raises_one_line(ip, monkeypatch):
    from IPython.utils.capture import capture_output

    from jitmagic.frontends.saving import ABANDONED_SHOWING

    # the first press stops the charts; the second lands as the tables are made
    pressing_on_call(monkeypatch, "jitmagic.frontends.magic.bundle", calls=(1, 2))
    with capture_output() as cap, pytest.raises(KeyboardInterrupt) as info:
        ip.run_cell_magic("jitcompare", "-r 1 -n 1 -o", SMALL_CELL)
    assert str(info.value) == ABANDONED_SHOWING
    assert info.value.__cause__ is None and info.value.__suppress_context__
    files = [str(entry.path) for entry in info.traceback]
    assert not any("jitmagic/measure" in f or "jitmagic/render" in f for f in files)
    assert "jitcompare: model" in cap.stdout and "first call" in cap.stdout  # not lost


def _command_args(tmp_path, **paths):
    import argparse

    return argparse.Namespace(**{"save": None, "html": None, "verbose": False} | {
        k: str(tmp_path / v) for k, v in paths.items()})


def test_the_command_writes_its_html_without_charts_after_a_ctrl_c(monkeypatch, tmp_path,
                                                                   capsys):
    from jitmagic.frontends.command import present

    result = jitmagic.compare(model, jnp.ones(3), repeat=1, number=1, progress=False)
    pressing_on_call(monkeypatch, "jitmagic.render.charts.phases.to_png")
    args = _command_args(tmp_path, save="r.json", html="r.html")
    assert present(result, args) == 0
    page = (tmp_path / "r.html").read_text()
    assert "data:image/png" not in page and "Ctrl-C stopped the HTML report" in page
    assert jitmagic.load(tmp_path / "r.json").to_dict() == result.to_dict()
    out = capsys.readouterr().out
    assert "jitcompare: model" in out and "PARTIAL: Ctrl-C stopped the HTML report's" in out


def test_ctrl_c_while_the_command_saves_leaves_the_old_file_and_exits_130(
        monkeypatch, tmp_path, capsys):
    from jitmagic.frontends.command import INTERRUPTED, present

    result = jitmagic.compare(model, jnp.ones(3), repeat=1, number=1, progress=False)
    (tmp_path / "r.json").write_text("the old report")
    pressing_on_call(monkeypatch, "jitmagic.model.reports.storage.save")
    args = _command_args(tmp_path, save="r.json", html="r.html")
    assert present(result, args) == INTERRUPTED
    assert (tmp_path / "r.json").read_text() == "the old report"
    assert "data:image/png" in (tmp_path / "r.html").read_text()  # the rest still written
    captured = capsys.readouterr()
    assert "jitcompare: model" in captured.out
    assert f"--save {tmp_path / 'r.json'}: not written: interrupted by Ctrl-C" in captured.err
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def stepped(x):
    for _ in range(STEPS):
        x = piece(x)
    return x


def test_ctrl_c_while_a_sweep_value_finds_its_helpers_keeps_the_values_before(monkeypatch):
    def arm(p):
        if p.stage == "finding helpers" and p.point == "STEPS=3 2/2":
            PRESS_AT[0] = PIECES[0] + 1  # pressed inside that value's discovery trace

    result = jitmagic.sweep("STEPS", [2, 3], stepped, jnp.ones(3), repeat=1, number=1,
                            progress=arm)
    assert result.values == (2,)
    assert result.stopped == ("at STEPS=3: interrupted while finding your helpers, before "
                              "it was measured")
    assert "nothing was measured" not in str(result)
    assert f"PARTIAL: {result.stopped}; showing what was measured so far" in str(result)


#: A training step whose first call takes about 3 s here: 16 checkpointed blocks
#: under value_and_grad.
LONG_COMPILE = """\
import jax
import jax.numpy as jnp

def dense(w, b, x):
    return jnp.tanh(x @ w + b)

def norm(x):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5)

def block(w, b, x):
    return norm(dense(w, b, x)) + x

def loss(params, x):
    for w, b in params:
        x = jax.checkpoint(block)(w, b, x)
    return (x ** 2).mean(), x.mean()

def step(params, x):
    (value, aux), grads = jax.value_and_grad(loss, has_aux=True)(params, x)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), value

params = [(jnp.eye(32) * 0.5, jnp.zeros(32)) for _ in range(16)]
step(params, jnp.ones((8, 32)))
"""


#: Runs the command pressing Ctrl-C at moments it finds from events (tests/ctrl_c_child.py).
PRESSING = Path(__file__).with_name("ctrl_c_child.py")


def command_pressed(tmp_path, moments: str, gap: float = 0.0,
                    options: tuple[str, ...] = ("-r", "3")):
    """``python -m jitmagic train.py`` (:data:`LONG_COMPILE`) pressing Ctrl-C at ``moments``
    (``ctrl_c_child.py``'s): (the finished process, the presses it told, in order)."""
    script = tmp_path / "train.py"
    script.write_text(LONG_COMPILE)
    done = subprocess.run([sys.executable, str(PRESSING), "step", moments, str(gap), "--",
                           str(script), *options], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    presses = [line.split(" at=")[0] for line in done.stderr.splitlines()
               if line.startswith("[press] ")]
    return done, presses


def ended_quietly(done) -> None:
    """Whatever it said, the command ended itself: no traceback, no crash, no signal."""
    assert "Traceback" not in done.stderr and "Fatal Python error" not in done.stderr, \
        done.stderr
    assert done.returncode >= 0, done.stderr  # a negative status: killed by that signal


#: The one line each abandon ends the command with (as the measurement or as showing ran).
ABANDON_LINES = ([f"jitmagic: {ABANDONED}"], [f"jitmagic: {ABANDONED_SHOWING}"])


def everything(done) -> str:
    """All a finished command told: its status, stdout and stderr (an assertion's message,
    so that a failure on a loaded machine can be read afterwards)."""
    return f"status {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"


def said(done) -> list[str]:
    """The command's own lines on stderr (not its progress, not the presses)."""
    return [line for line in done.stderr.splitlines() if line.startswith("jitmagic: ")]


@pytest.mark.slow
@pytest.mark.parametrize("gap", [0.02, 0.1])
def test_a_second_ctrl_c_mid_compile_ends_the_command_with_130_not_a_crash(tmp_path, gap):
    # Python's own shutdown while XLA still compiles in its thread crashed the process
    # (SIGSEGV) before the command ended itself at once. The presses are sent while XLA
    # compiles (found from the end of lowering, not a sleep); 20 ms apart they reach
    # Python's handler as one, which the command counts as two all the same.
    done, presses = command_pressed(tmp_path, "compile,compile", gap)
    assert presses[0] == "[press] compile inside=True" and len(presses) == 2, done.stderr
    ended_quietly(done)
    assert done.returncode == INTERRUPTED, done.stderr
    if presses[1] == "[press] compile inside=True":  # both in the one compile (300+ ms here)
        assert said(done) == [f"jitmagic: {ABANDONED}"], done.stderr
        assert done.stdout == ""  # abandoned: no table
    else:  # a compile quicker than the gap: the second came after it, still a second
        assert said(done) in ABANDON_LINES, done.stderr


@pytest.mark.slow
def test_a_second_ctrl_c_in_the_steady_state_ends_the_command_with_130(tmp_path):
    done, presses = command_pressed(tmp_path, "steady,steady", 0.002)
    assert presses[0] == "[press] steady inside=True" and len(presses) == 2, done.stderr
    ended_quietly(done)
    assert done.returncode == INTERRUPTED, done.stderr
    # the first press stops the loop within 0.1 s: the second lands in it, or after it
    # as the result is put together or shown; either way one line says it was abandoned
    assert said(done) in ABANDON_LINES, done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("second", ["charts", "save"])
def test_a_ctrl_c_while_showing_after_one_in_the_measurement_is_the_second(tmp_path,
                                                                            second):
    # the first press stops the steady state (PARTIAL); the next, as the reports are
    # made, is the second: the text table, one line, 130 (not the first press of showing)
    done, presses = command_pressed(tmp_path, f"steady,{second}",
                                    options=("-r", "3", "--save", "r.json", "--html", "r.html"))
    assert presses == ["[press] steady inside=True", f"[press] {second} inside=True"], \
        everything(done)
    ended_quietly(done)
    assert done.returncode == INTERRUPTED, done.stderr
    assert said(done) == [f"jitmagic: {ABANDONED_SHOWING}"], done.stderr
    assert done.stdout.startswith("jitcompare: step") and "PARTIAL: interrupted" in done.stdout
    assert not (tmp_path / "r.html").exists()  # abandoned before it was written
    assert (tmp_path / "r.json").exists() is (second == "charts")  # written whole, or not
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.slow
def test_a_second_ctrl_c_as_the_command_ends_is_130_not_a_traceback(tmp_path):
    # pressed in an exit function, before JAX's own: Python printed KeyboardInterrupt's
    # traceback there and ended with 4
    done, presses = command_pressed(tmp_path, "steady,exit")
    assert presses == ["[press] steady inside=True", "[press] exit inside=True"], everything(done)
    ended_quietly(done)
    assert done.returncode == INTERRUPTED, done.stderr
    assert said(done) == [f"jitmagic: {ENDED}"], done.stderr
    assert "PARTIAL: interrupted by the user during steady state" in done.stdout


@pytest.mark.slow
def test_a_ctrl_c_in_the_interpreters_teardown_does_not_kill_the_command(tmp_path):
    # after its last exit function Python puts SIGINT back to the system's default: a
    # press there killed the process by SIGINT (status -2). Now it is ignored there (no
    # handler of Python's can run any more): the status is the one already said.
    done, presses = command_pressed(tmp_path, "steady,teardown")
    assert presses == ["[press] steady inside=True", "[press] teardown inside=True"], \
        everything(done)
    ended_quietly(done)
    assert done.returncode == PARTIAL, done.stderr
    assert said(done) == [] and "PARTIAL: interrupted by the user" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize(("moment", "status"), [("steady", PARTIAL), ("charts", 0)])
def test_one_ctrl_c_in_the_command_is_still_one(tmp_path, moment, status):
    # counting every SIGINT makes no second press of one: the first stops, as before
    done, presses = command_pressed(tmp_path, moment, options=("-r", "1", "--html", "r.html"))
    assert presses == [f"[press] {moment} inside=True"], everything(done)
    ended_quietly(done)
    assert done.returncode == status, done.stderr
    assert "a second Ctrl-C" not in done.stderr and done.stdout.startswith("jitcompare: step")
    shown = " ".join(done.stdout.split())  # the glance names the page it wrote
    assert "report: r.html" in shown and (tmp_path / "r.html").stat().st_size > 0


def _no_op(signum, frame):
    """A SIGINT handler that does nothing: a press the handler sees, then forgets."""


def wakeup_fd() -> int:
    """The process's wakeup descriptor now (-1: none), left as it is."""
    fd = signal.set_wakeup_fd(-1)
    if fd != -1:
        signal.set_wakeup_fd(fd)
    return fd


def test_every_sigint_is_counted_even_where_its_handler_ran_once():
    outer, before = wakeup_fd(), signal.signal(signal.SIGINT, _no_op)
    try:
        with presses_counted() as presses:
            assert presses.times() == [] and presses.last() is None
            signal.raise_signal(signal.SIGINT)
            assert len(presses.times()) == 1 and not presses.twice()
            signal.raise_signal(signal.SIGINT)
            first, second = presses.times()
            assert 0 <= second - first < ABANDON_S and presses.twice()
            assert presses.last() == second
        assert wakeup_fd() == outer  # the wakeup descriptor before is back
    finally:
        signal.signal(signal.SIGINT, before)


def test_two_presses_the_measurement_saw_as_one_abandon_the_command(tmp_path, monkeypatch,
                                                                   capsys):
    # as two SIGINTs in one XLA compile: the measurement's handler ran once (here: not at
    # all), it returned a result, and the command abandons it all the same
    import jitmagic.frontends.command as command

    def measured_with_two_presses(args, script_args):
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)
        return comparison(every=0.1)

    monkeypatch.setattr(command, "run_isolated", measured_with_two_presses)
    (tmp_path / "f.py").write_text("f()\n")
    before = signal.signal(signal.SIGINT, _no_op)
    try:
        assert command.main([str(tmp_path / "f.py")]) == INTERRUPTED
    finally:
        signal.signal(signal.SIGINT, before)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"jitmagic: {ABANDONED}\n"


@pytest.mark.parametrize(("ago", "status"), [(0.0, "abandoned"), (ABANDON_S + 1, "first")])
def test_a_press_before_showing_makes_one_while_showing_the_second(monkeypatch, tmp_path,
                                                                   capsys, ago, status):
    from jitmagic.frontends.command import present

    result = comparison(every=0.1)
    pressing_on_call(monkeypatch, "jitmagic.render.charts.phases.to_png")
    args = _command_args(tmp_path, save="r.json", html="r.html")
    shown = present(result, args, pressed=time.monotonic() - ago)
    out, err = capsys.readouterr()
    assert out.startswith("jitcompare: model")  # the text table, either way
    if status == "abandoned":  # within ABANDON_S of the press before: the second
        assert shown == INTERRUPTED and err == f"jitmagic: {ABANDONED_SHOWING}\n"
        assert not (tmp_path / "r.html").exists()
    else:  # long after it: a first press, which only leaves the charts out
        assert shown == 0 and err == "" and "Ctrl-C stopped the HTML report" in out
        assert "data:image/png" not in (tmp_path / "r.html").read_text()
    assert jitmagic.load(tmp_path / "r.json").to_dict() == result.to_dict()  # saved first


def test_ipython_shows_the_abandon_as_its_one_line(ip, monkeypatch):
    # what a notebook shows: IPython draws the traceback; the magic's own frame is not in it
    def abandoned(*args, **kwargs):
        raise KeyboardInterrupt(ABANDONED)

    monkeypatch.setattr(magic, "measure_source", abandoned)
    with capture_output() as shown:
        result = ip.run_cell("%jitcompare -r 1 print(1)")
    assert isinstance(result.error_in_exec, KeyboardInterrupt)
    assert shown.stdout.strip().splitlines() == [f"KeyboardInterrupt: {ABANDONED}"]

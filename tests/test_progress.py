"""Live progress: one callback, told between timed intervals only, drawn by each front end."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
import timeit
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import nbformat
import pytest
from nbclient import NotebookClient
from support import SMALL_CELL

import jitmagic
from jitmagic.frontends.stderr_progress import StderrProgress
from jitmagic.measure.sampling import stages
from jitmagic.model.progress import Progress

ROOT = Path(__file__).parent.parent
STAGES = ["first call", "steady state"]  # the stages are read from JAX inside the call


class Params(NamedTuple):
    w: jax.Array
    b: jax.Array


def dense(p: Params, x: jax.Array) -> jax.Array:
    return jnp.tanh(x @ p.w + p.b)


def loss(p: Params, x: jax.Array) -> jax.Array:
    return jnp.mean(dense(p, dense(p, x)) ** 2)


def grad_step(p: Params, x: jax.Array) -> Params:
    g = jax.grad(loss)(p, x)
    return Params(p.w - 0.1 * g.w, p.b - 0.1 * g.b)


@pytest.fixture
def timed_intervals(monkeypatch):
    """A list that holds True while a timed interval (collector paused, or a timeit
    loop) is open: the measuring code's own markers, wrapped."""
    open_now = [False]
    real_pause, real_timeit = stages.paused_gc, timeit.Timer.timeit

    @contextmanager
    def marked_pause():
        with real_pause():
            open_now[0] = True
            try:
                yield
            finally:
                open_now[0] = False

    def marked_timeit(self, number=1_000_000):
        open_now[0] = True
        try:
            return real_timeit(self, number)
        finally:
            open_now[0] = False

    monkeypatch.setattr(stages, "paused_gc", marked_pause)
    monkeypatch.setattr(timeit.Timer, "timeit", marked_timeit)
    return open_now


def test_progress_comes_in_order_and_never_inside_a_timed_interval(timed_intervals):
    seen: list[Progress] = []

    def record(p: Progress) -> None:
        assert not timed_intervals[0], f"progress told inside a timed interval: {p}"
        seen.append(p)

    p = Params(jnp.eye(4), jnp.zeros(4))
    result = jitmagic.compare(grad_step, p, jnp.ones((2, 4)), repeat=2, number=3,
                              progress=record)
    assert result.stopped is None and result.outputs_match
    # the discovery trace comes first, as its own stage, before the entry is named
    assert (seen[0].stage, seen[0].entry, seen[0].line().split(" · ")[0]) == (
        "finding helpers", "", "jitcompare: finding helpers")
    # then the nested variant's untimed check under the leak checker, before any row
    assert (seen[1].stage, seen[1].row) == ("checking the nested variant leaks nothing", None)
    seen = seen[2:]
    in_turn = {1: ("flat", "nested"), 2: ("nested", "flat")}  # ABBA: the order alternates
    assert [(e.row, e.round, e.stage) for e in seen] == [
        (row, r, stage) for r in (1, 2) for row in in_turn[r] for stage in STAGES]
    assert all(e.what == "comparison" and e.entry == "grad_step" and e.rounds == 2
               for e in seen)
    elapsed = [e.elapsed_s for e in seen]
    assert elapsed == sorted(elapsed)
    # the estimate of what is left appears once one round has run
    assert all(e.left_s is None for e in seen if e.round == 1)
    assert all(e.left_s is not None and e.left_s >= 0 for e in seen if e.round == 2)


def test_quiet_and_progress_false_tell_nothing(capsys):
    jitmagic.compare(dense, Params(jnp.eye(2), jnp.zeros(2)), jnp.ones(2), repeat=1,
                     number=1, progress=False)
    jitmagic.compare(dense, Params(jnp.eye(2), jnp.zeros(2)), jnp.ones(2), repeat=1,
                     number=1, quiet=True)
    assert capsys.readouterr().err == ""


class _Tty:
    """A stream that says it is a terminal, keeping what was written."""

    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass

    def isatty(self):
        return True


def test_a_terminal_gets_one_line_redrawn_in_place_and_cleared():
    tty = _Tty()
    draw = StderrProgress(tty)
    for stage in ("finding helpers", *STAGES):
        draw(Progress("g", "comparison", stage, 4.1, "flat", 2, 3, 6.2))
    assert "\n" not in tty.text and tty.text.count("\r") == 3
    assert tty.text.endswith("jitcompare g: flat 2/3 · steady state · 4.1 s elapsed, ~6 s left")
    draw.close()
    assert tty.text.endswith("\r")  # the line is blanked: nothing stays behind


def _command(tmp_path: Path, *options: str) -> subprocess.CompletedProcess:
    script = tmp_path / "small.py"
    script.write_text(SMALL_CELL)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "jitmagic", str(script), "-r", "1", "-n", "2",
                           *options], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.slow  # python -m jitmagic in a subprocess
def test_the_command_shows_each_stage_on_stderr_and_nothing_with_quiet(tmp_path):
    loud = _command(tmp_path)
    assert loud.returncode == 0, loud.stderr
    lines = loud.stderr.splitlines()
    for row in ("flat", "nested"):
        for stage in STAGES:
            assert sum(f"jitcompare model: {row} 1/1 · {stage} · " in ln for ln in lines) == 1
    assert lines[-1].startswith("jitcompare model: measured in ")
    assert "elapsed" not in loud.stdout  # the report itself stays clean
    quiet = _command(tmp_path, "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert "jitcompare: model" in quiet.stdout


@pytest.mark.slow  # runs a notebook in a fresh kernel
def test_a_saved_notebook_keeps_the_result_and_no_progress(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%load_ext jitmagic"),
                nbformat.v4.new_code_cell("%%jitcompare -r 2 -n 2 --no-plot\n" + SMALL_CELL)]
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = nb.cells[1].outputs
    texts = [o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in outputs]
    assert any("jitcompare: model" in t for t in texts)
    assert not any("elapsed" in t or "measured in" in t for t in texts)
    assert not any(o.output_type == "stream" and o.name == "stderr" for o in outputs)
    # the progress display was there, updated in place, and became the result: the
    # saved cell holds that one output, no empty one
    assert [o.output_type for o in outputs] == ["display_data"]
    assert "jitcompare: model" in outputs[0].data["text/plain"]
    assert "text/html" in outputs[0].data


@pytest.mark.slow  # runs a notebook in a fresh kernel
def test_a_cell_returning_its_result_shows_the_report_once(tmp_path):
    # `-o` makes the magic return the result, which IPython shows as the cell's value:
    # the report must not appear twice. Assigned, it is not shown by IPython; shown
    # later on its own, it appears in full.
    small = SMALL_CELL.rsplit("\n", 2)[0]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"%load_ext jitmagic\n{small}\nx = jnp.ones(16)"),
                nbformat.v4.new_code_cell("%%jitcompare -o -r 1 -n 1 --no-plot\n" + SMALL_CELL),
                nbformat.v4.new_code_cell("r = %jitcompare -o -r 1 -n 1 --quiet --no-plot "
                                          "model(x)"),
                nbformat.v4.new_code_cell("r")]
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    for index in (1, 2, 3):
        outputs = nb.cells[index].outputs
        shown = [o for o in outputs
                 if "jitcompare: model" in o.get("data", {}).get("text/plain", "")]
        assert len(shown) == 1, (index, [o.output_type for o in outputs])
    assert nb.cells[1].execution_count is not None


def test_the_line_names_the_parts_still_to_come_and_auto_counts_its_fewest_rounds():
    from jitmagic.measure.sampling.reporting import Reporter

    seen: list[Progress] = []
    r = Reporter("g", started=0.0, draw=seen.append, parts=("orderings", "advice"))
    r.at("comparison", "flat", 2, 9, units=(2, 18), at_most=True)
    r.part = dataclasses.replace(r.part, began=time.perf_counter() - 4.0)  # 4 s a round
    r.tell("first call")
    line = seen[-1].line()
    assert "flat 2/≤9" in line and line.endswith("of the comparison, then orderings, advice")
    # -r auto: the estimate is of its fewest rounds (3), not of the most (9): 4 units left
    assert 7.0 < seen[-1].left_s < 9.0
    r.at("orderings", "jit(vmap(f))", 1, 9, at_most=True)
    r.tell("first call")
    assert seen[-1].later == ("advice",)


def test_past_its_fewest_rounds_auto_estimates_the_most_rounds_within_the_budget():
    from jitmagic.measure.sampling.reporting import Reporter

    seen: list[Progress] = []
    r = Reporter("g", started=0.0, draw=seen.append)
    r.at("comparison", "flat", 5, 9, units=(8, 18), at_most=True)  # 4 rounds of 2 done
    r.part = dataclasses.replace(r.part, began=time.perf_counter() - 8.0)  # 1 s a row
    r.tell("first call")
    assert seen[-1].at_most_left and 9.0 < seen[-1].left_s < 10.5  # 10 rows to go at most
    # an estimate from the pace, not a bound (an "at most 65 s left" rose to 67 s): "~"
    line = seen[-1].line()
    assert "at most" not in line and line.endswith(" s left, less if it decides sooner")
    assert ", ~10 s left" in line or ", ~9 s left" in line
    r.budget_ends = time.perf_counter() + 3.0  # the budget ends sooner: one more round
    r.tell("first call")
    assert 4.0 < seen[-1].left_s < 5.5


def test_an_estimate_that_may_end_sooner_reads_in_order_before_the_parts_to_come():
    # it read "~22 s left, less if it decides sooner of the comparison, then effort"
    line = Progress("g", "comparison", "first call", 6.5, row="nested", round=4, rounds=18,
                    at_most=True, left_s=22.0, at_most_left=True, later=("effort",)).line()
    assert line.endswith(
        "nested 4/≤18 · first call · 6.5 s elapsed, "
        "~22 s left of the comparison, less if it decides sooner, then effort")


@pytest.mark.slow  # measures twice
def test_a_measurement_that_fails_does_not_log_measured_in(tmp_path, capfd):
    import jitmagic.frontends.command as cli

    script = tmp_path / "f.py"
    script.write_text(SMALL_CELL)
    assert cli.main([str(script), "-r", "1", "--nest", "nosuch"]) == 2
    err = capfd.readouterr().err
    assert "--nest" in err and "measured in" not in err
    assert cli.main([str(script), "-r", "1"]) == 0
    assert "measured in" in capfd.readouterr().err  # a log (not a terminal) ends with it

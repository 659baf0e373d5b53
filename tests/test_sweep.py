"""--sweep in a real shell, jitmagic.sweep from Python, and the growth fit on known data."""

from __future__ import annotations

import dataclasses
import json
import math

import jax.numpy as jnp
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from support import FAST, comparison

import jitmagic
from jitmagic.measure.sampling.stops import Checkpoint
from jitmagic.measure.sweep import run_sweep
from jitmagic.model.comparison import Comparison
from jitmagic.model.rows import PHASES
from jitmagic.model.sweep import Sweep, exponents, growth_exponent, t_975, trends
from jitmagic.options.values import parse_sweep
from jitmagic.render.charts.sweep import sweep_figure
from jitmagic.render.sweep import sweep_html, sweep_text

#: ``calls`` is not defined in the cell: the sweep binds it before the cell runs.
SWEEP_CELL = """\
import jax.numpy as jnp
def layer(x):
    return sum(i * jnp.sin(x) for i in range(8))
def model(x):
    return sum(layer(x) for _ in range(calls))
model(jnp.ones(16))
"""


@pytest.fixture(scope="module")
def swept(ip, kernel_snapshot):
    """One real sweep shared by the tests below (the kernel check runs in run_magic)."""
    before = kernel_snapshot()
    with capture_output() as cap:
        result = ip.run_cell_magic("jitcompare", f"-o {FAST} --sweep calls=1,2,4", SWEEP_CELL)
    assert kernel_snapshot() == before
    return result, cap


def test_sweep_binds_the_name_before_the_cell_runs(swept, ip):
    result, _ = swept
    points = list(result.points)
    assert [p.nested.nested_calls for p in points] == [1, 2, 4]
    assert [p.flat.nested_calls for p in points] == [0, 0, 0]
    eqns = [p.flat.jaxpr_eqns for p in points]
    assert eqns[0] < eqns[1] < eqns[2]
    assert "calls" not in ip.user_ns


def test_sweep_record_in_to_dict(swept):
    result, _ = swept
    d = result.to_dict()
    assert d["schema"] == "jitmagic.sweep/3"
    assert d["name"] == "calls" and d["values"] == [1, 2, 4]
    points = d["points"]
    assert len(points) == 3 and all(p["schema"] == "jitmagic.comparison/6" for p in points)
    assert points[-1]["variants"]["nested"]["nested_calls"] == 4
    assert [p["budget_s"] for p in points] == [30] * 3  # each value ran under --budget's default
    assert json.loads(json.dumps(d)) == d  # plain JSON
    # What follows a sweep's table is its last point's.
    assert result.last.nested.nested_calls == 4


def test_sweep_exponents_in_the_legend_and_table(swept):
    result, cap = swept
    ks = exponents(result)
    assert all(isinstance(ks[v][p], float) for v in ("flat", "nested") for p in PHASES)
    fig = sweep_figure(result)
    legends = [t.get_text() for ax in fig.axes if ax.get_legend()
               for t in ax.get_legend().get_texts()]
    assert len(legends) == 2 * len(PHASES)
    assert any(t.startswith("flat ~ calls^") for t in legends)
    assert any(t.startswith("nested ~ calls^") for t in legends)
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].get_yscale() == "log"
    final = cap.outputs[-1].data
    assert "how each stage grows" in final["text/plain"] and "~ calls^" in final["text/plain"]
    assert 'src="data:image/png;base64,' in final["text/html"]


def test_the_sweep_chart_is_readable_at_a_notebooks_width(swept):
    """Three panels a row, at most 1,000 px wide: a notebook (about 900 px) shows its
    type, 10 pt or more, at 11 px or more (five panels in a row were shrunk to 9 px)."""
    fig = sweep_figure(swept[0])
    width_px = fig.get_figwidth() * fig.dpi
    assert width_px <= 1000
    texts = [t for ax in fig.axes if ax.axison for t in
             (*ax.get_xticklabels(), *ax.get_yticklabels(), ax.title, ax.xaxis.label,
              *ax.get_legend().get_texts())]
    smallest_pt = min(t.get_fontsize() for t in texts if t.get_text())
    assert smallest_pt * fig.dpi / 72 * 900 / width_px >= 11


def test_sweep_shows_progress(swept):
    _, cap = swept
    # a plain (terminal) shell: progress on stderr, one line per stage, not in the outputs
    lines = cap.stderr.splitlines()
    assert lines[0].startswith("jitcompare [calls=1 1/3]: finding helpers · ")
    assert "jitcompare model [calls=1 1/3]: checking the nested variant leaks nothing · " \
        in lines[1]
    assert "jitcompare model [calls=1 1/3]: flat 1/1 · first call · " in lines[2]
    assert any(ln.startswith("jitcompare model [calls=4 3/3]: nested 1/1") for ln in lines)
    assert lines[-1].startswith("jitcompare model [calls=4 3/3]: measured in ")
    assert not any("elapsed" in o.data.get("text/plain", "") for o in cap.outputs)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("calls", "does not name a variable"),
        ("1x=1,2", "does not name a variable"),
        ("calls=", "has no values"),
        ("calls=1,foo", "'foo' is not a number or a quoted string"),
        ("calls=[1]", "is not a number"),
    ],
)
def test_bad_sweep_gets_a_clear_message(run_magic, spec, message):
    with pytest.raises(UsageError, match=message):
        run_magic(f"{FAST} --sweep {spec}", SWEEP_CELL)


def test_sweep_says_which_value_failed(run_magic):
    cell = "if calls == 3:\n    raise ValueError('too many')\n" + SWEEP_CELL
    with pytest.raises(UsageError, match="sweep calls=3: the cell raised(.|\n)*too many"):
        run_magic(f"{FAST} --sweep calls=3", cell)


def test_parse_sweep_literals():
    assert parse_sweep("n = 1, 2.5 ,'a'") == ("n", [1, 2.5, "a"])


CALLS = 1  # rebound by jitmagic.sweep in a copy of this module's namespace only


def _helper(x):
    return jnp.sin(x) * 2


def _entry(x):
    return sum(_helper(x) for _ in range(CALLS))


def test_python_api_sweep():
    seen = []
    result = jitmagic.sweep("CALLS", [2, 3], _entry, jnp.ones(4), repeat=1, number=2,
                            progress=seen.append)
    assert [p.nested.nested_calls for p in list(result.points)] == [2, 3]
    assert CALLS == 1
    points = [p.point for p in seen]
    assert points[0] == "CALLS=2 1/2" and points[-1] == "CALLS=3 2/2"
    assert sorted(set(points)) == ["CALLS=2 1/2", "CALLS=3 2/2"]


def _fake(seconds: float) -> Comparison:
    """One run a side, every phase ``seconds`` long."""
    return comparison({}, {}, entry="fake", every=seconds)


def test_growth_exponent_of_known_curves():
    assert growth_exponent([1, 2, 4, 8], [0.01 * v for v in [1, 2, 4, 8]]) == pytest.approx(1.0)
    assert growth_exponent([1, 10], [3.0, 3.0]) == pytest.approx(0.0)
    assert growth_exponent([1, 2], [1.0, math.nan]) is None
    assert growth_exponent([0, 1, 2], [1.0, 1.0, 1.0]) is None  # 0 has no logarithm
    assert growth_exponent(["a", "b"], [1.0, 2.0]) is None


def test_run_sweep_on_categories_plots_without_exponents():
    result = run_sweep("mode", ["a", "b"], lambda v, _: _fake(0.1 if v == "a" else 0.2),
                       Checkpoint())
    assert exponents(result)["flat"]["trace_s"] is None
    fig = sweep_figure(result)
    assert fig.axes[0].get_xscale() == "linear"
    assert "flat —" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def _runs(seconds: float) -> list[float]:
    """Three runs around ``seconds``, 5% apart (a real sweep's scatter)."""
    return [seconds * 0.95, seconds, seconds * 1.05]


def test_a_sweeps_answer_is_its_trend_first_each_values_verdict_with_the_details():
    """The growth exponent of the first call per variant with its 95% interval under the
    title, then each stage's; the per-value verdicts (each inconclusive on its own at
    these runs) only with -v or behind the fold."""
    depths = (1, 2, 4, 8)
    points = tuple(comparison({"first_call_s": _runs(0.1 * d)}, {"first_call_s": _runs(0.05)},
                              every=0.01) for d in depths)
    result = Sweep("depth", depths, points, wall_s=1.0)
    trend = trends(result)
    flat, nested = (trend[v]["first_call_s"] for v in ("flat", "nested"))
    assert flat.k == pytest.approx(1.0) and nested.k == pytest.approx(0.0, abs=1e-9)
    assert flat.low < 1.0 < flat.high and flat.high - flat.low < 0.2  # the runs' scatter
    short = sweep_text(result).splitlines()
    assert short[1] == (f"First call: flat ~ depth^1.0 ({flat.low:.1f}–{flat.high:.1f}), "
                        f"nested ~ depth^0.0 ({nested.low:.1f}–{nested.high:.1f})"
                        ).replace("-0.0", "0.0")
    assert any(ln.startswith("first call  ~ depth^1.0 (") for ln in short)  # the stages' table
    assert len(short) <= 12 and short[-1] == "(-v shows every value: chart, medians, verdicts)"
    line = result.headline
    assert line.startswith("Nested jit, first call by depth: 1 → ") and line not in short
    assert line in sweep_text(result, verbose=True).splitlines()
    html = str(sweep_html(result))
    assert html.index("First call: flat ~ depth^1.0") < html.index("<details>") \
        < html.index("Nested jit, first call by")


def test_a_trends_interval_needs_runs_to_read_it_by():
    one_run = tuple(comparison({"first_call_s": [0.1 * d]}, {"first_call_s": [0.05]},
                               every=0.01) for d in (1, 2))
    t = trends(Sweep("depth", (1, 2), one_run, wall_s=1.0))["flat"]["first_call_s"]
    assert t.k == pytest.approx(1.0) and t.low is None and t.high is None
    assert t_975(1) == 12.706 and t_975(11) == pytest.approx(2.201, abs=0.002)
    assert t_975(1000) == pytest.approx(1.962, abs=0.001)


def test_what_follows_a_sweep_table_says_which_value_it_belongs_to():
    from jitmagic.model.lines import LineRow, Lines, LineTable
    from jitmagic.model.sweep import Sweep
    from jitmagic.render.bundle import bundle

    table = LineTable("flat", (LineRow("cell.py", 3, "y = f(x)", None, 4, 4, 2, None),))
    last = dataclasses.replace(_fake(0.2), lines=Lines("fake", {"flat": table}))
    with_lines = Sweep("calls", (1, 4), (_fake(0.1), last), 1.0)
    data = bundle(with_lines, plot=False, verbose=True)
    said = "For calls=4, the last value measured (the sweep ran what follows on it alone):"
    text = data["text/plain"]
    assert said in text and text.index(said) < text.index("Program size by source line")
    assert text.index("growth") < text.index(said)  # after the sweep's own table
    assert f"<h3>{said}</h3>" in data["text/html"]
    plain = bundle(Sweep("calls", (1, 4), (_fake(0.1), _fake(0.2)), 1.0), plot=False)
    assert "the last value measured" not in plain["text/plain"]  # nothing of one value


def test_a_sweep_stopped_at_a_later_value_never_says_nothing_was_measured():
    from jitmagic.measure.sampling.stops import FINDING, Stop

    def measure(value, _):
        if value == "b":
            raise Stop(FINDING)
        return _fake(0.1)

    result = run_sweep("mode", ["a", "b", "c"], measure, Checkpoint())
    assert result.values == ("a",)
    assert result.stopped == ("at mode='b': interrupted while finding your helpers, before "
                              "it was measured")
    assert "nothing was measured" not in str(result)
    with pytest.raises(KeyboardInterrupt, match="^at mode='b': interrupted while finding "
                                                "your helpers: nothing was measured$"):
        run_sweep("mode", ["b"], measure, Checkpoint())


def test_a_sweep_that_measures_a_cause_shows_the_last_values_causes():
    asked = jitmagic.sweep("CALLS", [1, 2], _entry, jnp.ones(4), repeat=1, number=2,
                           lines=True, progress=False)
    shown = str(asked)
    assert "For CALLS=2, the last value measured" in shown
    assert shown.index("For CALLS=2") < shown.index("Why the first call takes")
    plain = jitmagic.sweep("CALLS", [1, 2], _entry, jnp.ones(4), repeat=1, number=2,
                           progress=False)
    assert "Why the first call takes" not in str(plain)  # a sweep's table answers it


def _point(wall: float, cpu: float, waited: float) -> Comparison:
    """Three runs a side: every phase ``wall`` s of wall time and ``cpu`` s of CPU time,
    each cold first call having waited ``waited`` s for a CPU."""
    from jitmagic.model.rows import PHASES
    from jitmagic.model.stats.witness import cpu_key

    samples = {**{p: [wall] * 3 for p in PHASES}, **{cpu_key(p): [cpu] * 3 for p in PHASES},
               "wait_s": [waited] * 3}
    return comparison(dict(samples), dict(samples), entry="fake")


def test_a_sweep_on_a_busy_machine_is_shown_and_fitted_on_cpu_time_as_comparisons_are():
    from jitmagic.model.sweep import clock_of, medians
    from jitmagic.render.sweep import sweep_text

    busy = Sweep("calls", (1, 4), (_point(1.0, 0.1, 0.5), _point(4.0, 0.4, 2.0)), 1.0)
    assert all(p.clock_of("first_call_s") == "CPU" for p in busy.points)
    assert clock_of(busy) == "CPU"
    assert medians(busy)["flat"]["first_call_s"] == [0.1, 0.4]  # not the wall 1.0, 4.0
    assert exponents(busy)["flat"]["first_call_s"] == pytest.approx(1.0)
    assert "(CPU time: the machine was busy" in sweep_text(busy).splitlines()[0]
    assert "medians per value (CPU time: the machine was busy" in sweep_text(busy, verbose=True)
    quiet = Sweep("calls", (1, 4), (_point(1.0, 0.1, 0.0), _point(4.0, 0.4, 0.0)), 1.0)
    assert clock_of(quiet) == "wall" and medians(quiet)["flat"]["first_call_s"] == [1.0, 4.0]
    assert "medians per value (wall time)" in sweep_text(quiet, verbose=True)


def test_a_sweeps_warning_wraps_at_spaces_to_the_terminal():
    """A teacher's terminal broke a sweep's warning mid-word ("wr / iting"): it was printed
    as preformatted text, one line of 130 characters. It is prose now, wrapped at spaces."""
    from jitmagic.model.notes import Ran
    from jitmagic.render.bundle import text

    depths = (1, 2)
    points = tuple(comparison({"first_call_s": _runs(0.1 * d)}, {"first_call_s": _runs(0.05)},
                              every=0.01) for d in depths)
    result = Sweep("depth", depths, points, wall_s=1.0, warned=(Ran("cell_ran", "file", 2),))
    warning = result.warnings[0]
    assert "writing files" in warning and len(warning) > 100
    for verbose in (False, True):
        shown = text(result, verbose=verbose, width=80).splitlines()
        start = next(i for i, x in enumerate(shown) if x.startswith("warning: "))
        said = shown[start:start + 3]
        assert all(len(x) <= 80 for x in said), said
        assert " ".join(x.strip() for x in said).startswith(f"warning: {warning}")

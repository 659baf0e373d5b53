"""--effort in `jitmagic diff`: per setting, NEW against OLD by the one rule, on one named
clock; each setting against its own report's default in OLD and in NEW; nothing where
neither report measured it, one line where only one did; informational (no gate judges
it). Crafted records for the rule's outcomes and the clock, and two real reports of a
model that reuses a helper in a loop, saved and diffed by the command."""

from __future__ import annotations

import json

import jax.numpy as jnp
import pytest
from support import comparison

import jitmagic
from jitmagic.frontends.command import main
from jitmagic.model.causes.effort import DEFAULT, OUT_OF_LINE, Effort, EffortRow, Setting
from jitmagic.model.reports.storage import save
from jitmagic.model.rows import PHASES
from jitmagic.render.diff import html
from jitmagic.render.diff import text as diff_text

LEVEL0 = "xla_backend_optimization_level=0"
COMPILE = (1.00, 1.01, 0.99, 1.02, 1.00)
CALL = (0.0100, 0.0101, 0.0099, 0.0100, 0.0102)


def text(d) -> str:
    """The diff in full (``-v``), where the effort rows are."""
    return diff_text(d, verbose=True)


def scaled(xs, k: float) -> tuple[float, ...]:
    return tuple(x * k for x in xs)


def effort(compile_k: float = 1.0, level0_k: float = 0.3, busy: bool = False,
           names: tuple[str, ...] = (LEVEL0,)) -> Effort:
    """An effort record: the default's compile ``compile_k`` × :data:`COMPILE`, each
    setting's ``level0_k`` × that, its calls twice the default's; CPU seconds beside
    every sample, and, where ``busy``, cold runs that waited for a CPU as long as they ran."""
    def samples(k: float, call_k: float) -> dict[str, tuple[float, ...]]:
        got = {"compile_s": scaled(COMPILE, k), "execute_s": scaled(CALL, call_k),
               "first_call_s": scaled(COMPILE, k * 1.1)}
        got |= {key[:-2] + "_cpu_s": scaled(v, 0.5) for key, v in list(got.items())}
        got["wait_s"] = scaled(COMPILE, k * 0.5 if busy else 0.0)
        return got
    rows = {n: EffortRow(Setting(n, {"x": 0}), samples(compile_k * level0_k, 2.0),
                         reached=True, outputs="exact") for n in names}
    return Effort("model", samples(compile_k, 1.0), rows)


def report(e: Effort | None = None):
    base = comparison({p: [0.010, 0.0101, 0.0102] for p in PHASES},
                      {p: [0.005, 0.0051, 0.0052] for p in PHASES})
    return base if e is None else base.with_part("effort", e)


def test_each_setting_is_new_against_old_by_the_one_rule_and_the_default_first():
    d = jitmagic.diff(report(effort()), report(effort(compile_k=1.5)))
    e = d.effort
    assert e is not None and e.settings == [DEFAULT, LEVEL0]
    slower = e.stage(LEVEL0, "compile_s")
    assert slower.kind == "slower" and slower.new_over_old == pytest.approx(1.5)
    assert e.stage(DEFAULT, "execute_s").kind == "no measurable difference"
    (r,) = e.ratios  # level 0 against its own report's default, in OLD and in NEW
    assert r.old_compile.ratio == pytest.approx(1 / 0.3) == r.new_compile.ratio
    said = text(d)
    assert "XLA's effort (--effort)" in said and "on wall time for every row" in said
    assert f"{LEVEL0}  XLA compile" in said and "1.50× slower" in said
    assert "compile ratio OLD" in said and "3.33×" in said


def test_no_gate_judges_the_effort_rows():
    d = jitmagic.diff(report(effort()), report(effort(compile_k=3.0)))
    assert d.effort.stage(DEFAULT, "compile_s").slower_by(2.0)
    assert d.regressions(1.2) == []  # the variants' stages are the same runs
    assert "informational: no gate judges these rows" in text(d)


def test_either_side_busy_puts_every_row_on_cpu_time_and_names_it():
    d = jitmagic.diff(report(effort()), report(effort(compile_k=1.5, busy=True)))
    assert d.effort.clock == "CPU"
    assert {s.clock for s in d.effort.stages} == {"CPU"}
    assert d.effort.stage(LEVEL0, "compile_s").label == "XLA compile, CPU time"
    assert "on CPU time for every row" in text(d)
    quiet = jitmagic.diff(report(effort()), report(effort(compile_k=1.5)))
    assert quiet.effort.clock == "wall"


def test_a_busy_side_without_cpu_seconds_stays_on_wall_time():
    e = effort(busy=True)
    bare = Effort(e.entry, {k: v for k, v in e.default.items() if k != "execute_cpu_s"},
                  e.rows)
    assert jitmagic.diff(report(e), report(bare)).effort.clock == "wall"


def test_without_effort_the_diff_says_nothing_of_it_and_one_side_is_one_line():
    neither = jitmagic.diff(report(), report())
    assert neither.effort is None and neither.effort_in is None
    assert "effort" not in text(neither) and "effort" not in neither.to_dict()
    one = jitmagic.diff(report(effort()), report())
    assert one.effort is None and one.effort_in == "OLD"
    assert "XLA's effort (--effort): measured in OLD only, so not compared" in text(one)
    assert "compile ratio OLD" not in text(one)


def test_a_setting_in_one_report_only_is_named_not_compared():
    d = jitmagic.diff(report(effort(names=(LEVEL0, "other"))),
                      report(effort(names=(LEVEL0, OUT_OF_LINE))))
    assert d.effort.settings == [DEFAULT, LEVEL0]
    assert (d.effort.only_old, d.effort.only_new) == (("other",), (OUT_OF_LINE,))
    said = text(d)
    assert "measured in OLD only, so not compared: `other`" in said
    assert "measured in NEW only, so not compared: `out of line`" in said


def test_the_effort_rows_are_in_the_html_escaped_and_the_json():
    d = jitmagic.diff(report(effort(names=("<b>x</b>",))), report(effort(names=("<b>x</b>",))))
    shown = html(d)
    assert "&lt;b&gt;x&lt;/b&gt;" in shown and "<b>x</b>" not in shown
    saved = json.loads(json.dumps(d.to_dict()))
    assert saved["effort"]["clock"] == "wall" and len(saved["effort"]["stages"]) == 4
    assert saved["effort"]["ratios"][0]["setting"] == "<b>x</b>"


# --- real reports: a model that reuses a helper in a loop -----------------------------------

def layer(x, w):
    return jnp.tanh(x @ w) + jnp.sin(x)


def model(x, w):
    for _ in range(4):
        x = layer(x, w)
    return x


X, W = jnp.ones((16, 16)), jnp.full((16, 16), 0.01)


@pytest.fixture(scope="module")
def measured():
    """Two real reports with --effort (OLD, NEW) and one without."""
    run = [jitmagic.compare(model, X, W, repeat=1, number=1, effort=True, quiet=True)
           for _ in range(2)]
    return (*run, jitmagic.compare(model, X, W, repeat=1, number=1, quiet=True))


def test_two_real_reports_with_effort_diff_by_the_command(measured, tmp_path, capsys):
    old, new, plain = measured
    paths = {}
    for name, r in (("old", old), ("new", new), ("plain", plain)):
        paths[name] = str(tmp_path / f"{name}.json")
        save(r, paths[name])
    assert main(["diff", paths["old"], paths["new"], "-v"]) == 0
    said = capsys.readouterr().out
    assert "XLA's effort (--effort), each setting NEW against OLD" in said
    for name in [DEFAULT, *old.part("effort").rows]:
        assert f"\n{name}  " in said or f"\n{name} " in said
    d = jitmagic.diff(paths["old"], paths["new"])
    assert d.effort.settings == [DEFAULT, *old.part("effort").rows]
    assert all(s.measured for s in d.effort.stages)
    assert main(["diff", paths["plain"], paths["plain"], "-v"]) == 0
    assert "effort" not in capsys.readouterr().out
    assert main(["diff", paths["plain"], paths["old"], "-v"]) == 0
    assert "measured in NEW only, so not compared" in capsys.readouterr().out


def test_an_undecided_ratio_against_its_own_default_is_marked_as_the_main_table_marks_it():
    """It read "n.s.", which the main table never writes for "inconclusive"."""
    same = effort(level0_k=1.0)
    noisy = effort()
    noisy.rows[LEVEL0].samples["compile_s"] = (0.5, 1.5, 0.7, 1.2, 0.9)
    said = text(jitmagic.diff(report(same), report(noisy)))
    assert "n.s." not in said and "marked inconclusive or same" in said
    row = next(line for line in said.splitlines() if line.startswith(LEVEL0) and "—" not in line
               and "1.00× no measurable difference" in line)
    assert "1.00× no measurable difference" in row and "inconclusive" in row

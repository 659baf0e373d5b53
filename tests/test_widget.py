"""The ordering toggle without a browser: real measurements, real ipywidgets, a real shell."""

from __future__ import annotations

import copy
import html
import json

import ipywidgets
import pytest
from IPython.utils.capture import capture_output
from support import FAST, VMAP_CELL

from jitmagic import Comparison
from jitmagic.frontends.widget import ordering_widget
from jitmagic.measure.parts import orderings as orderingsmod
from jitmagic.model.orderings import ORDERINGS, Orderings
from jitmagic.render.orderings import verdict


def shown(box: ipywidgets.VBox) -> dict:
    """What the toggle's stack shows now (the panel ``selected_index`` picks)."""
    stack = box.children[1]
    (output,) = stack.children[stack.selected_index].outputs
    return output["data"]


@pytest.fixture(scope="module")
def magic_run(ip, kernel_snapshot, tmp_path_factory):
    """One ``%%jitcompare --vmap`` run shared by this module; the kernel is left as it was."""
    path = tmp_path_factory.mktemp("report") / "r.json"
    before = kernel_snapshot()
    with capture_output() as cap:
        result = ip.run_cell_magic("jitcompare", f"-o {FAST} --vmap --batch 8 --save {path}",
                                   VMAP_CELL)
    assert kernel_snapshot() == before, "the magic changed the kernel's state"
    return result, cap, json.loads(path.read_text())


def test_the_magic_shows_the_answer_first_and_folds_the_orderings(magic_run):
    """One output, no widget: a saved notebook reopened without its kernel has no widget
    model to miss ("Error displaying widget: model not found"), and the orderings' table
    and chart open with a click (``<details>``) with no kernel."""
    result, cap, saved = magic_run
    assert result.flat.ok and result.nested.ok  # the engine's comparison still runs
    assert set(saved["orderings"]["rows"]) == set(ORDERINGS)
    assert saved["orderings"]["batch"] == 8
    (summary,) = cap.outputs
    assert "application/vnd.jupyter.widget-view+json" not in summary.data
    text, page = summary.data["text/plain"], summary.data["text/html"]
    assert "flat" in text and "nested" in text
    answer = text[text.index("vmap/jit orderings of"):]
    assert " ".join(verdict(result.orderings).split()) in " ".join(answer.split())
    assert "(-v shows all four orderings" in answer
    assert "vmap(f) " not in answer and "jaxpr eqns" not in answer  # the table is folded
    folded = page[page.index("<details><summary>all four orderings"):]
    for name in ORDERINGS:
        assert f"<code>{name}</code>" in folded
    assert 'src="data:image/png;base64,' in folded
    assert html.escape(verdict(result.orderings)) in page[:page.index(folded)]


def test_the_toggle_from_python_switches_the_output(magic_run):
    result = magic_run[0]
    box = ordering_widget(result)
    toggle, stack = box.children
    assert isinstance(toggle, ipywidgets.ToggleButtons) and isinstance(stack, ipywidgets.Stack)
    assert all(isinstance(out, ipywidgets.Output) for out in stack.children)
    assert toggle.options == ("jit(vmap(f))", "vmap(jit(f))")
    o = result.orderings
    before = shown(box)
    assert verdict(o, "jit(vmap(f))") in before["text/plain"]
    toggle.value = "vmap(jit(f))"
    after = shown(box)
    assert verdict(o, "vmap(jit(f))") in after["text/plain"]
    assert verdict(o, "vmap(jit(f))") in after["text/html"]
    assert "jaxpr of vmap(jit(f))" in after["text/plain"]
    assert 'src="data:image/png;base64,' in after["text/html"]
    assert after["text/html"] != before["text/html"]
    toggle.value = "jit(vmap(f))"
    assert shown(box) == before


def test_numbers_behind_the_widget_are_real(magic_run):
    o = magic_run[0].orderings
    assert len(o.rows) == 4 and o.batch == 8
    assert all(r.first_call_s > 0 and r.execute_s > 0 for r in o.rows.values())
    assert o["jit(vmap(jit(f)))"].same_program is True
    assert o.outputs_match is True


def orderings_with(measured, fast_s: float, slow_s: float, same_program: bool) -> Orderings:
    """The measured orderings record, saved, with chosen per-call times written in."""
    d = copy.deepcopy(measured.to_dict()["orderings"])
    for name, seconds in (("jit(vmap(f))", fast_s), ("vmap(jit(f))", slow_s)):
        row = d["rows"][name]
        row["samples"]["execute_s"] = [seconds] * 3  # one run a side would be inconclusive
        row["execute_s"] = seconds
    d["rows"]["vmap(jit(f))"]["same_program"] = same_program
    return Orderings.from_dict(d)


def test_verdict_says_which_ordering_is_faster_and_by_how_much(magic_run):
    o = orderings_with(magic_run[0], fast_s=1e-3, slow_s=3e-3, same_program=True)
    assert "jit(vmap(f)) is 3.00× faster per call than vmap(jit(f))" in verdict(o, "jit(vmap(f))")
    assert "vmap(jit(f)) is 3.00× slower per call than jit(vmap(f))" in verdict(o, "vmap(jit(f))")
    # Same program, different speed: the verdict blames Python dispatch.
    assert "Python dispatch" in verdict(o, "jit(vmap(f))")


def test_verdict_calls_equal_times_the_same_speed(magic_run):
    o = orderings_with(magic_run[0], fast_s=2e-3, slow_s=2e-3, same_program=True)
    text = verdict(o, "jit(vmap(f))")
    assert "faster" not in text and "slower" not in text
    assert "no measurable difference per call" in text
    assert "Python dispatch" not in text


def test_verdict_says_when_the_programs_differ(magic_run):
    o = orderings_with(magic_run[0], fast_s=1e-3, slow_s=5e-3, same_program=False)
    assert "different XLA programs" in verdict(o, "jit(vmap(f))")


def test_clicking_never_measures(magic_run, monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("the widget measured")

    box = ordering_widget(magic_run[0])
    for name in ("measure_orderings", "ordering_functions", "prepare_batch"):
        monkeypatch.setattr(orderingsmod, name, refuse)
    monkeypatch.setattr("jax.jit", refuse)
    box.children[0].value = "vmap(jit(f))"
    assert "vmap(jit(f))" in shown(box)["text/plain"]


def test_widget_from_a_saved_report(magic_run, tmp_path):
    saved = json.loads(json.dumps(magic_run[0].to_dict()))
    box = ordering_widget(Comparison.from_dict(saved), value="vmap(jit(f))")
    assert box.children[0].value == "vmap(jit(f))"
    assert "vmap(jit(f))" in shown(box)["text/plain"]


def test_a_result_without_orderings_is_refused(magic_run):
    d = magic_run[0].to_dict()
    del d["orderings"]
    with pytest.raises(ValueError, match="measure with --vmap"):
        ordering_widget(Comparison.from_dict(d))

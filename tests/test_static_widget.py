"""The --vmap toggle without a kernel: its MIME bundle's text/html holds both orderings'
panels behind radio buttons, and a nbconvert export keeps them (crafted orderings)."""

from __future__ import annotations

import html
import re

import pytest
from support import comparison
from test_answer_first import orderings

from jitmagic.frontends.widget import ordering_widget
from jitmagic.model.orderings import TOGGLED
from jitmagic.render.blocks import switch
from jitmagic.render.orderings import verdict

WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def result():
    return comparison(every=0.01, orderings=orderings())


@pytest.fixture(scope="module")
def box(result):
    return ordering_widget(result)


def panels(page: str) -> list[str]:
    return re.findall(r'<div class="jitcompare-orderings-\w+-panel [^"]*">(.*?)</div>(?=<div|'
                      r"</div>$)", page, flags=re.S)


def test_the_bundle_carries_the_widget_and_both_panels_as_html(box, result):
    bundle = box._repr_mimebundle_()
    assert WIDGET in bundle
    # a terminal (no widget runs there) shows one line, not the widget's repr
    assert bundle["text/plain"].startswith("(the jit(vmap(f)) / vmap(jit(f)) toggle")
    page = bundle["text/html"]
    assert page.count('type="radio"') == 2 and page.count(" checked") == 1
    assert "<style>" in page and ":checked ~ ." in page
    for name in TOGGLED:
        assert f"> {html.escape(name)} </label>" in page
        assert html.escape(verdict(result.orderings, name)) in page
    assert page.count('src="data:image/png;base64,') == 2  # each panel's chart
    assert len(panels(page)) == 2


def test_the_live_toggle_still_switches_without_measuring(box, monkeypatch):
    import jitmagic.frontends.widget as widget

    monkeypatch.setattr(widget, "panel_output", lambda *a: pytest.fail("drew again"))
    toggle, out = box.children
    static = box._repr_mimebundle_()["text/html"]
    first = out.outputs
    toggle.value = TOGGLED[1]
    assert out.outputs != first and TOGGLED[1] in out.outputs[0]["data"]["text/plain"]
    toggle.value = TOGGLED[0]
    assert out.outputs == first and box._repr_mimebundle_()["text/html"] == static


def test_each_toggle_on_a_page_has_its_own_ids(result):
    a, b = (ordering_widget(result)._repr_mimebundle_()["text/html"] for _ in range(2))
    ids = (re.search(r'id="([\w-]+)"', page).group(1) for page in (a, b))
    assert len(set(ids)) == 2


def test_the_static_toggle_starts_on_the_chosen_ordering(result):
    page = ordering_widget(result, TOGGLED[1])._repr_mimebundle_()["text/html"]
    assert re.search(r'id="[\w-]+-1" checked>', page) and page.count(" checked") == 1


def test_switch_escapes_labels_and_cleans_its_key():
    page = switch("a b<c", [("<x>", "one"), ("y", "two")])
    assert "&lt;x&gt;" in page and "<x>" not in page and 'id="a-b-c"' in page


def test_a_nbconvert_export_contains_both_panels(box, result):
    nbformat = pytest.importorskip("nbformat")
    nbconvert = pytest.importorskip("nbconvert")
    bundle = box._repr_mimebundle_()
    cell = nbformat.v4.new_code_cell("%%jitcompare --vmap\n...", outputs=[
        nbformat.v4.new_output("display_data", data=bundle)])
    page, _ = nbconvert.HTMLExporter().from_notebook_node(nbformat.v4.new_notebook(cells=[cell]))
    for name in TOGGLED:
        assert html.escape(verdict(result.orderings, name)) in page
    assert page.count('type="radio"') >= 2

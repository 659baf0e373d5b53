"""The --vmap toggle without a kernel: its static twin (an output of its own) holds both
orderings' panels behind radio buttons, the widget's buttons switch its panels in the
browser, and a nbconvert export keeps the twin (crafted orderings)."""

from __future__ import annotations

import html
import re

import pytest
from IPython.display import display
from IPython.utils.capture import capture_output
from ipywidgets.widgets import widget as widget_module
from ipywidgets.widgets.widget_link import Link
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


def test_display_shows_the_widget_then_both_panels_as_html(ip, box, result):
    with capture_output() as cap:
        display(box)
    widget, twin = (out.data for out in cap.outputs)
    assert widget == box._repr_mimebundle_() and WIDGET in widget
    # a terminal (no widget runs there) shows one line, not the widget's repr
    assert widget["text/plain"].startswith("(the jit(vmap(f)) / vmap(jit(f)) toggle")
    assert widget["text/html"] == ""  # where the widget cannot run, the twin shows
    assert twin == box.static_bundle()
    page = twin["text/html"]
    assert page.count('type="radio"') == 2 and page.count(" checked") == 1
    assert "<style>" in page and ":checked ~ ." in page
    for name in TOGGLED:
        assert f"> {html.escape(name)} </label>" in page
        assert html.escape(verdict(result.orderings, name)) in page
    assert page.count('src="data:image/png;base64,') == 2  # each panel's chart
    assert len(panels(page)) == 2


def test_the_twin_hides_itself_beside_the_drawn_widget(box):
    page = box.static_bundle()["text/html"]
    key = re.search(r'<div class="jitcompare-switch" id="([\w-]+)">', page).group(1)
    assert (".jp-OutputArea-child:has(.widget-toggle-buttons) + "
            f".jp-OutputArea-child:has(#{key}) {{display: none;}}") in page


def test_the_live_toggle_still_switches_without_measuring(box, monkeypatch):
    import jitmagic.frontends.widget as widget

    monkeypatch.setattr(widget, "panel_output", lambda *a: pytest.fail("drew again"))
    toggle, stack = box.children
    static = box.static_bundle()
    panels = [out.outputs for out in stack.children]
    assert stack.selected_index == 0
    toggle.value = TOGGLED[1]
    assert stack.selected_index == 1 and TOGGLED[1] in panels[1][0]["data"]["text/plain"]
    toggle.value = TOGGLED[0]
    assert stack.selected_index == 0 and box.static_bundle() == static
    assert [out.outputs for out in stack.children] == panels


def test_the_buttons_switch_the_panels_in_the_browser(box):
    """A ``jslink`` (a widget of its own, kept in the saved widget state): the front end
    switches the stack with no kernel, as a notebook reopened from its state needs."""
    toggle, stack = box.children
    links = [w for w in widget_module._instances.values()
             if isinstance(w, Link) and w.source == (toggle, "index")]
    assert [link.target for link in links] == [(stack, "selected_index")]


def test_each_toggle_on_a_page_has_its_own_ids(result):
    a, b = (ordering_widget(result).static_bundle()["text/html"] for _ in range(2))
    ids = (re.search(r'id="([\w-]+)"', page).group(1) for page in (a, b))
    assert len(set(ids)) == 2


def test_the_static_toggle_starts_on_the_chosen_ordering(result):
    box = ordering_widget(result, TOGGLED[1])
    assert box.children[1].selected_index == 1
    page = box.static_bundle()["text/html"]
    assert re.search(r'id="[\w-]+-1" checked>', page) and page.count(" checked") == 1


def test_switch_escapes_labels_and_cleans_its_key():
    page = switch("a b<c", [("<x>", "one"), ("y", "two")])
    assert "&lt;x&gt;" in page and "<x>" not in page and 'id="a-b-c"' in page


def test_a_nbconvert_export_contains_both_panels(box, result):
    nbformat = pytest.importorskip("nbformat")
    nbconvert = pytest.importorskip("nbconvert")
    cell = nbformat.v4.new_code_cell("%%jitcompare --vmap\n...", outputs=[
        nbformat.v4.new_output("display_data", data=data)
        for data in (box._repr_mimebundle_(), box.static_bundle())])
    page, _ = nbconvert.HTMLExporter().from_notebook_node(nbformat.v4.new_notebook(cells=[cell]))
    for name in TOGGLED:
        assert html.escape(verdict(result.orderings, name)) in page
    assert page.count('type="radio"') >= 2

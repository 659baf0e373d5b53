"""The static-export guarantee: a notebook run with ``--vmap`` and exported with nbconvert
shows every ordering's numbers, a chart and a toggle that switches, with no kernel, no
widget JavaScript, no network, however the export was made: executed by nbclient and
saved with its widget state or without, or by ``jupyter nbconvert --execute``. With the
widget state nbconvert draws the widget's placeholder (which needs the widget manager
from a CDN) instead of the widget output's ``text/html``: the toggle's static twin, an
output of its own, is what shows then."""

from __future__ import annotations

import copy
import html as html_module
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbhelpers import ordering_notebook
from nbhelpers import private_jupyter_env
from test_browser import CHROMIUM
from test_browser import CHROMIUM_ARGS

from jitmagic.model.orderings import ORDERINGS
from jitmagic.model.orderings import TOGGLED
from jitmagic.model.orderings import Orderings
from jitmagic.model.stats.units import fmt_s
from jitmagic.render.orderings import verdict

pytestmark = pytest.mark.slow  # runs the notebook in two fresh kernels, and nbconvert

#: nbconvert's placeholder for a widget whose state the notebook saved.
PLACEHOLDER = '<script type="application/vnd.jupyter.widget-view+json">'
#: The three exports: how each was made.
SAVED, NOT_SAVED, EXECUTED = ("nbclient, widget state saved", "nbclient, widget state not saved",
                              "nbconvert --execute")


def small_notebook(path: Path, save: Path | None = None) -> Path:
    """The two-cell ``--vmap`` notebook at its smallest (batch 2, one call per loop)."""
    nb = nbformat.read(ordering_notebook(path), as_version=4)
    small = "--batch 2 -r 1 -n 1" + (f" --save {save}" if save else "")
    nb.cells[1].source = nb.cells[1].source.replace("--batch 8 -r 1 -n 5", small, 1)
    nbformat.write(nb, path)
    return path


def nbconvert(env: dict[str, str], *args: str) -> None:
    """``jupyter nbconvert ARGS`` as a user runs it (this venv's, in the private home)."""
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", *args], env=env, check=True,
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=300)


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> dict:
    """The HTML of each export (by how it was made), and the nbclient run's report."""
    tmp = tmp_path_factory.mktemp("export")
    env = private_jupyter_env(tmp / "home")
    report = tmp / "report.json"
    nb = nbformat.read(small_notebook(tmp / "run.ipynb", save=report), as_version=4)
    old = dict(os.environ)
    os.environ.update(env)  # the kernel nbclient starts keeps its state in the private home
    try:
        NotebookClient(nb, kernel_name="python3", timeout=300,
                       resources={"metadata": {"path": str(tmp)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    assert "widgets" in nb.metadata  # nbclient saves the widget state by default
    unsaved = copy.deepcopy(nb)
    del unsaved.metadata["widgets"]  # as JupyterLab saves a notebook by default
    nbformat.write(nb, tmp / "saved.ipynb")
    nbformat.write(unsaved, tmp / "not-saved.ipynb")
    for name in ("saved", "not-saved"):
        nbconvert(env, "--to", "html", str(tmp / f"{name}.ipynb"))
    nbconvert(env, "--execute", "--to", "html", "--output", "executed",
              str(small_notebook(tmp / "fresh.ipynb")))
    pages = {how: (tmp / f"{name}.html").read_text() for how, name in
             ((SAVED, "saved"), (NOT_SAVED, "not-saved"), (EXECUTED, "executed"))}
    o = Orderings.from_dict(json.loads(report.read_text())["orderings"])
    return {"pages": pages, "files": {EXECUTED: tmp / "executed.html"}, "orderings": o}


def without_scripts(page: str) -> str:
    """What shows without JavaScript: the page minus every <script> (widget state too)."""
    return re.sub(r"<script\b.*?</script>", "", page, flags=re.S | re.I)


def test_exported_html_keeps_numbers_and_chart(exports):
    static = without_scripts(exports["pages"][SAVED])
    assert f"kernel python: {sys.executable}" in static
    o = exports["orderings"]
    table = static[static.index('<table class="jitcompare-orderings">'):]
    table = table[:table.index("</table>")]
    for name in ORDERINGS:
        row = o[name]
        assert f"<code>{name}</code>" in table
        assert fmt_s(row.first_call_s) in table and fmt_s(row.execute_s) in table
    assert o.outputs_match is True
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', static)) >= 2
    assert html_module.escape(verdict(o)) in static
    assert not re.search(r'<(?:img|link)[^>]+(?:src|href)="https?://', static)


@pytest.mark.parametrize("how", [SAVED, NOT_SAVED, EXECUTED])
def test_every_export_holds_one_static_toggle_with_both_panels(exports, how):
    page = exports["pages"][how]
    # with the widget state saved, nbconvert draws the widget's placeholder
    assert (PLACEHOLDER in page) == (how != NOT_SAVED)
    static = without_scripts(page)
    assert static.count('<div class="jitcompare-switch"') == 1
    switch = static[static.index('<div class="jitcompare-switch"'):]
    assert switch.count('type="radio"') == 2
    for name in TOGGLED:
        assert f"> {html_module.escape(name)} </label>" in switch
        assert f'<p class="jitcompare-verdict"><b>{html_module.escape(name)} against' in switch
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', switch)) >= 2
    if how == EXECUTED:
        assert f"kernel python: {sys.executable}" in static


def test_the_static_toggle_switches_in_the_executed_export_offline(exports):
    """``jupyter nbconvert --execute --to html``, opened in Chromium with every request
    aborted but the file itself: the radio buttons switch the panels."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"Chromium is needed for the browser check and is not at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    path = exports["files"][EXECUTED]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.route("**/*", lambda route: route.continue_()
                       if route.request.url == path.as_uri() else route.abort())
            page.goto(path.as_uri())
            switch = page.locator(".jitcompare-switch")
            assert page.locator(".widget-toggle-buttons").count() == 0  # no widget drawn
            shown = switch.locator(".jitcompare-verdict:visible")
            assert shown.count() == 1 and shown.inner_text().startswith("jit(vmap(f)) ")
            switch.locator("label", has_text="vmap(jit(f))").filter(
                has_not_text="jit(vmap(f))").click()
            assert shown.count() == 1 and shown.inner_text().startswith("vmap(jit(f)) ")
        finally:
            browser.close()

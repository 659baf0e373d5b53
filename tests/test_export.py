"""The static-export guarantee: a notebook run with ``--vmap`` and exported with nbconvert
shows the orderings' answer, and behind a click (``<details>``, no script) every
ordering's numbers and the chart, with no kernel, no widget JavaScript and no network,
however the export was made: executed by nbclient and saved, or by ``jupyter nbconvert
--execute``. The magic shows no widget, so no export holds a widget's placeholder."""

from __future__ import annotations

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
from nbhelpers import ordering_notebook, private_jupyter_env
from test_browser import CHROMIUM, CHROMIUM_ARGS

from jitmagic.model.orderings import ORDERINGS, Orderings
from jitmagic.model.stats.units import fmt_s
from jitmagic.render.orderings import verdict

pytestmark = pytest.mark.slow  # runs the notebook in two fresh kernels, and nbconvert

#: What a widget's output is written as, in a notebook and in nbconvert's page.
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: The two exports: how each was made.
SAVED, EXECUTED = "nbclient, saved", "nbconvert --execute"


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
    assert not any(WIDGET_VIEW in out.get("data", {}) for cell in nb.cells
                   for out in cell.get("outputs", []))  # nothing a reopened notebook could miss
    nbformat.write(nb, tmp / "saved.ipynb")
    nbconvert(env, "--to", "html", str(tmp / "saved.ipynb"))
    nbconvert(env, "--execute", "--to", "html", "--output", "executed",
              str(small_notebook(tmp / "fresh.ipynb")))
    pages = {how: (tmp / f"{name}.html").read_text() for how, name in
             ((SAVED, "saved"), (EXECUTED, "executed"))}
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


@pytest.mark.parametrize("how", [SAVED, EXECUTED])
def test_every_export_holds_the_answer_then_the_orderings_folded(exports, how):
    page = exports["pages"][how]
    assert WIDGET_VIEW not in page
    static = without_scripts(page)
    verdict_at = static.index("<b>jit(vmap(f)) against vmap(jit(f)):")  # each run's own
    fold = static.index("<details><summary>all four orderings")
    assert verdict_at < fold < static.index('<table class="jitcompare-orderings">')
    assert re.search(r'<img [^>]*src="data:image/png;base64,', static[fold:])
    if how == EXECUTED:
        assert f"kernel python: {sys.executable}" in static


def test_the_fold_opens_with_a_click_in_the_executed_export_offline(exports):
    """``jupyter nbconvert --execute --to html``, opened in Chromium with every request
    aborted but the file itself: the orderings' table shows after a click on the fold."""
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
            verdict = page.locator(".jitcompare-verdict", has_text="jit(vmap(f)) against")
            assert verdict.first.is_visible()
            table = page.locator("table.jitcompare-orderings")
            assert not table.is_visible()
            page.locator("summary", has_text="all four orderings").click()
            assert table.is_visible()
        finally:
            browser.close()

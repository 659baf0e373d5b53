"""The static-export guarantee: a notebook run with ``--vmap`` and exported with nbconvert
shows every ordering's numbers and a chart with no kernel, no widget JavaScript, no network."""

from __future__ import annotations

import html as html_module
import json
import re
import sys

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter
from nbhelpers import ordering_notebook, private_jupyter_env

from jitmagic.model.orderings import ORDERINGS, Orderings
from jitmagic.render.format import fmt_s
from jitmagic.render.orderings import verdict

pytestmark = pytest.mark.slow  # runs a notebook in a fresh kernel


def test_exported_html_keeps_numbers_and_chart(tmp_path, monkeypatch):
    for var, value in private_jupyter_env(tmp_path / "home").items():
        monkeypatch.setenv(var, value)
    report = tmp_path / "report.json"
    nb = nbformat.read(ordering_notebook(tmp_path / "orderings.ipynb"), as_version=4)
    nb.cells[1].source = nb.cells[1].source.replace("-n 5", f"-n 5 --save {report}", 1)
    NotebookClient(nb, kernel_name="python3", timeout=300,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert f"kernel python: {sys.executable}" in nb.cells[0].outputs[0]["text"]

    html, _ = HTMLExporter().from_notebook_node(nb)
    # What shows without JavaScript: the page minus every <script> (widget state included).
    static = re.sub(r"<script\b.*?</script>", "", html, flags=re.S | re.I)
    o = Orderings.from_dict(json.loads(report.read_text())["orderings"])
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

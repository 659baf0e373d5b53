"""``%%jitcompare`` numbers a cell's lines as the notebook shows them: the magic's own
line is line 1, and blank lines IPython drops before the code still count. Every line
the report names (a captured constant, a ``--lines`` row, an error's traceback, the
message about the last statement) is checked against the cell's text as the notebook
shows it, through a real IPython shell."""

from __future__ import annotations

import re

import pytest

#: The notebook cell as the user sees it: line 1 the magic, a blank line, an embedding
#: table read by a helper, the model calling it in a loop, the call.
NOTEBOOK_CELL = """\
%%jitcompare -o -r 1 -n 1 --no-plot --lines

import numpy as np
import jax.numpy as jnp

EMBED = np.linspace(0.0, 1.0, 2**18, dtype=np.float32)  # 1 MiB, captured


def embed(x, ids):
    rows = jnp.take(EMBED, ids)
    return jnp.tanh(x + rows)


def model(x, ids):
    for _ in range(3):
        x = embed(x, ids) * 0.5
    return x


model(jnp.ones(8), jnp.arange(8) * 1000)
"""


def split(notebook: str) -> tuple[str, str, list[str]]:
    """(the magic's line without ``%%jitcompare``, the cell body, the lines as the
    notebook numbers them: ``lines[n - 1]`` is line n)."""
    first, body = notebook.split("\n", 1)
    return first.removeprefix("%%jitcompare").strip(), body, notebook.splitlines()


def numbered(lines: list[str], snippet: str) -> int:
    """The notebook's number of the one line holding ``snippet``."""
    found = [n for n, text in enumerate(lines, 1) if snippet in text]
    assert len(found) == 1, found
    return found[0]


@pytest.fixture
def measured(run_magic, ip):
    line, body, lines = split(NOTEBOOK_CELL)
    result, _ = run_magic(line, body)
    yield result, lines
    for name in ("np", "jnp", "EMBED", "embed", "model"):
        ip.user_ns.pop(name, None)


def test_the_captured_constant_names_the_line_the_notebook_shows(measured):
    result, lines = measured
    reads = numbered(lines, "jnp.take(EMBED, ids)")
    assert reads == 10  # the magic's line, a blank line, then the code
    record = result.constant_arguments
    shown = str(result)  # the report: its causes and the constants' section
    assert f"line {reads} captures `EMBED` (1.0 MiB)" in shown
    assert f"line {reads - 1} captures" not in shown
    constant = record["flat"].constants[0]
    assert constant.line_numbers == (reads,) and "EMBED" in lines[reads - 1]


def test_the_lines_table_rows_are_the_notebook_lines(measured):
    result, lines = measured
    rows = [r for r in result.lines.flat.rows if "jitcompare" in r.file]
    assert rows, result.lines.flat.rows
    for r in rows:
        assert r.text.strip() == lines[r.line - 1].strip(), (r.line, r.text)
    hot = {r.line for r in rows if "jnp.take" in r.text}
    assert hot == {numbered(lines, "jnp.take(EMBED, ids)")}
    # the report's source is the code as written, without the lines that number it
    assert result.source == split(NOTEBOOK_CELL)[1].lstrip("\n")


def test_an_error_in_the_cell_names_its_notebook_line(run_magic):
    notebook = ("%%jitcompare -r 1 -n 1 --no-plot\n"
                "\n"
                "\n"
                "import jax.numpy as jnp\n"
                "sizes = {'hidden': 16}\n"
                "width = sizes['hiden']\n"
                "jnp.ones(width)\n")
    line, body, lines = split(notebook)
    with pytest.raises(Exception, match="KeyError") as caught:
        run_magic(line, body)
    said = str(caught.value)
    raised = numbered(lines, "sizes['hiden']")
    assert raised == 6
    assert re.search(rf"line {raised}\b", said), said
    assert "sizes['hiden']" in said


def test_a_last_statement_that_is_no_call_names_its_notebook_line(run_magic):
    notebook = ("%%jitcompare --no-plot\n"
                "import jax.numpy as jnp\n"
                "\n"
                "y = jnp.ones(3)\n")
    line, body, lines = split(notebook)
    with pytest.raises(Exception, match="is not a call") as caught:
        run_magic(line, body)
    assert f"(line {numbered(lines, 'y = jnp.ones(3)')}, an assignment)" in str(caught.value)
    assert "(line 4, an assignment)" in str(caught.value)

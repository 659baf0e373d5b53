"""Notebook cells named as IPython names them (``Cell In[12]``, not the kernel's temporary file) in
the ``--lines`` tables and a ledger's places."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..model.comparison import Comparison
from ..model.ledger import Ledger
from ..model.lines import Lines
from ..model.sweep import Sweep
from ..usercode import CELL_PREFIXES

#: What a ``%%jitcompare`` cell's own code is called (jitmagic compiles it itself).
THIS_CELL = "this %%jitcompare cell"


def cell_label(shell: Any, file: str) -> str | None:
    """How IPython names ``file`` (``Cell In[12]``); None for another kind of file."""
    if file.startswith(CELL_PREFIXES[0]):
        return THIS_CELL
    named = getattr(getattr(shell, "compile", None), "format_code_name", None)
    found = named(file) if callable(named) else None
    return " ".join(found) if found else None


def with_cell_names(result: Any, shell: Any) -> Any:
    """``result`` with its tables, or a ledger's places, naming cells as IPython does."""
    if isinstance(result, Ledger):
        return result if shell is None else _ledger_labelled(result, shell)
    if isinstance(result, Lines):
        return _labelled(result, shell)
    if isinstance(result, Sweep):
        return dataclasses.replace(result, points=(*result.points[:-1],
                                                   with_cell_names(result.last, shell)))
    if isinstance(result, Comparison) and result.lines is not None:
        return dataclasses.replace(result, lines=_labelled(result.lines, shell))
    return result


def _labelled(lines: Lines, shell: Any) -> Lines:
    files = {r.file for t in lines.tables.values() for r in t.rows}
    labels = {f: label for f in files if (label := cell_label(shell, f)) is not None}
    return lines.labelled(labels) if labels else lines


def _ledger_labelled(ledger: Ledger, shell: Any) -> Ledger:
    def named(site: str | None) -> str | None:
        if not site or ":" not in site:
            return site
        file, _, line = site.rpartition(":")
        label = cell_label(shell, file) if file != ledger.source_file else None
        return f"{label}:{line}" if label and line.isdigit() else site

    return dataclasses.replace(ledger, compiles=tuple(
        dataclasses.replace(c, call_site=named(c.call_site), defined_at=named(c.defined_at))
        for c in ledger.compiles))

"""Presenting a result: rows built once and rendered as text and HTML, and charts.

Imports the model only, never the measuring code. Importing it registers the
renderers through which records show themselves (:mod:`jitmagic.model.shown`).
"""

import html
from typing import Any

from ..model.advice import Advice
from ..model.diff import Diff
from ..model.ledger import Ledger
from ..model.ledger.diff import LedgerDiff
from ..model.shown import register_renderers
from . import diff as _diff
from . import ledger as _ledger
from .attribution import advice_lines
from .bundle import repr_mimebundle
from .bundle import text


def _text(r: Any) -> str:
    """``str()`` of a record: a diff's own table, advice in words, else the report's."""
    if isinstance(r, Advice):
        return "\n".join(advice_lines(r))
    if isinstance(r, Ledger):
        return _ledger.text(r)
    if isinstance(r, LedgerDiff):
        return _ledger.diff_text(r)
    return _diff.text(r) if isinstance(r, Diff) else text(r)


def _bundle(r: Any, include: Any = None, exclude: Any = None) -> dict[str, str]:
    """``_repr_mimebundle_`` of a record: a diff's text and HTML, advice's words, else
    the report's."""
    if not isinstance(r, Diff | Advice | Ledger | LedgerDiff):
        return repr_mimebundle(r, include, exclude)
    if isinstance(r, Ledger):
        data = _ledger.bundle(r)
    elif isinstance(r, LedgerDiff):
        words = _ledger.diff_text(r)
        data = {"text/plain": words, "text/html": f"<pre>{html.escape(words)}</pre>"}
    elif isinstance(r, Advice):
        words = _text(r)
        data = {"text/plain": words, "text/html": f"<pre>{html.escape(words)}</pre>"}
    else:
        data = {"text/plain": _diff.text(r), "text/html": str(_diff.html(r))}
    return {k: v for k, v in data.items()
            if (not include or k in include) and not (exclude and k in exclude)}


register_renderers(_text, _bundle)

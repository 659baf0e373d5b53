"""Presenting a result: rows built once and rendered as text and HTML, and charts."""

import html
from collections.abc import Callable
from typing import Any

from ..model.advice import Advice
from ..model.diff import Diff
from ..model.ledger import Ledger, LedgerDiff
from ..model.notes import Note
from ..model.shown import Shown, register
from . import diff as _diff
from . import ledger as _ledger
from .attribution import advice_lines
from .bundle import forms, text
from .causes.said import register_causes
from .headlines import register_headlines
from .ledger import diff_text as ledger_diff_text
from .ledger import register_ledger
from .lines import register_hints
from .notes import register_notes
from .progress import register_progress


def _filtered(forms: Callable[[Any], dict[str, str]]) -> Callable[..., dict[str, str]]:
    """A record's bundle: its forms, those IPython asked for (``include``, less ``exclude``)."""
    def bundle(r: Any, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {k: v for k, v in forms(r).items()
                if (not include or k in include) and not (exclude and k in exclude)}
    return bundle


def _words(words: Callable[[Any], str]) -> Callable[[Any], dict[str, str]]:
    """The forms of a record shown in words alone: its text, and that text as HTML."""
    def forms(r: Any) -> dict[str, str]:
        said = words(r)
        return {"text/plain": said, "text/html": f"<pre>{html.escape(said)}</pre>"}
    return forms


def _advice_text(r: Advice) -> str:
    return "\n".join(advice_lines(r))


#: Each record type's ``str()`` and forms for IPython (a note kind's own: :func:`register_notes`).
_SHOWN: tuple[tuple[type, Callable[..., str], Callable[[Any], dict[str, str]]], ...] = (
    (Shown, text, forms),
    (Diff, _diff.text, lambda r: {"text/plain": _diff.text(r), "text/html": str(_diff.html(r))}),
    (Advice, _advice_text, _words(_advice_text)),
    (Ledger, _ledger.text, _ledger.bundle),
    (LedgerDiff, ledger_diff_text, _words(ledger_diff_text)),
    (Note, lambda n: f"<{n.kind}>", _words(str)),
)
for _type, _text, _forms in _SHOWN:
    register("text", _type, _text)
    register("bundle", _type, _filtered(_forms))
register_headlines()
register_ledger()
_diff.register_diff()
register_causes()
register_hints()
register_progress()
register_notes()

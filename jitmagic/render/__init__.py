"""Presenting a result: rows built once and rendered as text and HTML, and charts."""

import html
from collections.abc import Callable
from typing import Any

from ..model.advice import Advice
from ..model.diff import Diff
from ..model.ledger import Ledger
from ..model.ledger.diff import LedgerDiff
from ..model.notes import Note
from ..model.shown import Shown
from ..model.shown import register
from . import diff as _diff
from . import ledger as _ledger
from .attribution import advice_lines
from .bundle import repr_mimebundle
from .bundle import text
from .causes.said import register_causes
from .headlines import register_headlines
from .ledger import register_ledger
from .ledger.diff import diff_text as ledger_diff_text
from .lines import register_hints
from .notes import register_notes
from .progress import register_progress


def _filtered(data: dict[str, str], include: Any, exclude: Any) -> dict[str, str]:
    """The forms of a MIME bundle IPython asked for (``include``, less ``exclude``)."""
    return {k: v for k, v in data.items()
            if (not include or k in include) and not (exclude and k in exclude)}


def _words(words: Callable[[Any], str]) -> Callable[[Any, Any, Any], dict[str, str]]:
    """A bundle of a record shown in words alone: its text, and that text as HTML."""
    def bundle(r: Any, include: Any = None, exclude: Any = None) -> dict[str, str]:
        said = words(r)
        return _filtered({"text/plain": said, "text/html": f"<pre>{html.escape(said)}</pre>"},
                         include, exclude)
    return bundle


def _diff_bundle(r: Diff, include: Any = None, exclude: Any = None) -> dict[str, str]:
    return _filtered({"text/plain": _diff.text(r), "text/html": str(_diff.html(r))},
                     include, exclude)


def _ledger_bundle(r: Ledger, include: Any = None, exclude: Any = None) -> dict[str, str]:
    return _filtered(_ledger.bundle(r), include, exclude)


def _advice_text(r: Advice) -> str:
    return "\n".join(advice_lines(r))


#: Each record type's renderers, ``str()`` and IPython's bundle: a report (any other record), a
#: diff's own table, advice in words, a ledger's table, a note in its words (each kind's ``str()``
#: is registered by :func:`register_notes`; the note's kind is said where none is).
_SHOWN: tuple[tuple[type, Callable[..., str], Callable[..., dict[str, str]]], ...] = (
    (Shown, text, repr_mimebundle),
    (Diff, _diff.text, _diff_bundle),
    (Advice, _advice_text, _words(_advice_text)),
    (Ledger, _ledger.text, _ledger_bundle),
    (LedgerDiff, ledger_diff_text, _words(ledger_diff_text)),
    (Note, lambda n: f"<{n.kind}>", _words(str)),
)
for _type, _text, _bundle in _SHOWN:
    register("text", _type, _text)
    register("bundle", _type, _bundle)
register_headlines()
register_ledger()
_diff.register_diff()
register_causes()
register_hints()
register_progress()
register_notes()

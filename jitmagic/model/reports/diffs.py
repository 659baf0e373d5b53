"""The one door to a diff (``jitmagic.diff``, ``jitmagic diff``, the gates): two records,
or the paths of saved reports, of either kind.

It sits above both diffs and the storage they read from, so neither diff loads a file:
:mod:`jitmagic.model.diff` judges two comparisons, :mod:`jitmagic.model.ledger.diff`
sets two ledgers side by side, and this module loads and chooses between them.
"""

from __future__ import annotations

import os
from typing import Any

from ..comparison import Comparison
from ..diff import Diff
from ..diff import comparison_only
from ..diff import diff
from ..ledger import Ledger
from ..ledger.diff import LedgerDiff
from ..ledger.diff import ledger_diff
from ..saved.schema import ReportSchemaError
from .storage import load


def loaded(r: Any) -> Any:
    """``r`` itself, or the record saved at the path ``r``
    (:func:`~jitmagic.model.reports.storage.load`)."""
    return load(r) if isinstance(r, str | os.PathLike) else r


def as_comparison(r: Any) -> Comparison:
    """``r`` itself, or the comparison saved at the path ``r``; ``ReportSchemaError`` for
    any other record, ``FileNotFoundError`` for a missing file."""
    return comparison_only(loaded(r))


def diff_any(old: Any, new: Any, *, force: bool = False) -> Diff | LedgerDiff:
    """``jitmagic.diff``: two ledgers (records or the paths of saved ones) give their
    :class:`~jitmagic.model.ledger.diff.LedgerDiff`, two comparisons their
    :class:`~jitmagic.model.diff.Diff` (:func:`jitmagic.model.diff.diff`)."""
    old, new = loaded(old), loaded(new)
    if isinstance(old, Ledger) and isinstance(new, Ledger):
        return ledger_diff(old, new)
    if isinstance(old, Ledger) or isinstance(new, Ledger):
        raise ReportSchemaError("diff compares two ledgers or two comparisons, not a ledger "
                                "with a comparison")
    return diff(old, new, force=force)

"""The one door to a diff (``jitmagic.diff``, ``jitmagic diff``, the gates): two records,
or the paths of saved reports, of either kind (two comparisons, or two ledgers)."""

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
    """``r`` itself, or the record saved at the path ``r``."""
    return load(r) if isinstance(r, str | os.PathLike) else r


def as_comparison(r: Any) -> Comparison:
    """``r`` itself, or the comparison saved at the path ``r``; ``ReportSchemaError`` for
    any other record, ``FileNotFoundError`` for a missing file."""
    return comparison_only(loaded(r))


def diff_any(old: Any, new: Any, *, force: bool = False) -> Diff | LedgerDiff:
    """``jitmagic.diff``: two ledgers give their ``LedgerDiff``, two comparisons their ``Diff``."""
    old, new = loaded(old), loaded(new)
    if isinstance(old, Ledger) and isinstance(new, Ledger):
        return ledger_diff(old, new)
    if isinstance(old, Ledger) or isinstance(new, Ledger):
        raise ReportSchemaError("diff compares two ledgers or two comparisons, not a ledger "
                                "with a comparison")
    return diff(old, new, force=force)

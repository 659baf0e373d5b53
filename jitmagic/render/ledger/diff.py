"""Two ledgers side by side in words (``jitmagic diff OLD NEW``)."""

from __future__ import annotations

from ...model.ledger.diff import LedgerDiff
from ..format import fmt_s
from .words import CLOCK
from .words import MAX_ROWS
from .words import clip
from .words import clip_place
from .words import columns
from .words import defined_place
from .words import plural


def diff_text(d: LedgerDiff) -> str:
    """Two ledgers' compiles per function, OLD → NEW, the functions that recompile more first."""
    head = ("function", "defined at", "compiles", "again", "seconds (wall, one run each)")
    rows = sorted(d.rows, key=lambda r: (-(r.new_again - r.old_again), r.function))
    body = [(clip(r.function), clip_place(defined_place(r.defined_at, d.new if r.new_compiles
                                                        else d.old, r.eager)),
             f"{r.old_compiles} → {r.new_compiles}", f"{r.old_again} → {r.new_again}",
             f"{_seconds(r.old_seconds, r.old_compiles)} → "
             f"{_seconds(r.new_seconds, r.new_compiles)}") for r in rows[:MAX_ROWS]]
    lines = [f"jitwatch diff: {d.old.again} → {d.new.again} compiles again, "
             f"{d.old.count} → {d.new.count} compiles in all, "
             f"{fmt_s(d.old.seconds)} → {fmt_s(d.new.seconds)} compiling ({CLOCK})"]
    worse = d.more_again
    lines.append(f"NEW compiles again more often in {len(worse)} function"
                 f"{'' if len(worse) == 1 else 's'}: "
                 + ", ".join(f"`{clip(r.function)}`" for r in worse) if worse else
                 "No function compiles again more often in NEW.")
    lines.append("")
    lines += columns(head, body, left=2)
    if len(rows) > MAX_ROWS:
        lines.append(f"… and {plural(len(rows) - MAX_ROWS, 'more function')}")
    return "\n".join(lines)


def _seconds(s: float, compiles: int) -> str:
    """Seconds of a function's compiles; ``—`` where it did not compile."""
    return fmt_s(s) if compiles else "—"

"""Two ledgers side by side: per function, its compiles, how many were compiling again,
and their seconds (one run's each: shown, never judged), OLD against NEW."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..shown import Shown
from . import Ledger
from .rows import FunctionRow


@dataclass(frozen=True, slots=True)
class FunctionChange:
    function: str
    defined_at: str | None
    old_compiles: int
    new_compiles: int
    old_again: int
    new_again: int
    old_seconds: float
    new_seconds: float
    #: Whether these are eager ops (jnp calls outside any jit), which no gate counts.
    eager: bool = False


@dataclass(frozen=True, eq=False)
class LedgerDiff(Shown):
    """NEW's compiles against OLD's, one row per function either ledger has."""

    old: Ledger
    new: Ledger
    rows: tuple[FunctionChange, ...]

    @property
    def more_again(self) -> tuple[FunctionChange, ...]:
        """The functions NEW compiled again more often than OLD did (eager ops left out)."""
        return tuple(r for r in self.rows if r.new_again > r.old_again and not r.eager)


def ledger_diff(old: Ledger, new: Ledger) -> LedgerDiff:
    """Each function of either ledger, matched by name where each has one of that name,
    else by name and where it was defined."""
    a, b = old.functions(), new.functions()
    in_a, in_b = Counter(r.function for r in a), Counter(r.function for r in b)
    once = {n for n in (*in_a, *in_b) if in_a[n] <= 1 and in_b[n] <= 1}

    def key(r: FunctionRow) -> tuple[str, str | None]:
        return (r.function, None) if r.function in once else (r.function, r.defined_at)

    by_old, by_new = {key(r): r for r in a}, {key(r): r for r in b}
    rows = []
    for k in dict.fromkeys([*by_new, *by_old]):
        x, y = by_old.get(k), by_new.get(k)
        either = y or x
        rows.append(FunctionChange(k[0], either.defined_at if either else None,
                                   x.compiles if x else 0, y.compiles if y else 0,
                                   x.again if x else 0, y.again if y else 0,
                                   x.seconds if x else 0.0, y.seconds if y else 0.0,
                                   eager=bool(either and either.eager)))
    return LedgerDiff(old, new, tuple(rows))

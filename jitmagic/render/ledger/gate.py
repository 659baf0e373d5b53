"""A ledger's gate in words: what it allowed, and each way the run broke it."""

from __future__ import annotations

from collections.abc import Iterable

from ...model.ledger import Broken
from ...model.ledger import Ledger
from ...model.ledger.compiles import EAGER
from ...model.ledger.compiles import FIRST
from ...model.ledger.compiles import NEW_FUNCTION
from ...model.ledger.compiles import OTHER
from ...model.ledger.compiles import UNEXPLAINED
from ...model.saved.schema import printable
from .words import KIND_WORDS
from .words import MAX_LINES
from .words import place
from .words import plural


def gate_lines(ledger: Ledger) -> Iterable[str]:
    if not ledger.gate.any:
        return
    if ledger.error or ledger.stopped:  # checked only on a run that ended as written
        yield ""
        yield (f"Gate not checked: the run {'raised' if ledger.error else 'was stopped'} "
               "before its end, and the gate judges a run that ends as written.")
        return
    broken = ledger.over_gate()
    yield ""
    yield gate_sentence(ledger, broken)
    for sentence in gate_failures(ledger):
        yield f"  {sentence}"


def gate_sentence(ledger: Ledger, broken: list[Broken]) -> str:
    """The gate in one plain sentence: what was allowed, what happened, what to do (the
    sentences of each way it broke follow it)."""
    allowed = _allowed(ledger)
    if not broken:
        return f"Gate held: allowed {allowed}; {_held(ledger)}."
    over = [f"`{printable(b.function)}` compiled {plural(b.compiles, 'time')}"
            for b in broken if b.function is not None]
    named = over[:MAX_LINES] + ([f"{len(over) - MAX_LINES} more functions did"]
                                if len(over) > MAX_LINES else [])
    named += [f"{ledger.count} compiles ran" for b in broken if b.function is None]
    todo = ("see why each compiled again above, or raise the limit" if over
            else "compile fewer programs, or raise the limit")
    return f"Gate FAILED: allowed {allowed}, but {' and '.join(named)}; {todo}."


def _allowed(ledger: Ledger) -> str:
    """What the gate allowed: ``1 compile per function (eager ops not counted) and 4
    compiles in all``."""
    parts = []
    if (warm := ledger.gate.fail_after_warmup) is not None:
        parts.append(f"{plural(warm, 'compile')} per function (eager ops not counted)")
    if (cap := ledger.gate.max_compiles) is not None:
        parts.append(f"{plural(cap, 'compile')} in all")
    return " and ".join(parts)


def _held(ledger: Ledger) -> str:
    """What happened within a gate that held: the most any function compiled, the total."""
    parts = []
    if ledger.gate.fail_after_warmup is not None:
        most = max((ledger.gated(r) for r in ledger.functions() if not r.eager), default=0)
        parts.append(f"no function compiled more than {plural(most, 'time')}" if most
                     else "no function compiled")
    if ledger.gate.max_compiles is not None:
        parts.append(f"{plural(ledger.count, 'compile')} ran")
    return " and ".join(parts)


def gate_failures(ledger: Ledger) -> list[str]:
    """One sentence for each way the run broke its gate."""
    return [_broken_words(b, ledger) for b in ledger.over_gate()]


def _broken_words(b: Broken, ledger: Ledger) -> str:
    if b.function is None:
        rows = sorted(ledger.functions(), key=lambda r: -r.compiles)
        named = ", ".join(f"`{printable(r.function)}` {r.compiles}" for r in rows[:MAX_LINES])
        rest = sum(r.compiles for r in rows[MAX_LINES:])
        named += f", {rest} more" if rest else ""
        top = f": {named}" if rows else ""
        return (f"{b.compiles} compiles, more than the {b.allowed} allowed "
                f"(max_compiles={b.allowed}){top}")
    if b.first_late is None:  # counted past the kept compiles: no reason to name
        return (f"`{printable(b.function)}` compiled {plural(b.compiles, 'time')} here, "
                f"{b.compiles - b.allowed} after its warm-up of {b.allowed}")
    reason = b.first_late.reason
    said = {FIRST: "for its first compile", UNEXPLAINED: "with no reason from JAX",
            NEW_FUNCTION: "for a new function object", EAGER: "for an eager op",
            OTHER: "for another reason (JAX's words in the ledger)"}.get(
        reason.kind, f"for a {KIND_WORDS[reason.kind]}" + (
            "" if reason.argument is None else f" of `{printable(reason.argument)}`"))
    site = place(b.first_late.call_site, ledger)
    where = f" at {printable(site)}" if site else ""
    late = b.compiles - b.allowed
    return (f"`{printable(b.function)}` compiled {plural(b.compiles, 'time')} here, {late} after "
            f"its warm-up of {b.allowed}: the first of them {said}{where}")

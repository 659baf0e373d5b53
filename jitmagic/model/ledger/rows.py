"""A ledger's compiles read per function, per reason and per line of the user's code:
the rows its renderers show, derived from the compiles on demand, never saved."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from .compiles import FIRST
from .compiles import STAGES
from .compiles import Compile
from .compiles import Noted
from .compiles import Omitted


@dataclass(frozen=True, slots=True)
class ReasonRow:
    """One distinct reason of one function: how often, what it cost, where from."""

    kind: str
    argument: str | None
    #: The values it went through, in order of first appearance (``f32[3]``, ``f32[4]``).
    values: tuple[str, ...]
    count: int
    seconds: float
    #: The user's lines that made these calls (``file:line``, its text, how often), most
    #: frequent first.
    lines: tuple[tuple[str, str | None, int], ...]
    text: str
    #: The threads these compiles ran on.
    threads: tuple[str, ...] = ()
    #: The most other arguments that differed at once, beside ``argument``.
    more: int = 0
    #: The other differences JAX named beside it, each with the values it went through.
    also: tuple[AlsoRow, ...] = ()
    #: Each compile's (before, after), in order, once each: ``values`` read as a history
    #: only where one pair's after is the next one's before (:func:`histories`).
    pairs: tuple[tuple[str, str], ...] = ()
    #: What the watch knew where JAX said nothing (:class:`~.compiles.Noted`).
    noted: Noted | None = None


@dataclass(frozen=True, slots=True)
class AlsoRow:
    """Another difference JAX named beside a reason (an NNX step's ``train`` passed by
    keyword, then by position: the positional tuple grew, and the keywords lost
    ``train``): its kind, argument and the values it went through."""

    kind: str
    argument: str | None
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FunctionRow:
    """One jitted function (by name and where it was defined): its compiles and reasons."""

    function: str
    defined_at: str | None
    compiles: int
    again: int
    seconds: float
    stage_seconds: dict[str, float]
    reasons: tuple[ReasonRow, ...]
    #: The first compile's call site and line (for the ``%jitcompare`` bridge).
    call_site: str | None
    call_text: str | None
    eager: bool
    #: Of its compiles, how many are only counted (past
    #: :data:`~jitmagic.model.ledger.MAX_KEPT`): not in ``stage_seconds`` nor ``reasons``.
    omitted: int = 0


@dataclass(frozen=True, slots=True)
class EagerLine:
    """One line of the user's code whose eager operations compiled again: which, how
    often, and their seconds (``x - x.mean(0)`` compiles ``_mean`` and ``subtract``)."""

    call_site: str | None
    call_text: str | None
    functions: tuple[str, ...]
    count: int
    seconds: float
    #: The functions JAX said were made anew on this line, each pass (an eager
    #: ``lax.scan``'s body defined in the loop); empty: new shapes or dtypes.
    made_anew: tuple[str, ...] = ()


def with_omitted(rows: list[FunctionRow], omitted: tuple[Omitted, ...]) -> list[FunctionRow]:
    """``rows`` with the compiles past :data:`~jitmagic.model.ledger.MAX_KEPT` counted in,
    each to the first row of its function's name (they were counted, not kept, so by name only)."""
    rows = list(rows)
    for o in omitted:
        i = next((i for i, r in enumerate(rows) if r.function == o.function), None)
        if i is None:
            rows.append(FunctionRow(o.function, None, o.count, o.again, o.seconds, {}, (),
                                    None, None, eager=False, omitted=o.count))
            continue
        r = rows[i]
        rows[i] = dataclasses.replace(r, compiles=r.compiles + o.count,
                                      again=r.again + o.again, seconds=r.seconds + o.seconds,
                                      omitted=o.count)
    return rows


def function_row(cs: list[Compile]) -> FunctionRow:
    first = cs[0]
    by_reason: dict[tuple[str, str | None], list[Compile]] = {}
    for c in cs:
        by_reason.setdefault((c.reason.kind, c.reason.argument), []).append(c)
    reasons = sorted((reason_row(group) for group in by_reason.values()),
                     key=lambda r: (r.kind == FIRST, -r.seconds))
    return FunctionRow(first.function, first.defined_at, len(cs),
                       sum(c.reason.kind != FIRST for c in cs), sum(c.seconds for c in cs),
                       {s: sum(getattr(c, s) or 0.0 for c in cs) for s in STAGES
                        if any(getattr(c, s) is not None for c in cs)},  # no event: not 0
                       tuple(reasons), first.call_site, first.call_text,
                       eager=all(c.eager for c in cs))


def reason_row(cs: list[Compile]) -> ReasonRow:
    """The row of compiles ``cs`` that share one reason (one compile: the live line's)."""
    values: dict[str, None] = {}
    for c in cs:
        for v in (c.reason.before, c.reason.after):
            if v is not None:
                values.setdefault(v, None)
    lines = Counter(c.call_site for c in cs if c.call_site)
    texts = {c.call_site: c.call_text for c in cs}
    pairs: dict[tuple[str, str], None] = {}
    for c in cs:
        if c.reason.before is not None and c.reason.after is not None:
            pairs.setdefault((c.reason.before, c.reason.after), None)
    also: dict[tuple[str, str | None], dict[str, None]] = {}
    for c in cs:
        for change in c.reason.also:
            seen = also.setdefault((change.kind, change.argument), {})
            for v in (change.before, change.after):
                if v is not None:
                    seen.setdefault(v, None)
    return ReasonRow(cs[0].reason.kind, cs[0].reason.argument, tuple(values), len(cs),
                     sum(c.seconds for c in cs),
                     tuple((site, texts.get(site), n) for site, n in lines.most_common()),
                     cs[0].reason.text, tuple(sorted({c.thread for c in cs})),
                     max(c.reason.more for c in cs),
                     tuple(AlsoRow(kind, arg, tuple(vs)) for (kind, arg), vs in also.items()),
                     tuple(pairs), cs[0].reason.noted)


def histories(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, ...]]:
    """The (before, after) pairs of a reason's compiles joined into the histories they
    are: a pair continues a history only where its before is that history's last value
    (``f32[3] → f32[4]`` and ``f32[4]({}) → f32[2,2]({})`` are two, not one)."""
    found: list[list[str]] = []
    for before, after in pairs:
        run = next((h for h in found if h[-1] == before and after not in h), None)
        if run is not None:
            run.append(after)
        else:
            found.append([before, after])
    return [tuple(h) for h in found]

"""A ledger's compiles per function, per reason and per line: derived, never saved."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .compiles import FIRST, STAGES, Compile, Noted, Omitted


@dataclass(frozen=True, slots=True)
class ReasonRow:
    """One distinct reason of one function: how often, what it cost, where from."""

    kind: str
    argument: str | None
    values: tuple[str, ...]  # the values it went through, in order of first appearance
    count: int
    seconds: float
    #: The user's lines that made these calls (``file:line``, its text, how often).
    lines: tuple[tuple[str, str | None, int], ...]
    text: str
    threads: tuple[str, ...] = ()
    more: int = 0  # the most other arguments that differed at once
    also: tuple[AlsoRow, ...] = ()  # the other differences JAX named beside it
    #: Each compile's (before, after), in order, once each (:func:`histories`).
    pairs: tuple[tuple[str, str], ...] = ()
    noted: Noted | None = None


@dataclass(frozen=True, slots=True)
class AlsoRow:
    """Another difference JAX named beside a reason: its kind, argument and values."""

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
    call_site: str | None
    call_text: str | None
    eager: bool
    omitted: int = 0


@dataclass(frozen=True, slots=True)
class EagerLine:
    """One line of the user's code whose eager operations compiled again."""

    call_site: str | None
    call_text: str | None
    functions: tuple[str, ...]
    count: int
    seconds: float
    #: The functions JAX said were made anew on this line (empty: new shapes or dtypes).
    made_anew: tuple[str, ...] = ()


def with_omitted(rows: list[FunctionRow], omitted: tuple[Omitted, ...]) -> list[FunctionRow]:
    """``rows`` with the compiles past ``MAX_KEPT`` counted in."""
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
    lines = Counter(c.call_site for c in cs if c.call_site)
    texts = {c.call_site: c.call_text for c in cs}
    pairs = dict.fromkeys((c.reason.before, c.reason.after) for c in cs
                          if c.reason.before is not None and c.reason.after is not None)
    also: dict[tuple[str, str | None], dict[str, None]] = {}
    for change in (a for c in cs for a in c.reason.also):
        also.setdefault((change.kind, change.argument), {}).update(_values([change]))
    return ReasonRow(cs[0].reason.kind, cs[0].reason.argument,
                     tuple(_values(c.reason for c in cs)), len(cs),
                     sum(c.seconds for c in cs),
                     tuple((site, texts.get(site), n) for site, n in lines.most_common()),
                     cs[0].reason.text, tuple(sorted({c.thread for c in cs})),
                     max(c.reason.more for c in cs),
                     tuple(AlsoRow(kind, arg, tuple(vs)) for (kind, arg), vs in also.items()),
                     tuple(pairs), cs[0].reason.noted)


def _values(changes: Iterable[Any]) -> dict[str, None]:
    """The before and after values of ``changes``, once each, in order."""
    return dict.fromkeys(v for c in changes for v in (c.before, c.after) if v is not None)


def histories(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, ...]]:
    """The (before, after) pairs of a reason's compiles joined into histories."""
    found: list[list[str]] = []
    for before, after in pairs:
        run = next((h for h in found if h[-1] == before and after not in h), None)
        if run is not None:
            run.append(after)
        else:
            found.append([before, after])
    return [tuple(h) for h in found]

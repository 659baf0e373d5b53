"""Program size by source line: which lines of the user's code build the program.

One :class:`LineTable` per variant (flat, nested) holds a row per source line
of the user's code (the cell, its helpers, the user's own modules), keyed by
``(file, line)``; :class:`Lines` holds both and derives the hints from their
numbers. Standard library only: the counting lives in :mod:`jitmagic.measure.lines`,
the presentation in :mod:`jitmagic.render.lines` (reached through
:mod:`jitmagic.render.bundle`, like every record's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .schema import ReportSchemaError
from .shown import Shown
from .stats import json_number

#: The text of a line whose source cannot be found (``exec`` of a string, C code).
SOURCE_UNAVAILABLE = "(source not available)"
#: A line that ran at least this many times per call of its function while
#: tracing, and built at least ``LOOP_SHARE`` of the program, is an unrolled loop.
LOOP_HITS_PER_CALL = 8
LOOP_SHARE = 0.5
#: A helper traced at least twice whose lines own this share of the program.
HELPER_SHARE = 0.25


@dataclass(frozen=True, slots=True)
class LineRow:
    """What one source line cost in one variant's cold trace and lowering."""

    file: str
    line: int
    text: str
    hits: int = 0
    eqns_own: int = 0
    eqns_inclusive: int = 0
    hlo_ops: int = 0
    trace_s: float = 0.0

    @property
    def key(self) -> tuple[str, int]:
        return self.file, self.line

    @property
    def costs(self) -> bool:
        """Whether the line did anything at all during the trace."""
        return bool(self.hits or self.eqns_inclusive or self.hlo_ops)

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "text": self.text, "hits": self.hits,
                "eqns_own": self.eqns_own, "eqns_inclusive": self.eqns_inclusive,
                "hlo_ops": self.hlo_ops, "trace_s": json_number(self.trace_s)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LineRow:
        trace_s = d.get("trace_s")
        return cls(str(d["file"]), int(d["line"]), str(d.get("text", "")),
                   int(d.get("hits", 0)), int(d.get("eqns_own", 0)),
                   int(d.get("eqns_inclusive", 0)), int(d.get("hlo_ops", 0)),
                   math.nan if trace_s is None else float(trace_s))


@dataclass(frozen=True, slots=True)
class FunctionSpan:
    """A user function (or generator expression, lambda ...) the trace entered."""

    name: str
    file: str
    first_line: int
    last_line: int
    calls: int = 0  # fresh calls while tracing (a generator's resumptions not counted)
    #: The helper's name as ``--nest`` takes it (``mylayers.dense``); "" where unknown.
    helper: str = ""

    @property
    def is_helper_like(self) -> bool:
        """A named function (not ``<genexpr>``, ``<lambda>``, ``<listcomp>`` ...)."""
        return not self.name.rsplit(".", 1)[-1].startswith("<")

    def holds(self, row: LineRow) -> bool:
        return row.file == self.file and self.first_line <= row.line <= self.last_line

    def to_dict(self) -> dict[str, Any]:
        d = {"name": self.name, "file": self.file, "first_line": self.first_line,
             "last_line": self.last_line, "calls": self.calls}
        return d | ({"helper": self.helper} if self.helper else {})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FunctionSpan:
        return cls(str(d["name"]), str(d["file"]), int(d["first_line"]),
                   int(d["last_line"]), int(d.get("calls", 0)), str(d.get("helper", "")))


@dataclass(frozen=True)
class LineTable:
    """One variant's rows, in file then line order, and the functions they belong to."""

    variant: str
    rows: tuple[LineRow, ...]
    functions: tuple[FunctionSpan, ...] = ()
    entry: str = ""

    @property
    def total_eqns(self) -> int:
        """Equations in the program (each counted once, on its innermost user line)."""
        return sum(r.eqns_own for r in self.rows)

    @property
    def total_hlo_ops(self) -> int:
        return sum(r.hlo_ops for r in self.rows)

    def row(self, file: str, line: int) -> LineRow | None:
        return next((r for r in self.rows if r.key == (file, line)), None)

    def calls_of(self, row: LineRow) -> int:
        """Fresh calls of the innermost named function holding ``row`` (1 if none)."""
        holding = [f for f in self.functions if f.holds(row) and f.is_helper_like]
        if not holding:
            return 1
        return max(1, min(holding, key=lambda f: f.last_line - f.first_line).calls)

    def hints(self) -> list[str]:
        """Advice that follows from the numbers: unrolled loops, helpers traced per call."""
        return [h for h in (self._loop_hint(), *self._helper_hints()) if h]

    def _loop_hint(self) -> str | None:
        total = self.total_eqns
        if not total:
            return None
        # The line that itself builds the program (its own equations) is the loop to
        # rewrite; a loop whose body only calls a helper is found by its inclusive count.
        for built in (lambda r: r.eqns_own, lambda r: r.eqns_inclusive):
            loops = [r for r in self.rows
                     if r.hits >= LOOP_HITS_PER_CALL * self.calls_of(r)
                     and built(r) >= LOOP_SHARE * total]
            if loops:
                break
        else:
            return None
        r = max(loops, key=lambda r: (built(r), r.hits))
        share = min(1.0, built(r) / total)
        return (f"line {r.line} ran {r.hits:,} times while tracing and built {share:.0%} "
                f"of the program: a Python loop unrolls into the program; `jax.lax.scan` or "
                f"`jax.lax.fori_loop` traces the body once")

    def _helper_hints(self) -> list[str]:
        total = self.total_eqns
        out = []
        for f in self.functions:
            if f.calls < 2 or not f.is_helper_like or f.name == self.entry or not total:
                continue
            owned = sum(r.eqns_own for r in self.rows if f.holds(r))
            if owned >= HELPER_SHARE * total:
                name = f.helper or f.name.rsplit(".", 1)[-1]
                out.append(f"`{name}` was traced {f.calls:,} times and its lines built "
                           f"{owned / total:.0%} of the program: each call is inlined again; "
                           f"nesting it (`--nest {name}`) traces it once")
        return out

    def to_dict(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.rows]


@dataclass(frozen=True)
class Lines(Shown):
    """Per-line program size of one entry function, flat and nested side by side."""

    entry: str
    tables: dict[str, LineTable] = field(default_factory=dict)

    @property
    def flat(self) -> LineTable:
        return self.tables["flat"]

    @property
    def nested(self) -> LineTable:
        return self.tables["nested"]

    def summary(self) -> str:
        return f"<Lines {self.entry}: {', '.join(self.tables)}>"

    def hints(self) -> list[str]:
        """The flat variant's hints: what the plain ``jax.jit(f)`` program suffers from."""
        return self.flat.hints() if "flat" in self.tables else []

    def to_dict(self) -> dict[str, Any]:
        """``{"flat": [row...], "nested": [row...]}`` plus the entry and function spans."""
        d: dict[str, Any] = {name: t.to_dict() for name, t in self.tables.items()}
        d["entry"] = self.entry
        d["functions"] = {name: [f.to_dict() for f in t.functions]
                          for name, t in self.tables.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Lines:
        if not isinstance(d, dict) or not any(k in d for k in ("flat", "nested")):
            raise ValueError("a lines table is a dict with 'flat' and/or 'nested' row lists")
        entry = str(d.get("entry", ""))
        spans = d.get("functions", {})
        tables: dict[str, LineTable] = {
            name: LineTable(name, tuple(LineRow.from_dict(r) for r in d[name]),
                            tuple(FunctionSpan.from_dict(f) for f in spans.get(name, ())),
                            entry)
            for name in ("flat", "nested") if name in d
        }
        return cls(entry, tables)


def checked_lines(d: Any, where: str) -> Lines:
    """``Lines.from_dict`` for a report someone else wrote: any bad field is a
    ``ReportSchemaError`` naming where it is."""
    try:
        return Lines.from_dict(d)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise ReportSchemaError(f"{where}: not a per-line table ({exc})") from None

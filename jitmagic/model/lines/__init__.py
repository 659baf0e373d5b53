"""Program size by source line: one :class:`LineTable` per variant, held by :class:`Lines`
(saved on its own under :data:`SCHEMA`); a column not measured is None, never zero."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from ..notes import Noted, read_notes, said_in
from ..saved import schema
from ..saved.schema import fail
from ..shown import Shown, renderer
from .rows import FunctionSpan, LineRow, LoopCall, LoopSpan, loop_span

__all__ = ["READABLE", "SCHEMA", "FunctionSpan", "LineRow", "LineTable", "Lines", "LoopCall",
           "LoopSpan"]

#: The schema of a saved ``Lines`` record (``jitmagic.save(jitmagic.lines(f, x), path)``).
SCHEMA = "jitmagic.lines/2"
#: The schemas :meth:`Lines.from_dict` reads (/1 saved each table's notes as sentences).
READABLE = ("jitmagic.lines/1", SCHEMA)
#: A line run this often per call while tracing, building ``LOOP_SHARE``, is an unrolled loop.
LOOP_HITS_PER_CALL = 8
LOOP_SHARE = 0.5
#: A helper traced at least twice whose lines own this share of the program.
HELPER_SHARE = 0.25
#: A line whose own equations read at least this many bytes of array constants.
CONSTANT_BYTES = 2**20


@dataclass(frozen=True)
class LineTable:
    """One variant's rows in file then line order, their functions, and their Python loops."""

    variant: str
    rows: tuple[LineRow, ...]
    functions: tuple[FunctionSpan, ...] = ()
    entry: str = ""
    noted: tuple[Noted, ...] = ()
    loops: tuple[LoopSpan, ...] = ()
    #: How a file is named to the reader where its path says little (``Cell In[12]``).
    labels: dict[str, str] = field(default_factory=dict, compare=False)
    #: (count, bytes) of every array constant the program reads; None: not counted.
    constants: tuple[int, int] | None = None
    #: The JAX loops the program holds, by the user line that calls each.
    loop_calls: tuple[LoopCall, ...] = ()

    notes = said_in("noted")

    def label(self, file: str) -> str:
        """``file`` as the reader knows it."""
        return self.labels.get(file, file)

    @property
    def total_eqns(self) -> int:
        """Equations in the program (each counted once, on its innermost user line)."""
        return sum(r.eqns_own for r in self.rows)

    @property
    def total_hlo_ops(self) -> int:
        return sum(r.hlo_ops for r in self.rows)

    @property
    def has_constants(self) -> bool:
        """Whether any line reads an array constant (counted, and not none)."""
        return any(r.const_bytes for r in self.rows)

    @property
    def has_hits(self) -> bool:
        """Whether line hits (and function calls) were measured."""
        return any(r.hits is not None for r in self.rows)

    @property
    def has_time(self) -> bool:
        """Whether Python time per line was measured."""
        return any(r.trace_s is not None for r in self.rows)

    def row(self, file: str, line: int) -> LineRow | None:
        return next((r for r in self.rows if r.key == (file, line)), None)

    def calls_of(self, row: LineRow) -> int:
        """Fresh calls of the innermost named function holding ``row`` (1 if none)."""
        holding = [f for f in self.functions if f.holds(row) and f.is_helper_like]
        if not holding:
            return 1
        return max(1, min(holding, key=lambda f: f.last_line - f.first_line).calls or 1)

    def hints(self, nested: Collection[str] = ()) -> list[str]:
        """Advice that follows from the numbers, in words (``nested``: the helpers nested)."""
        said = renderer("hints", self)
        return said(self, nested) if said else []

    def loop_hint(self) -> str | None:
        """The Python loop that builds most of the program, and what to write instead."""
        said = renderer("loop hint", self)
        return said(self) if said else None

    def unrolled(self) -> list[LoopCall]:
        """The scans and fori_loops written with ``unroll`` above 1, the biggest first."""
        return sorted((x for x in self.loop_calls if x.copies > 1),
                      key=lambda x: (-x.body_eqns * x.copies, x.line))

    def loop_line(self, r: LineRow) -> int | None:
        """The line of the innermost Python loop that holds ``r`` (None: none)."""
        held = [x for x in self.loops if x.holds(r)]
        return max(x.first_line for x in held) if held else None

    def python_loop(self) -> tuple[LineRow, float] | None:
        """The Python loop line that builds :data:`LOOP_SHARE` of the program, and that share."""
        total = self.total_eqns
        if not total:
            return None
        calls = {x.key for x in self.loop_calls}
        if self.has_hits:
            def looped(r: LineRow) -> bool:
                return (r.hits or 0) >= LOOP_HITS_PER_CALL * self.calls_of(r) \
                    and r.key not in calls
        else:  # no hits: a line inside a Python loop of the source
            def looped(r: LineRow) -> bool:
                return any(loop.holds(r) for loop in self.loops) and r.key not in calls
        # The line that builds the program itself, else one that calls a helper that does.
        for built in (lambda r: r.eqns_own, lambda r: r.unrolled_eqns):
            loops = [r for r in self.rows if built(r) >= LOOP_SHARE * total and looped(r)]
            if loops:
                r = max(loops, key=lambda r: (built(r), r.hits or 0))
                return r, min(1.0, built(r) / total)
        return None

    def to_dict(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.rows]


@dataclass(frozen=True)
class Lines(Shown):
    """Per-line program size of one entry function, flat and nested side by side."""

    entry: str
    tables: dict[str, LineTable] = field(default_factory=dict)
    #: Why counting stopped before every variant's table was made (PARTIAL).
    stopped: str | None = None

    @property
    def flat(self) -> LineTable:
        return self.tables["flat"]

    def labelled(self, labels: dict[str, str]) -> Lines:
        """These tables with ``labels`` naming their files (:attr:`LineTable.labels`)."""
        return dataclasses.replace(self, tables={
            name: dataclasses.replace(t, labels={**t.labels, **labels})
            for name, t in self.tables.items()})

    @property
    def labels(self) -> dict[str, str]:
        return {k: v for t in self.tables.values() for k, v in t.labels.items()}

    @property
    def nested(self) -> LineTable:
        return self.tables["nested"]

    def summary(self) -> str:
        return f"<Lines {self.entry}: {', '.join(self.tables)}>"

    def __repr__(self) -> str:
        return self.summary()

    def hints(self, nested: Collection[str] = ()) -> list[str]:
        """The flat variant's hints (:meth:`LineTable.hints`)."""
        return self.flat.hints(nested) if "flat" in self.tables else []

    def to_dict(self) -> dict[str, Any]:
        """``{"flat": [row...], "nested": [row...]}`` and each table's other parts."""
        d: dict[str, Any] = {"schema": SCHEMA, **{n: t.to_dict() for n, t in self.tables.items()},
                             "entry": self.entry, "functions": self._each("functions", None)}
        d |= {key: self._each(attr) for key, attr in (("notes", "noted"), ("loops", "loops"),
                                                       ("loop_calls", "loop_calls"))}
        d["constants"] = self._each("constants", lambda c: c is not None)
        d |= {"labels": dict(self.labels)} if self.labels else {}
        return d | ({"stopped": self.stopped} if self.stopped else {})

    def _each(self, attr: str, keep: Callable[[Any], bool] | None = bool) -> dict[str, Any]:
        """Each table's ``attr`` as saved, by variant (those ``keep`` refuses left out)."""
        got = {n: getattr(t, attr) for n, t in self.tables.items()}
        return {n: schema.encode(v) for n, v in got.items() if keep is None or keep(v)}

    @classmethod
    def from_dict(cls, d: Any, where: str = "lines") -> Lines:
        """The tables saved as ``d``, every field checked."""
        got = schema.fields(d, _FIELDS, where)
        if got["schema"] not in READABLE:
            raise schema.ReportSchemaError(f"{where}: cannot read a per-line table with schema "
                                    f"{schema.clipped(got['schema'])!r}: this jitmagic reads "
                                    f"{' or '.join(map(repr, READABLE))}")
        if not got["stopped"] and got["flat"] is None and got["nested"] is None:
            fail(where, "a per-line table ('flat' and/or 'nested' row lists)", "neither")
        tables = {name: _table(name, got) for name in ("flat", "nested")
                  if got[name] is not None}
        lines = cls(got["entry"], tables, got["stopped"] or None)
        return lines.labelled(got["labels"]) if got["labels"] else lines


def _table(name: str, got: dict[str, Any]) -> LineTable:
    """Variant ``name``'s table from the decoded fields of a saved ``Lines``."""
    return LineTable(name, got[name], got["functions"].get(name, ()), got["entry"],
                     got["notes"].get(name, ()), got["loops"].get(name, ()),
                     constants=got["constants"].get(name),
                     loop_calls=got["loop_calls"].get(name, ()))


#: At most this many rows in one saved table (a big model's can pass ``MAX_LIST``).
MAX_SAVED_ROWS = 10**6

#: A saved ``Lines``'s fields: a row list per variant, the other parts keyed by variant.
_FIELDS: tuple[schema.Field, ...] = (
    ("schema", "schema", schema.text, SCHEMA),
    ("flat", "flat", schema.items(LineRow.from_dict, MAX_SAVED_ROWS), None),
    ("nested", "nested", schema.items(LineRow.from_dict, MAX_SAVED_ROWS), None),
    ("entry", "entry", schema.text, ""),
    ("stopped", "stopped", schema.optional(schema.text), None),
    ("functions", "functions", schema.mapping(schema.items(FunctionSpan.from_dict)), {}),
    ("notes", "notes", schema.mapping(read_notes), {}),
    ("loops", "loops", schema.mapping(schema.items(loop_span)), {}),
    ("loop_calls", "loop_calls", schema.mapping(schema.items(LoopCall.from_list)), {}),
    ("constants", "constants",
     schema.mapping(schema.optional(schema.fixed(schema.count, schema.count))), {}),
    ("labels", "labels", schema.mapping(schema.text), {}),
)


def is_saved_lines(d: Any) -> bool:
    """Whether a saved report's JSON is a ``Lines`` record of its own (of any version)."""
    return isinstance(d, dict) and str(d.get("schema")).startswith(SCHEMA.split("/")[0] + "/")

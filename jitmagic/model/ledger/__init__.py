"""The ledger of a watched run (``%%jitwatch``): every compile while the user's code ran,
with JAX's reason, the rows and gate derived, and two ledgers side by side."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..saved import schema
from ..saved.schema import fail
from ..shown import Shown
from .compiles import (
    FIRST,
    NEW_FUNCTION,
    Compile,
    Noted,
    Omitted,
    first_kept,
    maybe_seconds,
    maybe_text,
    seconds_or_zero,
    text,
)
from .rows import EagerLine, FunctionRow, function_row, with_omitted

SCHEMA = "jitmagic.ledger/1"
#: Compiles kept whole; later ones are only counted, per function.
MAX_KEPT = 2000
#: Stale values kept per run (:class:`Stale`).
MAX_STALE = 50


@dataclass(frozen=True, slots=True)
class Stale(schema.Saved):
    """A Python value a jitted function read at its last trace that changed later, while
    that program stayed in use: calls after it computed with the old value."""

    function: str = schema.saved(text)
    name: str = schema.saved(text)
    scope: str = schema.saved(text)  # ``global`` or ``closure``
    #: The value when traced and at the end of the run, as ``repr`` writes them (clipped).
    traced: str = schema.saved(text)
    now: str = schema.saved(text)
    #: ``file:line`` where the function reads it, and where the function was defined.
    line: str | None = schema.saved(maybe_text, None)
    defined_at: str | None = schema.saved(maybe_text, None)
    #: The user's function that reads it (None: the jitted one), and the inputs' types.
    helper: str | None = schema.saved(maybe_text, None)
    inputs: str | None = schema.saved(maybe_text, None)


@dataclass(frozen=True, slots=True)
class Broken:
    """One way a run broke its gate: a function (None: the run) compiled too often."""

    function: str | None
    compiles: int
    allowed: int
    first_late: Compile | None


@dataclass(frozen=True)
class Gate(schema.Saved):
    """Each function's allowed compiles (its warm-up), and the run's; None: no limit."""

    fail_after_warmup: int | None = schema.saved(schema.optional(schema.count), None)
    max_compiles: int | None = schema.saved(schema.optional(schema.count), None)

    @property
    def any(self) -> bool:
        return self.fail_after_warmup is not None or self.max_compiles is not None


@dataclass(frozen=True, eq=False)
class Ledger(Shown, schema.Saved):
    """Every compile of a watched run, in the order they began, and the run itself."""

    compiles: tuple[Compile, ...]
    wall_s: float  # from the first line of the watched code to its end
    source: str = schema.saved(text, "the cell")  # ``the cell``, a file's name, ``the block``
    #: The file name its code ran under (a cell's), whose lines are shown as ``line N``.
    source_file: str | None = schema.saved(maybe_text, None)
    error: str | None = None  # the exception that ended the run, if any
    stopped: bool = False  # Ctrl-C stopped the run
    omitted: tuple[Omitted, ...] = ()
    gate: Gate = field(default_factory=Gate)
    thread: str = "MainThread"  # the thread that ran the watched code
    #: When (seconds into the run) the watch turned JAX's explanations off; None: never.
    explained_until_s: float | None = None
    jax_version: str | None = None
    created: str | None = None
    #: The values its jitted functions kept from their trace that changed since.
    stale: tuple[Stale, ...] = ()

    FIELDS = (("wall_s", "wall_s", seconds_or_zero, 0.0),
              ("error", "error", maybe_text, None),
              ("stopped", "stopped", schema.flag, False),
              ("jax_version", "jax_version", maybe_text, None),
              ("created", "created", maybe_text, None),
              ("gate", "gate", Gate.from_dict, Gate()),
              ("thread", "thread", text, "MainThread"),
              ("explained_until_s", "explained_until_s", maybe_seconds, None),
              ("compiles", "compiles", schema.items(Compile.from_dict), schema.REQUIRED),
              ("omitted", "omitted", schema.items(Omitted.from_dict), ()),
              ("stale", "stale", first_kept(Stale.from_dict, MAX_STALE), ()))

    @property
    def watched(self) -> tuple[Compile, ...]:
        """The run's compiles: its thread's and those of the threads it started."""
        return tuple(c for c in self.compiles if c.in_run)

    @property
    def other_threads(self) -> tuple[Compile, ...]:
        """Compiles of threads running before the run: shown apart, never counted in."""
        return tuple(c for c in self.compiles if not c.in_run)

    @property
    def count(self) -> int:
        return len(self.watched) + sum(o.count for o in self.omitted)

    @property
    def again(self) -> int:
        """Compiles that were compiling again (every reason but a first compile)."""
        return sum(c.reason.kind != FIRST for c in self.watched) + \
            sum(o.again for o in self.omitted)

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.watched) + sum(o.seconds for o in self.omitted)

    @property
    def again_seconds(self) -> float:
        return sum(c.seconds for c in self.watched if c.reason.kind != FIRST) + \
            sum(o.again_seconds for o in self.omitted)

    def functions(self, compiles: Iterable[Compile] | None = None) -> list[FunctionRow]:
        """One row per function, the costliest first."""
        groups: dict[tuple[str, str | None], list[Compile]] = {}
        for c in self.watched if compiles is None else compiles:
            groups.setdefault(c.key, []).append(c)
        rows = [function_row(cs) for cs in groups.values()]
        if compiles is None:
            rows = with_omitted(rows, self.omitted)
        return sorted(rows, key=lambda r: (-r.seconds, r.function))

    def eager_again(self) -> list[EagerLine]:
        """The eager operations that compiled again, by the user's line, the costliest first."""
        lines: dict[tuple[str | None, bool], list[Compile]] = {}
        for c in self.watched:
            if c.eager and c.reason.kind != FIRST:
                lines.setdefault((c.call_site, c.reason.kind == NEW_FUNCTION), []).append(c)
        found = [EagerLine(site, cs[0].call_text, tuple(dict.fromkeys(c.function for c in cs)),
                           len(cs), sum(c.seconds for c in cs),
                           tuple(dict.fromkeys(c.reason.argument or "?" for c in cs))
                           if anew else ())
                 for (site, anew), cs in lines.items()]
        return sorted(found, key=lambda x: -x.seconds)

    @property
    def cleared(self) -> tuple[Compile, ...]:
        """The compiles after jitmagic's own clearing of JAX's caches (no gate counts them)."""
        return tuple(c for c in self.watched if c.reason.noted is Noted.CLEARED_BY_JITMAGIC)

    def gated(self, row: FunctionRow) -> int:
        """How many of ``row``'s compiles its gate counts (not :attr:`cleared`'s)."""
        return row.compiles - sum(c.key == (row.function, row.defined_at) for c in self.cleared)

    def over_gate(self) -> list[Broken]:
        """Each way the run broke its gate (empty: it held, or there is none)."""
        broken = []
        cap, cleared = self.gate.max_compiles, self.cleared
        if cap is not None and self.count - len(cleared) > cap:
            broken.append(Broken(None, self.count - len(cleared), cap, None))
        warm = self.gate.fail_after_warmup
        if warm is not None:
            for row in self.functions():
                key = (row.function, row.defined_at)
                mine = [c for c in self.watched if c.key == key and c not in cleared]
                compiles = self.gated(row)
                if not row.eager and compiles > warm:
                    late = mine[warm] if warm < len(mine) else None
                    broken.append(Broken(row.function, compiles, warm, late))
        return broken

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, **schema.written(self)}

    @classmethod
    def from_dict(cls, d: Any, where: str = "") -> Ledger:
        """The ledger saved as ``d``, every field checked."""
        check_schema(schema.obj(d, "ledger").get("schema"))
        return super().from_dict(d, where)


def is_saved_ledger(data: Any) -> bool:
    """Whether decoded JSON claims to be a ledger (its schema's kind is ``ledger``)."""
    given = data.get("schema") if isinstance(data, dict) else None
    return isinstance(given, str) and given.startswith("jitmagic.ledger/")


def check_schema(value: Any) -> None:
    """``ReportSchemaError`` for a ledger schema this jitmagic does not read."""
    if value == SCHEMA:
        return
    if schema.newer(value, SCHEMA):
        raise schema.ReportSchemaError(f"written by a newer jitmagic (schema {value!r}): this "
                                       f"jitmagic reads ledgers of schema {SCHEMA!r}; upgrade "
                                       "jitmagic to read it")
    fail("schema", repr(SCHEMA), value)


@dataclass(frozen=True, slots=True)
class FunctionChange:
    """One function of either ledger, OLD and NEW: its compiles, recompiles and seconds."""

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
    """Each function of either ledger, matched by name, else by name and where defined."""
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

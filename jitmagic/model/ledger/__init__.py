"""The ledger of a watched run (``%%jitwatch``, ``jitmagic.watch``): every trace,
lowering and XLA compile that happened while the user's code ran, each with JAX's
reason, and what follows from them.

A :class:`Ledger` stores the raw compiles (each :class:`Compile` with JAX's own seconds
for its stages and the :class:`Reason` it was made for) and derives everything else:
the rows per function, the totals, the answer, and whether a gate
(``fail_after_warmup``, ``max_compiles``) failed. Its seconds are wall seconds, as JAX's
own compile events (``jax.monitoring``) measure them.

A run that compiles thousands of times keeps the first :data:`MAX_KEPT` compiles whole
and only counts the rest (:attr:`Ledger.omitted`), so its memory is bounded.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from ..saved import schema
from ..saved.schema import clipped
from ..saved.schema import fail
from ..shown import Shown

SCHEMA = "jitmagic.ledger/1"

#: Compiles kept whole; later ones are only counted, per function.
MAX_KEPT = 2000
#: Characters of JAX's explanation kept per compile (a pytree's reason can be megabytes).
MAX_TEXT = 2000
#: Stale values kept per run (:class:`Stale`).
MAX_STALE = 50

# What a compile was made for: JAX's reason, sorted into the kinds a user can act on.
FIRST = "first"                  # the function's first compile here: its warm-up
WEAK_TYPE = "weak type"          # an argument's weak type became strong (or back)
SHAPE = "shape"                  # an argument's shape changed
DTYPE = "dtype"                  # an argument's dtype changed
SHARDING = "sharding"            # an argument's sharding or devices changed, not its type
STATIC = "static value"          # a static argument's value changed
NEW_FUNCTION = "new function"    # the same function made anew (a jit or lambda in a loop)
PYTREE = "pytree"                # the arguments' pytree structure changed
CONTEXT = "context"              # a config value or context manager changed
EAGER = "eager op"               # an eager jnp/lax call outside jit, on new shapes or dtypes
UNEXPLAINED = "no reason"        # compiled again, and JAX gave no reason
OTHER = "other"                  # JAX gave a reason of another kind (its text is kept)

KINDS = (FIRST, WEAK_TYPE, SHAPE, DTYPE, STATIC, NEW_FUNCTION, PYTREE, CONTEXT, EAGER,
         UNEXPLAINED, OTHER, SHARDING)
#: The kinds that are compiling *again*: every kind but the first compile.
AGAIN = tuple(k for k in KINDS if k != FIRST)

STAGES = ("trace_s", "lower_s", "compile_s")


#: Other differences kept per compile, beside the first (JAX names every one).
MAX_ALSO = 16


def _kind(d: dict[str, Any], where: str) -> str:
    kind = d.get("kind")
    if kind not in KINDS:
        fail(f"{where}.kind", f"one of {', '.join(KINDS)}", kind)
    return str(kind)


@dataclass(frozen=True, slots=True)
class Change:
    """One difference JAX named between a compile's arguments and the earlier compile's:
    its :data:`KINDS` kind, the argument (``lr``, a pytree path), its value before and
    after."""

    kind: str
    argument: str | None = None
    before: str | None = None
    after: str | None = None

    @classmethod
    def from_dict(cls, d: Any, where: str) -> Change:
        d = schema.obj(d, where)
        return cls(_kind(d, where), *(_opt_str(d.get(k), f"{where}.{k}")
                                      for k in ("argument", "before", "after")))


@dataclass(frozen=True, slots=True)
class Reason:
    """Why one compile happened: its :data:`KINDS` kind, the argument JAX named (``lr``,
    ``[0][1]``), its value before and after, the other differences JAX named beside it,
    and JAX's own words (clipped)."""

    kind: str
    argument: str | None = None
    before: str | None = None
    after: str | None = None
    #: How many other arguments differed as well (``also``'s, and past :data:`MAX_ALSO`).
    more: int = 0
    text: str = ""
    #: The other differences JAX named, in its order (at most :data:`MAX_ALSO`).
    also: tuple[Change, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["also"] = [dataclasses.asdict(c) for c in self.also]  # a list, as JSON reads it
        return d

    @classmethod
    def from_dict(cls, d: Any, where: str) -> Reason:
        d = schema.obj(d, where)
        kind = _kind(d, where)
        said = {k: _opt_str(d.get(k), f"{where}.{k}") for k in ("argument", "before", "after")}
        also = schema.items(schema.obj)(d.get("also", []), f"{where}.also")[:MAX_ALSO]
        return cls(kind, **said, more=schema.count(d.get("more", 0), f"{where}.more"),
                   text=_opt_str(d.get("text", ""), f"{where}.text") or "",
                   also=tuple(Change.from_dict(a, f"{where}.also[{i}]")
                              for i, a in enumerate(also)))


@dataclass(frozen=True, slots=True)
class Compile:
    """One trace (and the lowering and XLA compile that followed it) of one function.

    A stage's seconds are JAX's own event for it (wall time); None where JAX fired no
    event for that stage (a trace that was never lowered, a lowering served from its
    cache)."""

    function: str
    reason: Reason
    #: ``file:line`` where the function was defined, as JAX says (None: not said).
    defined_at: str | None = None
    #: ``file:line`` of the user's code that made the call, and that line's text.
    call_site: str | None = None
    call_text: str | None = None
    thread: str = "MainThread"
    #: Whether it counts as the run's: on the thread that ran the watched code, or on one
    #: started while it ran (a thread running before is shown apart).
    in_run: bool = True
    #: Whether it was an eager operation (a ``jnp``/``lax`` call outside any jit).
    eager: bool = False
    trace_s: float | None = None
    lower_s: float | None = None
    compile_s: float | None = None
    #: Seconds from the start of the watch to the start of this compile's first event.
    at_s: float = 0.0

    @property
    def seconds(self) -> float:
        """Trace, lowering and XLA compile together: what a cache hit would have saved."""
        return sum(getattr(self, s) or 0.0 for s in STAGES)

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.function, self.defined_at)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["reason"] = self.reason.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: Any, where: str) -> Compile:
        d = schema.obj(d, where)
        seconds = {s: _opt_seconds(d.get(s), f"{where}.{s}") for s in STAGES}
        return cls(_str(d.get("function"), f"{where}.function"),
                   Reason.from_dict(d.get("reason"), f"{where}.reason"),
                   defined_at=_opt_str(d.get("defined_at"), f"{where}.defined_at"),
                   call_site=_opt_str(d.get("call_site"), f"{where}.call_site"),
                   call_text=_opt_str(d.get("call_text"), f"{where}.call_text"),
                   thread=_str(d.get("thread", "MainThread"), f"{where}.thread"),
                   in_run=schema.flag(d.get("in_run", True), f"{where}.in_run"),
                   eager=schema.flag(d.get("eager", False), f"{where}.eager"),
                   at_s=_opt_seconds(d.get("at_s"), f"{where}.at_s") or 0.0, **seconds)


@dataclass(frozen=True, slots=True)
class Omitted:
    """The compiles of one function past :data:`MAX_KEPT`: only counted."""

    function: str
    count: int
    seconds: float
    again: int
    again_seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Stale:
    """A Python value a jitted function read when it was last traced (a module's global,
    a value it closed over) that had changed by the end of the run while that compiled
    program stayed in use: jit keeps the value it read at its trace, so calls after the
    change computed with the old one, which neither JAX nor a recompile says."""

    function: str
    name: str
    #: ``global`` or ``closure``.
    scope: str
    #: The value when traced and at the end of the run, as ``repr`` writes them (clipped).
    traced: str
    now: str
    #: ``file:line`` where the function reads it, and where the function was defined.
    line: str | None = None
    defined_at: str | None = None

    @classmethod
    def from_dict(cls, d: Any, where: str) -> Stale:
        d = schema.obj(d, where)
        said = {k: _str(d.get(k), f"{where}.{k}")
                for k in ("function", "name", "scope", "traced", "now")}
        return cls(**said, line=_opt_str(d.get("line"), f"{where}.line"),
                   defined_at=_opt_str(d.get("defined_at"), f"{where}.defined_at"))


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
    #: Of its compiles, how many are only counted (past :data:`MAX_KEPT`): not in
    #: ``stage_seconds`` nor ``reasons``.
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


@dataclass(frozen=True, slots=True)
class Broken:
    """One way a run broke its gate: a function compiled more than its warm-up allows
    (``first_late``: the first compile past it), or, with ``function`` None, the run
    compiled more than ``max_compiles``."""

    function: str | None
    compiles: int
    allowed: int
    first_late: Compile | None


@dataclass(frozen=True)
class Gate:
    """What the run was allowed: each function ``fail_after_warmup`` compiles (its
    warm-up), and ``max_compiles`` compiles in all; None: no limit."""

    fail_after_warmup: int | None = None
    max_compiles: int | None = None

    @property
    def any(self) -> bool:
        return self.fail_after_warmup is not None or self.max_compiles is not None


@dataclass(frozen=True, eq=False)
class Ledger(Shown):
    """Every compile of a watched run, in the order they began, and the run itself."""

    compiles: tuple[Compile, ...]
    #: The run's wall time, from the first line of the watched code to its end.
    wall_s: float
    #: What was watched: ``the cell``, a file's name, ``the block``.
    source: str = "the cell"
    #: The file name its code ran under (a cell's), whose lines are shown as ``line N``.
    source_file: str | None = None
    #: The exception that ended the run (``ZeroDivisionError: division by zero``), if any.
    error: str | None = None
    #: Whether Ctrl-C stopped the run before it ended.
    stopped: bool = False
    omitted: tuple[Omitted, ...] = ()
    gate: Gate = field(default_factory=Gate)
    #: The name of the thread that ran the watched code.
    thread: str = "MainThread"
    #: When (seconds into the run) the watch turned JAX's explanations off, after many
    #: misses; None: it never did.
    explained_until_s: float | None = None
    jax_version: str | None = None
    created: str | None = None
    #: The values its jitted functions kept from their trace that changed since.
    stale: tuple[Stale, ...] = ()

    # -- derived ----------------------------------------------------------------------

    @property
    def watched(self) -> tuple[Compile, ...]:
        """The run's compiles: its thread's and those of the threads it started."""
        return tuple(c for c in self.compiles if c.in_run)

    @property
    def other_threads(self) -> tuple[Compile, ...]:
        """Compiles that threads running before the run made meanwhile: shown apart,
        never counted in."""
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
        rows = [_function_row(cs) for cs in groups.values()]
        if compiles is None:
            rows = _with_omitted(rows, self.omitted)
        return sorted(rows, key=lambda r: (-r.seconds, r.function))

    def eager_again(self) -> list[EagerLine]:
        """The eager operations that compiled again, by the user's line that called them
        (one line often compiles several: ``x - x.mean(0)``), the costliest first."""
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

    def over_gate(self) -> list[Broken]:
        """Each way the run broke its gate (empty: it held, or there is none)."""
        broken = []
        cap = self.gate.max_compiles
        if cap is not None and self.count > cap:
            broken.append(Broken(None, self.count, cap, None))
        warm = self.gate.fail_after_warmup
        if warm is not None:
            for row in self.functions():
                if not row.eager and row.compiles > warm:
                    mine = [c for c in self.watched if c.key == (row.function, row.defined_at)]
                    late = mine[warm] if warm < len(mine) else None
                    broken.append(Broken(row.function, row.compiles, warm, late))
        return broken

    def summary(self) -> str:
        return f"<Ledger: {self.count} compiles, {self.again} again>"

    # -- saving -----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "source": self.source, "source_file": self.source_file,
                "wall_s": self.wall_s,
                "error": self.error, "stopped": self.stopped,
                "jax_version": self.jax_version, "created": self.created,
                "gate": dataclasses.asdict(self.gate), "thread": self.thread,
                "explained_until_s": self.explained_until_s,
                "compiles": [c.to_dict() for c in self.compiles],
                "omitted": [dataclasses.asdict(o) for o in self.omitted],
                "stale": [dataclasses.asdict(v) for v in self.stale]}

    @classmethod
    def from_dict(cls, d: Any) -> Ledger:
        d = schema.obj(d, "ledger")
        if d.get("schema") != SCHEMA:
            fail("schema", repr(SCHEMA), d.get("schema"))
        compiles = schema.items(schema.obj)(d.get("compiles"), "compiles")
        omitted = schema.items(schema.obj)(d.get("omitted", []), "omitted")
        gate = schema.obj(d.get("gate", {}), "gate")
        stale = schema.items(schema.obj)(d.get("stale", []), "stale")[:MAX_STALE]
        return cls(tuple(Compile.from_dict(c, f"compiles[{i}]") for i, c in enumerate(compiles)),
                   wall_s=_opt_seconds(d.get("wall_s"), "wall_s") or 0.0,
                   source=_str(d.get("source", "the cell"), "source"),
                   source_file=_opt_str(d.get("source_file"), "source_file"),
                   error=_opt_str(d.get("error"), "error"),
                   stopped=schema.flag(d.get("stopped", False), "stopped"),
                   omitted=tuple(_omitted(o, f"omitted[{i}]") for i, o in enumerate(omitted)),
                   gate=Gate(*(_opt_count(gate.get(k), f"gate.{k}")
                               for k in ("fail_after_warmup", "max_compiles"))),
                   thread=_str(d.get("thread", "MainThread"), "thread"),
                   explained_until_s=_opt_seconds(d.get("explained_until_s"),
                                                  "explained_until_s"),
                   jax_version=_opt_str(d.get("jax_version"), "jax_version"),
                   created=_opt_str(d.get("created"), "created"),
                   stale=tuple(Stale.from_dict(v, f"stale[{i}]") for i, v in enumerate(stale)))


def is_saved_ledger(data: Any) -> bool:
    """Whether decoded JSON claims to be a ledger (its schema's kind is ``ledger``)."""
    schema = data.get("schema") if isinstance(data, dict) else None
    return isinstance(schema, str) and schema.startswith("jitmagic.ledger/")


def _with_omitted(rows: list[FunctionRow], omitted: tuple[Omitted, ...]) -> list[FunctionRow]:
    """``rows`` with the compiles past :data:`MAX_KEPT` counted in, each to the first
    row of its function's name (they were counted, not kept, so by name only)."""
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


def _function_row(cs: list[Compile]) -> FunctionRow:
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
                     tuple(pairs))


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


# -- checked reading: the checks every saved record uses (:mod:`.saved.schema`) ----------


def _str(v: Any, where: str) -> str:
    """A string, clipped to :data:`MAX_TEXT` (a report from someone else may hold more)."""
    return clipped(schema.text(v, where), MAX_TEXT)


def _opt_str(v: Any, where: str) -> str | None:
    return None if v is None else _str(v, where)


def _opt_count(v: Any, where: str) -> int | None:
    return None if v is None else schema.count(v, where)


def _opt_seconds(v: Any, where: str) -> float | None:
    return None if v is None else schema.seconds(v, where)


def _omitted(d: Any, where: str) -> Omitted:
    d = schema.obj(d, where)
    return Omitted(_str(d.get("function"), f"{where}.function"),
                   schema.count(d.get("count"), f"{where}.count"),
                   _opt_seconds(d.get("seconds"), f"{where}.seconds") or 0.0,
                   schema.count(d.get("again", 0), f"{where}.again"),
                   _opt_seconds(d.get("again_seconds", 0.0), f"{where}.again_seconds") or 0.0)

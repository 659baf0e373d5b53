"""The records of one source line's cost, one function or loop the trace entered, one
JAX loop the program holds: the rows of a :class:`~jitmagic.model.lines.LineTable`.

Each reads itself back from a saved report through a field table
(:func:`~jitmagic.model.saved.schema.fields`), every count bounded as the other records'
are: a report someone else wrote that holds a 401-digit count is refused when loaded,
naming the field, rather than raising ``OverflowError`` when it is shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..saved import schema


@dataclass(frozen=True, slots=True)
class LineRow(schema.Saved):
    """What one source line cost in one variant's cold trace and lowering (``hits``,
    ``trace_s``: None where not measured)."""

    file: str
    line: int
    text: str
    hits: int | None = 0
    eqns_own: int = 0
    eqns_inclusive: int = 0
    hlo_ops: int = 0
    trace_s: float | None = 0.0
    #: Array constants the line's equations, or those of what it calls, read (captured
    #: from Python: a global array, a closure's), and their bytes; None: not counted
    #: (a report of jitmagic 0.3); ``const_bytes_own``: those its own equations read.
    consts: int | None = None
    const_bytes: int | None = None
    const_bytes_own: int | None = None
    #: Of ``eqns_inclusive``, those inside a JAX loop's body (a scan's, a while loop's):
    #: in the program once however often a Python loop around the line runs. None: not
    #: counted (a report of jitmagic 0.5 or older).
    eqns_in_loops: int | None = None

    @property
    def key(self) -> tuple[str, int]:
        return self.file, self.line

    @property
    def unrolled_eqns(self) -> int:
        """The inclusive equations a Python loop around this line multiplies: those
        outside any JAX loop's body."""
        return self.eqns_inclusive - (self.eqns_in_loops or 0)

    @property
    def costs(self) -> bool:
        """Whether the line did anything at all during the trace."""
        return bool(self.hits or self.eqns_inclusive or self.hlo_ops)


LineRow.WHERE = "row"
#: ``hits``, ``trace_s`` and the constants' counts absent: not measured (None), as
#: older reports wrote them.
LineRow.FIELDS = (
    ("file", "file", schema.text, schema.REQUIRED),
    ("line", "line", schema.count, schema.REQUIRED),
    ("text", "text", schema.text, ""),
    ("hits", "hits", schema.optional(schema.count), None),
    ("eqns_own", "eqns_own", schema.count, 0),
    ("eqns_inclusive", "eqns_inclusive", schema.count, 0),
    ("hlo_ops", "hlo_ops", schema.count, 0),
    ("trace_s", "trace_s", schema.optional(schema.seconds), None),
    ("consts", "consts", schema.optional(schema.count), None),
    ("const_bytes", "const_bytes", schema.optional(schema.count), None),
    ("const_bytes_own", "const_bytes_own", schema.optional(schema.count), None),
    ("eqns_in_loops", "eqns_in_loops", schema.optional(schema.count), None),
)
LineRow.SPARSE = frozenset({"eqns_in_loops"})


@dataclass(frozen=True, slots=True)
class FunctionSpan(schema.Saved):
    """A user function (or generator expression, lambda ...) the trace entered."""

    name: str
    file: str
    first_line: int
    last_line: int
    calls: int | None = 0  # fresh calls while tracing (a generator's resumptions not
    # counted); None where no line hook ran
    #: The helper's name as ``--nest`` takes it (``mylayers.dense``); "" where unknown.
    helper: str = ""
    #: Whether ``calls`` are the helper's jit calls in the nested program, where no hook
    #: counted its calls: the copies of it the flat program inlines, which autodiff and
    #: ``jax.checkpoint`` make more than the times Python traced it.
    in_program: bool = False

    @property
    def is_helper_like(self) -> bool:
        """A named function (not ``<genexpr>``, ``<lambda>``, ``<listcomp>`` ...)."""
        return not self.name.rsplit(".", 1)[-1].startswith("<")

    def holds(self, row: LineRow) -> bool:
        return row.file == self.file and self.first_line <= row.line <= self.last_line


FunctionSpan.WHERE = "function"
FunctionSpan.SPARSE = frozenset({"helper", "in_program"})
FunctionSpan.FIELDS = (
    ("name", "name", schema.text, schema.REQUIRED),
    ("file", "file", schema.text, schema.REQUIRED),
    ("first_line", "first_line", schema.count, schema.REQUIRED),
    ("last_line", "last_line", schema.count, schema.REQUIRED),
    ("calls", "calls", schema.optional(schema.count), None),
    ("helper", "helper", schema.text, ""),
    ("in_program", "in_program", schema.flag, False),
)


@dataclass(frozen=True, slots=True)
class LoopSpan:
    """A Python loop in the user's source (``for``, ``while``, a comprehension): where an
    unrolled loop is looked for when line hits were not measured."""

    file: str
    first_line: int
    last_line: int

    def holds(self, row: LineRow) -> bool:
        return row.file == self.file and self.first_line <= row.line <= self.last_line

    def to_list(self) -> list[Any]:
        return [self.file, self.first_line, self.last_line]


@dataclass(frozen=True, slots=True)
class LoopCall:
    """A JAX loop in the traced program: the user line whose equation it is, its
    primitive (``scan``: ``jax.lax.scan``, and ``jax.lax.fori_loop`` with static bounds,
    which JAX writes as a scan; ``while``), its ``length`` (None for a while loop) and
    ``unroll`` (the scan equation's own parameter: how many copies of the body one step
    of the compiled loop holds; 1 for a while loop), and the equations of its body (each
    distinct sub-jaxpr once, as the table counts them)."""

    file: str
    line: int
    primitive: str
    length: int | None
    unroll: int
    body_eqns: int
    #: How many loop equations the line made (a helper called twice makes two); their
    #: bodies are all in ``body_eqns``.
    calls: int = 1

    @property
    def key(self) -> tuple[str, int]:
        return self.file, self.line

    @property
    def copies(self) -> int:
        """The copies of the body in each step of the compiled loop (``unroll``, at most
        the loop's length)."""
        return min(self.unroll, self.length) if self.length else self.unroll

    def to_list(self) -> list[Any]:
        return [self.file, self.line, self.primitive, self.length, self.unroll,
                self.body_eqns] + [self.calls] * (self.calls != 1)

    @classmethod
    def from_list(cls, x: Any, where: str = "loop_call") -> LoopCall:
        """The loop saved as ``x`` (``[file, line, primitive, length, unroll, body_eqns]``,
        then ``calls`` where it is not 1), every item checked."""
        read = _LOOP_CALLS if isinstance(x, list | tuple) and len(x) == 7 else _LOOP_CALL
        return cls(*read(x, where))


#: How a saved :class:`LoopSpan` (``[file, first_line, last_line]``) and a saved
#: :class:`LoopCall` are read.
_LOOP_SPAN = schema.fixed(schema.text, schema.count, schema.count)
_LOOP_CALL_ITEMS = (schema.text, schema.count, schema.text, schema.optional(schema.count),
                    schema.count, schema.count)
_LOOP_CALL = schema.fixed(*_LOOP_CALL_ITEMS)
_LOOP_CALLS = schema.fixed(*_LOOP_CALL_ITEMS, schema.count)


def loop_span(x: Any, where: str) -> LoopSpan:
    """The Python loop saved as ``x``, every item checked."""
    return LoopSpan(*_LOOP_SPAN(x, where))

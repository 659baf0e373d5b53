"""The rows of a :class:`~jitmagic.model.lines.LineTable`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..saved import schema


@dataclass(frozen=True, slots=True)
class LineRow(schema.Saved):
    """What one source line cost in one variant's cold trace and lowering."""

    file: str = schema.saved(schema.text)
    line: int = schema.saved(schema.count)
    text: str = schema.saved(schema.text, missing="")
    hits: int | None = schema.saved(schema.optional(schema.count), 0, missing=None)
    eqns_own: int = schema.saved(schema.count, 0)
    eqns_inclusive: int = schema.saved(schema.count, 0)
    hlo_ops: int = schema.saved(schema.count, 0)
    trace_s: float | None = schema.saved(schema.optional(schema.seconds), 0.0, missing=None)
    #: Array constants the line (``_own``: its own equations) reads, and their bytes.
    consts: int | None = schema.saved(schema.optional(schema.count), None)
    const_bytes: int | None = schema.saved(schema.optional(schema.count), None)
    const_bytes_own: int | None = schema.saved(schema.optional(schema.count), None)
    #: Of ``eqns_inclusive``, those inside a JAX loop's body (None: not counted).
    eqns_in_loops: int | None = schema.saved(schema.optional(schema.count), None)

    WHERE = "row"
    SPARSE = frozenset({"eqns_in_loops"})

    @property
    def key(self) -> tuple[str, int]:
        return self.file, self.line

    @property
    def unrolled_eqns(self) -> int:
        """The inclusive equations a Python loop around this line multiplies."""
        return self.eqns_inclusive - (self.eqns_in_loops or 0)

    @property
    def costs(self) -> bool:
        """Whether the line did anything at all during the trace."""
        return bool(self.hits or self.eqns_inclusive or self.hlo_ops)


@dataclass(frozen=True, slots=True)
class FunctionSpan(schema.Saved):
    """A user function (or generator expression, lambda ...) the trace entered."""

    name: str = schema.saved(schema.text)
    file: str = schema.saved(schema.text)
    first_line: int = schema.saved(schema.count)
    last_line: int = schema.saved(schema.count)
    #: Fresh calls while tracing (None: no line hook ran); the helper's name as ``--nest``
    #: takes it ("" where unknown).
    calls: int | None = schema.saved(schema.optional(schema.count), 0, missing=None)
    helper: str = schema.saved(schema.text, "")
    #: Whether ``calls`` are the helper's jit calls in the nested program (no hook ran).
    in_program: bool = schema.saved(schema.flag, False)

    WHERE = "function"
    SPARSE = frozenset({"helper", "in_program"})

    @property
    def is_helper_like(self) -> bool:
        """A named function (not ``<genexpr>``, ``<lambda>``, ``<listcomp>`` ...)."""
        return not self.name.rsplit(".", 1)[-1].startswith("<")

    def holds(self, row: LineRow) -> bool:
        return row.file == self.file and self.first_line <= row.line <= self.last_line


@dataclass(frozen=True, slots=True)
class LoopSpan:
    """A Python loop in the user's source (``for``, ``while``, a comprehension)."""

    file: str
    first_line: int
    last_line: int

    def holds(self, row: LineRow) -> bool:
        return row.file == self.file and self.first_line <= row.line <= self.last_line

    def to_list(self) -> list[Any]:
        return [self.file, self.first_line, self.last_line]


@dataclass(frozen=True, slots=True)
class LoopCall:
    """A JAX loop in the traced program: its line, primitive, ``length`` (None: a while
    loop), ``unroll`` and the equations of its body."""

    file: str
    line: int
    primitive: str
    length: int | None
    unroll: int
    body_eqns: int
    #: How many loop equations the line made (their bodies all in ``body_eqns``).
    calls: int = 1

    @property
    def key(self) -> tuple[str, int]:
        return self.file, self.line

    @property
    def copies(self) -> int:
        """The copies of the body in each step of the compiled loop."""
        return min(self.unroll, self.length) if self.length else self.unroll

    def to_list(self) -> list[Any]:
        return [self.file, self.line, self.primitive, self.length, self.unroll,
                self.body_eqns] + [self.calls] * (self.calls != 1)

    @classmethod
    def from_list(cls, x: Any, where: str = "loop_call") -> LoopCall:
        """The loop saved as ``x`` (``calls`` last, where it is not 1)."""
        read = _LOOP_CALLS if isinstance(x, list | tuple) and len(x) == 7 else _LOOP_CALL
        return cls(*read(x, where))


_LOOP_SPAN = schema.fixed(schema.text, schema.count, schema.count)
_LOOP_CALL_ITEMS = (schema.text, schema.count, schema.text, schema.optional(schema.count),
                    schema.count, schema.count)
_LOOP_CALL = schema.fixed(*_LOOP_CALL_ITEMS)
_LOOP_CALLS = schema.fixed(*_LOOP_CALL_ITEMS, schema.count)


def loop_span(x: Any, where: str) -> LoopSpan:
    return LoopSpan(*_LOOP_SPAN(x, where))

"""The orderings record (``--vmap``): ``jit(vmap(f))`` against ``vmap(jit(f))`` and references."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .notes import Noted, read_notes, said_in
from .rows import ORDERING_KEYS, OUTPUT_FIELDS, OrderingRow, check_outputs, without_outputs
from .saved import schema
from .saved.schema import fail
from .stats.rule import INCONCLUSIVE, Difference, difference, gap_withheld
from .stats.verdicts import Verdict
from .stats.witness import Clock, clock_for, on

#: The two orderings the toggle switches between, then the two reference rows.
ORDERINGS = ("jit(vmap(f))", "vmap(jit(f))", "vmap(f)", "jit(vmap(jit(f)))")
TOGGLED = ORDERINGS[:2]
REFERENCE = "jit(vmap(f))"
SAMPLE_KEYS = ORDERING_KEYS
#: What the orderings' verdict is on: the time per call.
EXECUTE = "execute_s"
#: The orderings called through one jit, as the reference is.
ONE_JIT = ("jit(vmap(jit(f)))",)


def _axes(value: Any, where: str) -> Any:
    """``in_axes`` as ``jax.vmap`` takes them: an int, null, or a list of ints and nulls."""
    if isinstance(value, list):
        return schema.items(schema.optional(schema.integer))(value, where)
    return schema.optional(schema.integer)(value, where)


def _rows(value: Any, where: str) -> dict[str, OrderingRow]:
    """The four orderings' rows, and no other."""
    if sorted(schema.obj(value, where)) != sorted(ORDERINGS):
        fail(where, f"the rows {', '.join(ORDERINGS)}", ", ".join(value))
    return {k: OrderingRow.from_dict(k, value[k], f"{where}.{k}") for k in ORDERINGS}


@dataclass(frozen=True)
class Orderings(schema.Saved):
    """The four orderings of one entry on one batch: ``Comparison.orderings``."""

    entry: str = schema.saved(schema.text, missing="f")
    batch: int = schema.saved(schema.count)
    in_axes: Any = schema.saved(_axes, missing=None)
    built_batch: bool = schema.saved(schema.flag, missing=True)
    rows: dict[str, OrderingRow] = schema.saved(_rows)
    outputs_match: bool | None = schema.saved(schema.optional(schema.flag), None)
    max_abs_diff: float | None = schema.saved(schema.optional(schema.number), None)
    warned: tuple[Noted, ...] = ()
    stopped: str | None = None  # why measuring ended early (PARTIAL), if it did
    outputs_kind: str | None = None
    outputs_leaf: str | None = None
    outputs_dtype: str | None = None

    WHERE = "orderings"
    FIELDS = (*OUTPUT_FIELDS, ("warnings", "warned", read_notes, ()),
              ("verdict", "verdict_saved", None, None),
              ("stopped", "stopped", schema.optional(schema.text), None))

    def __getitem__(self, name: str) -> OrderingRow:
        return self.rows[name]

    def verdict(self, chosen: str = TOGGLED[0]) -> Verdict:
        """``chosen`` against the other toggled ordering, per call, by the one rule."""
        other = TOGGLED[1] if chosen == TOGGLED[0] else TOGGLED[0]
        a, b = self.rows[chosen], self.rows[other]
        clock = self.clock()
        per_call = difference(on(b.samples, EXECUTE, clock), on(a.samples, EXECUTE, clock))
        return Verdict("per_call", per_call, clock, self, chosen)

    def against_reference(self, name: str) -> Difference:
        """``name``'s per call against :data:`REFERENCE`'s, by the one rule."""
        d = self._ruled(name)
        return dataclasses.replace(d, kind=INCONCLUSIVE) if self.withheld(name) else d

    def withheld(self, name: str) -> bool:
        """Whether ``name`` and the reference are one program, their gap withheld."""
        return name in ONE_JIT and bool(self.rows[name].same_program) and \
            gap_withheld(self._ruled(name))

    def _ruled(self, name: str) -> Difference:
        clock = self.clock()
        return difference(on(self.rows[name].samples, EXECUTE, clock),
                          on(self.rows[REFERENCE].samples, EXECUTE, clock))

    def clock(self) -> Clock:
        """The clock the verdict is on: CPU time on a busy machine, else wall time."""
        return clock_for([self.rows[n].samples for n in TOGGLED], EXECUTE)

    warnings = said_in("warned")

    @property
    def verdict_saved(self) -> dict[str, Any]:
        """:meth:`verdict` as saved (written, never read back)."""
        return {**self.verdict().to_dict(), "ordering": TOGGLED[0], "against": TOGGLED[1]}

    def to_dict(self) -> dict[str, Any]:
        return without_outputs(super().to_dict(), self)

    @classmethod
    def from_dict(cls, d: Any, where: str = "") -> Orderings:
        got = super().from_dict(d, where)
        check_outputs(vars(got), where or cls.WHERE)
        return got

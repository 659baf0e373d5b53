"""The orderings record: ``jit(vmap(f))`` against ``vmap(jit(f))`` and two references.

Raw samples per ordering, statistics derived; measured by
:mod:`jitmagic.measure.orderings`, shown by :mod:`jitmagic.render.orderings`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .stats import json_number, median

#: The two orderings the toggle switches between, then the two reference rows.
ORDERINGS = ("jit(vmap(f))", "vmap(jit(f))", "vmap(f)", "jit(vmap(jit(f)))")
TOGGLED = ORDERINGS[:2]
REFERENCE = "jit(vmap(f))"
SAMPLE_KEYS = ("first_call_s", "execute_s", "compile_event_s")


@dataclass(frozen=True)
class OrderingRow:
    """What one ordering measured: raw samples, JAX's compile events, and the program."""

    name: str
    samples: dict[str, list[float]]
    execute_loops: int = 0
    compile_events: int | None = None  # backend compiles JAX reported in a cold first call
    jaxpr_eqns: int | None = None
    nested_calls: int | None = None
    stablehlo_bytes: int | None = None
    hlo_instructions: int | None = None
    same_program: bool | None = None  # None: not compared (no jit: no single program)
    jaxpr_text: str = ""
    error: str | None = None

    def median(self, key: str) -> float:
        return median(self.samples.get(key, []))

    first_call_s = property(lambda self: self.median("first_call_s"),
                            doc="Median cold first-call seconds (caches cleared, until ready).")
    execute_s = property(lambda self: self.median("execute_s"),
                         doc="Median steady-state seconds per call.")
    compile_s = property(lambda self: self.median("compile_event_s"),
                         doc="Median of JAX's backend-compile seconds within a first call.")

    def to_dict(self) -> dict[str, Any]:
        return {
            "first_call_s": json_number(self.first_call_s),
            "execute_s": json_number(self.execute_s),
            "compile_s": json_number(self.compile_s),
            "samples": {k: list(self.samples.get(k, [])) for k in SAMPLE_KEYS},
            "execute_loops": self.execute_loops,
            "compile_events": self.compile_events,
            "jaxpr_eqns": self.jaxpr_eqns,
            "nested_calls": self.nested_calls,
            "stablehlo_bytes": self.stablehlo_bytes,
            "hlo_instructions": self.hlo_instructions,
            "same_program": self.same_program,
            "jaxpr": self.jaxpr_text,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, name: str, d: dict[str, Any]) -> OrderingRow:
        return cls(
            name=name,
            samples={k: list(d.get("samples", {}).get(k, [])) for k in SAMPLE_KEYS},
            execute_loops=d.get("execute_loops", 0),
            compile_events=d.get("compile_events"),
            jaxpr_eqns=d.get("jaxpr_eqns"),
            nested_calls=d.get("nested_calls"),
            stablehlo_bytes=d.get("stablehlo_bytes"),
            hlo_instructions=d.get("hlo_instructions"),
            same_program=d.get("same_program"),
            jaxpr_text=d.get("jaxpr", ""),
            error=d.get("error"),
        )


@dataclass(frozen=True)
class Orderings:
    """The four orderings of one entry on one batch: ``Comparison.extras["orderings"]``."""

    entry: str
    batch: int
    in_axes: Any
    built_batch: bool
    rows: dict[str, OrderingRow]
    outputs_match: bool | None = None
    max_abs_diff: float | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def __getitem__(self, name: str) -> OrderingRow:
        return self.rows[name]

    def to_dict(self) -> dict[str, Any]:
        return {
            "entry": self.entry,
            "batch": self.batch,
            "in_axes": list(self.in_axes) if isinstance(self.in_axes, tuple) else self.in_axes,
            "built_batch": self.built_batch,
            "rows": {k: r.to_dict() for k, r in self.rows.items()},
            "outputs_match": self.outputs_match,
            "max_abs_diff": json_number(self.max_abs_diff),
            "warnings": list(self.warnings),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Orderings:
        axes = d.get("in_axes")
        return cls(
            entry=d.get("entry", "f"),
            batch=d["batch"],
            in_axes=tuple(axes) if isinstance(axes, list) else axes,
            built_batch=d.get("built_batch", True),
            rows={k: OrderingRow.from_dict(k, v) for k, v in d["rows"].items()},
            outputs_match=d.get("outputs_match"),
            max_abs_diff=d.get("max_abs_diff"),
            warnings=tuple(d.get("warnings", ())),
        )

    @classmethod
    def of(cls, comparison: Any) -> Orderings | None:
        """The orderings stored in a ``Comparison``'s extras, if it has them."""
        d = getattr(comparison, "extras", {}).get("orderings")
        return None if d is None else cls.from_dict(d)



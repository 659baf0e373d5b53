"""Result records: raw samples in, statistics out.

Like IPython's ``TimeitResult``, a result keeps every sample it measured and
derives medians and spreads from them, so a saved report can be re-read and
re-summarised without losing anything. ``to_dict``/``from_dict`` give the
JSON report format documented in the README; presentation lives in
``__str__``/``_repr_mimebundle_``, which call :mod:`jitmagic.present`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .stats import json_number, median

SCHEMA = "jitmagic.comparison/1"

#: The timed phases, in pipeline order. Cold phases start from cleared caches.
PHASES = ("trace_s", "lower_s", "compile_s", "first_call_s", "execute_s")
COLD_PHASES = PHASES[:4]
PHASE_LABELS = {
    "trace_s": "trace",
    "lower_s": "lower",
    "compile_s": "XLA compile",
    "first_call_s": "first call",
    "execute_s": "execute (per call)",
}
VARIANTS = ("flat", "nested")


class ReportSchemaError(ValueError):
    """A saved report has a schema this version cannot read."""


@dataclass(frozen=True)
class VariantResult:
    """What one variant (flat or nested) measured: raw samples plus structure."""

    name: str
    samples: dict[str, list[float]]
    helpers: tuple[str, ...] = ()
    execute_loops: int = 0
    jaxpr_eqns: int | None = None
    nested_calls: int | None = None
    stablehlo_bytes: int | None = None
    stablehlo_calls: int | None = None
    compiled_calls: int | None = None
    jaxpr_text: str = ""
    error: str | None = None
    notes: tuple[str, ...] = ()
    #: Top-level equations only; ``jaxpr_eqns`` also counts each distinct sub-jaxpr once.
    jaxpr_eqns_top: int | None = None

    def median(self, phase: str) -> float:
        return median(self.samples.get(phase, []))

    def spread(self, phase: str) -> tuple[float, float]:
        """(min, max) of a phase's samples; NaNs where nothing was measured."""
        xs = self.samples.get(phase, [])
        return (min(xs), max(xs)) if xs else (math.nan, math.nan)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def cold_start_s(self) -> float:
        """Trace + lower + compile: what nested jit can change at start-up."""
        return sum(self.median(p) for p in COLD_PHASES[:3])

    trace_s = property(lambda self: self.median("trace_s"), doc="Median trace seconds.")
    lower_s = property(lambda self: self.median("lower_s"), doc="Median lowering seconds.")
    compile_s = property(lambda self: self.median("compile_s"), doc="Median XLA compile seconds.")
    first_call_s = property(lambda self: self.median("first_call_s"),
                            doc="Median cold first-call seconds (trace to ready result).")
    execute_s = property(lambda self: self.median("execute_s"),
                         doc="Median steady-state seconds per call.")

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {p: json_number(self.median(p)) for p in PHASES}
        d["samples"] = {p: list(self.samples.get(p, [])) for p in PHASES}
        d.update(
            execute_loops=self.execute_loops,
            jaxpr_eqns=self.jaxpr_eqns,
            jaxpr_eqns_top=self.jaxpr_eqns_top,
            nested_calls=self.nested_calls,
            stablehlo_bytes=self.stablehlo_bytes,
            stablehlo_calls=self.stablehlo_calls,
            compiled_calls=self.compiled_calls,
            helpers=list(self.helpers),
            jaxpr=self.jaxpr_text,
            error=self.error,
            notes=list(self.notes),
        )
        return d

    @classmethod
    def from_dict(cls, name: str, d: dict[str, Any]) -> VariantResult:
        return cls(
            name=name,
            samples={p: list(d["samples"].get(p, [])) for p in PHASES},
            helpers=tuple(d.get("helpers", ())),
            execute_loops=d.get("execute_loops", 0),
            jaxpr_eqns=d.get("jaxpr_eqns"),
            jaxpr_eqns_top=d.get("jaxpr_eqns_top"),
            nested_calls=d.get("nested_calls"),
            stablehlo_bytes=d.get("stablehlo_bytes"),
            stablehlo_calls=d.get("stablehlo_calls"),
            compiled_calls=d.get("compiled_calls"),
            jaxpr_text=d.get("jaxpr", ""),
            error=d.get("error"),
            notes=tuple(d.get("notes", ())),
        )


@dataclass(frozen=True)
class Comparison:
    """Flat against nested jit for one entry function: the report object."""

    entry: str
    variants: dict[str, VariantResult]
    outputs_match: bool | None
    max_abs_diff: float | None = None
    wall_s: float = math.nan
    env: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    stopped: str | None = None  # why the measurement ended early, if it did
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def flat(self) -> VariantResult:
        return self.variants["flat"]

    @property
    def nested(self) -> VariantResult:
        return self.variants["nested"]

    def ratio(self, phase: str) -> float:
        """flat / nested median for a phase: above 1 means nesting made it faster."""
        a, b = self.flat.median(phase), self.nested.median(phase)
        return a / b if b and not math.isnan(a) else math.nan

    def significant(self, phase: str) -> bool | None:
        """Whether flat and nested differ by more than the noise of their repeats.

        Not significant when either variant's spread (max − min) is wider than
        the difference between their medians; None with fewer than two samples.
        """
        flat, nested = self.flat.samples.get(phase, []), self.nested.samples.get(phase, [])
        if len(flat) < 2 or len(nested) < 2:
            return None
        spread = max(max(flat) - min(flat), max(nested) - min(nested))
        return abs(self.flat.median(phase) - self.nested.median(phase)) > spread

    def measured_s(self) -> float:
        """Sum of every interval this comparison timed (for the overhead check)."""
        total = 0.0
        for v in self.variants.values():
            for phase, xs in v.samples.items():
                loops = v.execute_loops if phase == "execute_s" else 1
                total += sum(xs) * loops
        return total

    def to_dict(self) -> dict[str, Any]:
        d = {
            "schema": SCHEMA,
            "entry": self.entry,
            "variants": {k: v.to_dict() for k, v in self.variants.items()},
            "outputs_match": self.outputs_match,
            "max_abs_diff": json_number(self.max_abs_diff),
            "wall_s": json_number(self.wall_s),
            "env": dict(self.env),
            "warnings": list(self.warnings),
            "stopped": self.stopped,
        }
        d.update(self.extras)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Comparison:
        schema = d.get("schema") if isinstance(d, dict) else None
        if schema != SCHEMA:
            raise ReportSchemaError(
                f"cannot read a report with schema {schema!r}: this jitmagic reads {SCHEMA!r}"
            )
        known = {"schema", "entry", "variants", "outputs_match", "max_abs_diff", "wall_s",
                 "env", "warnings", "stopped"}
        return cls(
            entry=d["entry"],
            variants={k: VariantResult.from_dict(k, v) for k, v in d["variants"].items()},
            outputs_match=d.get("outputs_match"),
            max_abs_diff=_float_or_nan(d.get("max_abs_diff")),
            wall_s=_float_or_nan(d.get("wall_s")),
            env=dict(d.get("env", {})),
            warnings=tuple(d.get("warnings", ())),
            stopped=d.get("stopped"),
            extras={k: v for k, v in d.items() if k not in known},
        )

    def __str__(self) -> str:
        from ..render.bundle import text

        return text(self)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """What IPython shows: the bundle the magic displays, chart included (one code path,
        so a loaded report looks as it did when it was measured)."""
        from ..render.bundle import repr_mimebundle

        return repr_mimebundle(self, include, exclude)


def _float_or_nan(x: float | None) -> float:
    return math.nan if x is None else float(x)

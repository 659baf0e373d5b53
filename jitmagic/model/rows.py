"""One measured row, a flat or nested variant or one ``--vmap`` ordering: every raw sample
per key, medians and spreads derived; and how a record's outputs compared (docs/outputs.md)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from .notes import Noted, read_notes, said_in
from .saved import schema
from .saved.schema import fail
from .stats.cold import COLD_KEYS
from .stats.rule import json_number, median, spread
from .stats.witness import CONTENTION_KEYS, FIRST_CALL, cpu_key

#: The timed phases of a variant, in pipeline order; the cold ones start from cleared caches.
PHASES = ("trace_s", "lower_s", "compile_s", "first_call_s", "execute_s")
COLD_PHASES = PHASES[:4]
#: The stages of a first call that JAX's own clock times inside it.
STAGE_PHASES = PHASES[:3]
#: Where a variant's stage seconds came from: events inside the first call, or a staged run.
FROM_EVENTS, FROM_STAGED = "events", "staged"
VARIANTS = ("flat", "nested")
#: The CPU seconds beside each phase.
CPU_PHASES = tuple(cpu_key(p) for p in PHASES)

ORDERING_KEYS = ("first_call_s", "execute_s", "compile_event_s")

_COMMON: tuple[schema.Field, ...] = (
    ("execute_loops", "execute_loops", schema.count, 0),
    *schema.same(schema.optional(schema.count), None, "jaxpr_eqns", "nested_calls",
                 "stablehlo_bytes"),
)
_TAIL: tuple[schema.Field, ...] = (
    ("jaxpr", "jaxpr_text", schema.text, ""),
    ("error", "error", schema.optional(schema.text), None),
)

#: What XLA made of a variant's program (``VariantResult``), absent from older reports.
COMPILED_WORK = ("compiled_ops", "compiled_flops", "compiled_bytes_accessed",
                 "compiled_temp_bytes", "compiled_peak_bytes", "constants", "constant_bytes")

#: The structure figures of a variant: counts that move only when the program changes.
STRUCTURE = ("jaxpr_eqns", "jaxpr_eqns_top", "nested_calls", "library_calls",
             "stablehlo_bytes", "stablehlo_calls", "compiled_calls", *COMPILED_WORK)

#: One process's samples, by sample key (``trace_s``, ...), a list of seconds each.
Samples = dict[str, list[float]]


def slowest(per_process: Sequence[Samples]) -> Samples:
    """The slowest process's samples, run by run (a cold run's keys all from the slowest one)."""
    if not per_process:
        return {}
    keys = dict.fromkeys(k for p in per_process for k in p)
    out = {k: [max(run) for run in zip(*(p.get(k, []) for p in per_process), strict=False)]
           for k in keys}
    firsts = list(zip(*(p.get(FIRST_CALL, []) for p in per_process), strict=False))
    for run, calls in enumerate(firsts):
        who = max(range(len(calls)), key=lambda i: calls[i])
        for k in COLD_KEYS:
            if k in out and run < len(out[k]):
                out[k][run] = per_process[who][k][run]
    return out


def read_per_process(value: Any, where: str) -> tuple[Samples, ...]:
    """``per_process`` as a report holds it: a list of sample objects, one per process."""
    decoded = schema.items(schema.mapping(schema.items(schema.seconds)))(value, where)
    return tuple({k: list(xs) for k, xs in p.items()} for p in decoded)


#: ``outputs_kind``'s values, and the ``outputs_match`` each goes with.
OUTPUT_KINDS = {"exact": True, "rounding": True, "mismatch": False, "uncompared": None}


def output_kind(value: Any, where: str) -> str:
    if value not in OUTPUT_KINDS:
        fail(where, f"one of {', '.join(map(repr, OUTPUT_KINDS))}", value)
    return value


OUTPUT_FIELDS: tuple[schema.Field, ...] = (
    ("outputs_kind", "outputs_kind", schema.optional(output_kind), None),
    ("outputs_leaf", "outputs_leaf", schema.optional(schema.text), None),
    ("outputs_dtype", "outputs_dtype", schema.optional(schema.text), None),
)


def check_outputs(got: dict[str, Any], where: str) -> dict[str, Any]:
    """``got`` after checking that ``outputs_kind`` agrees with ``outputs_match``."""
    kind = got.get("outputs_kind")
    if kind is not None and got.get("outputs_match") is not OUTPUT_KINDS[kind]:
        at = f"{where}.outputs_kind" if where else "outputs_kind"
        expected = {True: "true", False: "false", None: "null"}[OUTPUT_KINDS[kind]]
        fail(at, f"a kind that agrees with outputs_match ({kind!r} goes with {expected})",
             kind)
    return got


def without_outputs(d: dict[str, Any], record: Any) -> dict[str, Any]:
    """``d`` without the three where nothing was compared (as an older report wrote it)."""
    if record.outputs_kind is not None:
        return d
    return {k: v for k, v in d.items() if k not in {key for key, *_ in OUTPUT_FIELDS}}


_R = TypeVar("_R", bound="Row")  # ``from_dict`` of a subclass returns that subclass


@dataclass(frozen=True)
class Row:
    """What every measured row has: raw samples per key, the steady loop count, the program."""

    name: str
    samples: dict[str, list[float]]
    execute_loops: int = 0
    jaxpr_eqns: int | None = None
    nested_calls: int | None = None
    stablehlo_bytes: int | None = None
    jaxpr_text: str = ""
    error: str | None = None

    KEYS: ClassVar[tuple[str, ...]] = ()
    #: Sample keys written and read only where measured (absent from older reports).
    EXTRA_KEYS: ClassVar[tuple[str, ...]] = ()
    #: Medians written beside the samples, as (JSON key, sample key); derived, never read.
    MEDIANS: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: The other JSON fields, as :class:`~.saved.schema.Saved`'s.
    FIELDS: ClassVar[tuple[schema.Field, ...]] = ()
    SPARSE: ClassVar[frozenset[str]] = frozenset()

    def median(self, key: str) -> float:
        return median(self.samples.get(key, []))

    def spread(self, key: str) -> tuple[float, float] | None:
        """(min, max) of a key's samples (:func:`~jitmagic.model.stats.rule.spread`)."""
        return spread(self.samples.get(key, []))

    @property
    def ok(self) -> bool:
        return self.error is None

    first_call_s = property(lambda self: self.median("first_call_s"),
                            doc="Median cold first-call seconds (caches cleared, until ready).")
    execute_s = property(lambda self: self.median("execute_s"),
                         doc="Median steady-state seconds per call.")

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {key: json_number(self.median(k)) for key, k in self.MEDIANS}
        d["samples"] = {k: list(self.samples.get(k, [])) for k in self.KEYS}
        d["samples"].update({k: list(self.samples[k]) for k in self.EXTRA_KEYS
                             if self.samples.get(k)})
        return d | schema.written(self)

    @classmethod
    def from_dict(cls: type[_R], name: str, d: Any, where: str = "") -> _R:
        """The row saved as ``d``; ``ReportSchemaError`` naming the first bad field."""
        where = where or name
        given = schema.obj(schema.obj(d, where).get("samples", {}), f"{where}.samples")
        keys = (*cls.KEYS, *(k for k in cls.EXTRA_KEYS if k in given))
        samples = {k: list(schema.items(schema.seconds)(given.get(k, []), f"{where}.samples.{k}"))
                   for k in keys}
        for key, _ in cls.MEDIANS:  # derived from the samples, never read: still checked
            if key in d:
                schema.optional(schema.seconds)(d[key], f"{where}.{key}")
        return cls(name=name, samples=samples, **schema.fields(d, cls.FIELDS, where))


@dataclass(frozen=True, kw_only=True)
class ProgramFigures:
    """What a variant's program is, read untimed from its cold run (None: not read)."""

    #: Top-level equations only; ``jaxpr_eqns`` also counts each distinct sub-jaxpr once.
    jaxpr_eqns_top: int | None = None
    #: Of ``nested_calls``, the jits of JAX and libraries (``jax.nn.relu``, optax's).
    library_calls: int | None = None
    #: The ``call`` ops left after lowering, and after XLA.
    stablehlo_calls: int | None = None
    compiled_calls: int | None = None
    #: XLA's instructions after optimisation, and its cost analysis.
    compiled_ops: int | None = None
    compiled_flops: int | None = None
    compiled_bytes_accessed: int | None = None
    #: XLA's memory analysis: temporary buffers, the most held at once.
    compiled_temp_bytes: int | None = None
    compiled_peak_bytes: int | None = None
    #: The array constants captured from Python its program reads, and their bytes.
    constants: int | None = None
    constant_bytes: int | None = None


@dataclass(frozen=True)
class VariantResult(Row, ProgramFigures):
    """What one variant (flat or nested) measured: raw samples plus structure."""

    helpers: tuple[str, ...] = ()
    noted: tuple[Noted, ...] = ()
    #: Helpers found that could not be nested (kept inline; the notes say why).
    inline: tuple[str, ...] = ()
    #: Each nested helper's jit calls in this variant's jaxpr (``helpers``: those with any).
    helper_calls: dict[str, int] = field(default_factory=dict)
    #: The nested helpers whose jit is the user's own ``jax.jit`` (kept, not added).
    own_jit: tuple[str, ...] = ()
    #: :data:`FROM_EVENTS` or :data:`FROM_STAGED` (None: no stage was timed).
    stages_from: str | None = None
    #: Under ``jax.distributed``: every process's own samples (``samples``: the slowest's).
    per_process: tuple[Samples, ...] = ()

    KEYS = PHASES
    EXTRA_KEYS = (*CPU_PHASES, *CONTENTION_KEYS)
    MEDIANS = tuple((p, p) for p in PHASES)
    FIELDS = (*_COMMON,
              *schema.same(schema.optional(schema.count), None, "stablehlo_calls",
                           "compiled_calls", "jaxpr_eqns_top", "library_calls"),
              ("helpers", "helpers", schema.items(schema.text), ()),
              *_TAIL,
              ("notes", "noted", read_notes, ()),
              ("inline", "inline", schema.items(schema.text), ()),
              ("helper_calls", "helper_calls", schema.mapping(schema.count), {}),
              ("own_jit", "own_jit", schema.items(schema.text), ()),
              ("stages_from", "stages_from", schema.optional(schema.text), None),
              *schema.same(schema.optional(schema.count), None, *COMPILED_WORK),
              ("per_process", "per_process", read_per_process, ()))

    SPARSE = frozenset({"per_process", "own_jit", "library_calls", *COMPILED_WORK})

    notes = said_in("noted")

    def first_call_parts(self) -> dict[str, float]:
        """The median first call's stages and ``rest_s``, which add up to it (staged: medians)."""
        if self.stages_from != FROM_EVENTS:
            return {p: self.median(p) for p in STAGE_PHASES}
        keys = (*STAGE_PHASES, "first_call_s")  # a stopped run may lack the later keys
        runs = sorted(zip(*(self.samples.get(k, []) for k in keys), strict=False),
                      key=lambda run: run[-1])
        if not runs:
            return {**{p: math.nan for p in STAGE_PHASES}, "rest_s": math.nan}
        middle = runs[(len(runs) - 1) // 2: len(runs) // 2 + 1]
        mean = [statistics.fmean(column) for column in zip(*middle, strict=True)]
        parts = dict(zip(STAGE_PHASES, mean[:3], strict=True))
        return parts | {"rest_s": mean[3] - sum(mean[:3])}

    trace_s = property(lambda self: self.median("trace_s"), doc="Median trace seconds.")
    lower_s = property(lambda self: self.median("lower_s"), doc="Median lowering seconds.")
    compile_s = property(lambda self: self.median("compile_s"), doc="Median XLA compile seconds.")


@dataclass(frozen=True)
class OrderingRow(Row):
    """What one ordering measured: raw samples, JAX's compile events, and the program."""

    compile_events: int | None = None  # backend compiles JAX reported in a cold first call
    hlo_instructions: int | None = None
    same_program: bool | None = None  # None: not compared (no jit: no single program)

    KEYS = ORDERING_KEYS
    EXTRA_KEYS = (*(cpu_key(k) for k in ORDERING_KEYS[:2]), *CONTENTION_KEYS)
    MEDIANS = (("first_call_s", "first_call_s"), ("execute_s", "execute_s"),
               ("compile_s", "compile_event_s"))
    FIELDS = (_COMMON[0],
              ("compile_events", "compile_events", schema.optional(schema.count), None),
              *_COMMON[1:],
              ("hlo_instructions", "hlo_instructions", schema.optional(schema.count), None),
              ("same_program", "same_program", schema.optional(schema.flag), None),
              *_TAIL)

    compile_s = property(lambda self: self.median("compile_event_s"),
                         doc="Median of JAX's backend-compile seconds within a first call.")

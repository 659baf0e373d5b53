"""The report of flat against nested jit: every sample kept, statistics derived."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import parts as table
from .advice import Advice
from .attribution import Attribution
from .causes.cause import Cause, causes
from .causes.constant_arguments import ConstantArguments
from .causes.effort import Effort
from .causes.second_start import SecondStart
from .causes.xla_passes import XlaPasses
from .lines import Lines
from .notes import Noted, read_notes, said_in
from .orderings import Orderings
from .rows import (
    COLD_PHASES,
    FROM_EVENTS,
    OUTPUT_FIELDS,
    PHASES,
    STAGE_PHASES,
    VARIANTS,
    VariantResult,
    check_outputs,
    without_outputs,
)
from .saved import schema
from .saved.schema import fail
from .shown import Shown, renderer
from .stats.cold import cold_only, warm_runs
from .stats.rule import INCONCLUSIVE, Difference, difference, gap_withheld
from .stats.verdicts import Verdict
from .stats.witness import CPU, FIRST_CALL, Clock, clock_for, is_busy, on, under_ticks, waited_share
from .target import TARGET_COMPILE, compile_difference, target_clock, target_of

SCHEMA = "jitmagic.comparison/6"
#: Schemas ``from_dict`` reads (a key an older one lacks reads as not measured).
READABLE = ("jitmagic.comparison/1", "jitmagic.comparison/2", "jitmagic.comparison/3",
            "jitmagic.comparison/4", "jitmagic.comparison/5", SCHEMA)
PROVENANCE = ("source", "file", "options", "created")

EXECUTE = "execute_s"


@dataclass(frozen=True)
class Sharding(schema.Saved):
    """Each sharded argument's spec; per variant, whether it kept them (None: not said)."""

    inputs: tuple[str, ...] = schema.saved(schema.items(schema.text))
    kept_input_shardings: dict[str, bool | None] = schema.saved(
        schema.mapping(schema.optional(schema.flag)))

    WHERE = "sharding"


def _variants(d: Any, where: str) -> dict[str, VariantResult]:
    """Both variants, flat and nested, and no other."""
    if sorted(schema.obj(d, where)) != sorted(VARIANTS):
        fail(where, f"the variants {' and '.join(VARIANTS)}", ", ".join(d) or "none")
    return {k: VariantResult.from_dict(k, d[k], f"{where}.{k}") for k in VARIANTS}


@dataclass(frozen=True)
class Comparison(Shown, schema.Saved):
    """Flat against nested jit for one entry function: the report object."""

    entry: str = schema.saved(schema.text)
    variants: dict[str, VariantResult] = schema.saved(_variants)
    outputs_match: bool | None = schema.saved(schema.optional(schema.flag), missing=None)
    max_abs_diff: float | None = schema.saved(schema.number_or_nan, None, missing=math.nan)
    wall_s: float = math.nan  # flat against nested alone
    #: The whole measurement's wall time, the parts included (NaN: none ran).
    whole_s: float = math.nan
    env: dict[str, Any] = field(default_factory=dict)
    warned: tuple[Noted, ...] = ()
    stopped: str | None = None  # why the measurement ended early, if it did
    orderings: Orderings | None = None  # --vmap
    attribution: Attribution | None = None  # --attribute
    advice: Advice | None = None  # --advise
    sharding: Sharding | None = None  # where an argument is sharded
    lines: Lines | None = None  # --lines: program size per source line
    xla_passes: XlaPasses | None = None  # --xla: where XLA spends an extra profiled compile
    constant_arguments: ConstantArguments | None = None
    second_start: SecondStart | None = None  # --cache: a warm persistent cache
    effort: Effort | None = None  # --effort: XLA's lower effort settings against the default
    outputs_kind: str | None = None
    outputs_leaf: str | None = None  # the leaf that decided it, as a dotted path
    outputs_dtype: str | None = None  # that leaf's dtype ("float32")
    #: With ``-r auto``: why the repeats ended (:data:`.stats.verdicts.DECIDED`, ...).
    repeats_ended: str | None = None
    #: ``--budget``: the seconds of rounds past the fewest each part may take.
    budget_s: float = math.nan
    #: Provenance (docs/reports.md): the code, the file, the options as written, when.
    source: str | None = None
    file: str | None = None
    options: str | None = None
    created: str | None = None
    #: Whether XLA compiled both variants to the same program (None: not compared).
    same_compiled: bool | None = None
    #: The :class:`~jitmagic.model.diff.Diff` against ``--baseline``; not saved.
    baseline: Any = field(default=None, compare=False, repr=False)
    #: The records of parts of :data:`~.parts.PARTS` that have no field of their own.
    added: dict[str, Any] = field(default_factory=dict)

    def part(self, name: str) -> Any:
        """The record of the part ``name`` (None where it was not measured)."""
        if name in _OWN_FIELDS:
            return getattr(self, name)
        return self.added.get(name)

    def with_part(self, name: str, record: Any, **changes: Any) -> Comparison:
        """This comparison with the part ``name``'s record (and ``changes``)."""
        if name in _OWN_FIELDS:
            return dataclasses.replace(self, **{name: record}, **changes)
        return dataclasses.replace(self, added={**self.added, name: record}, **changes)

    warnings = said_in("warned")

    @property
    def flat(self) -> VariantResult:
        """The flat variant as the report reads it (:meth:`judged`)."""
        return self.judged("flat")

    @property
    def nested(self) -> VariantResult:
        """The nested variant as the report reads it (:meth:`judged`)."""
        return self.judged("nested")

    def ratio(self, phase: str) -> float:
        """flat / nested median for a phase: above 1 means nesting made it faster."""
        a, b = self.flat.median(phase), self.nested.median(phase)
        return a / b if b and not math.isnan(a) else math.nan

    def difference(self, phase: str, clock: Clock | str | None = None) -> Difference:
        """Nested against flat for a phase by the one rule, on ``clock`` (or :meth:`clock_of`)."""
        clock = Clock(clock) if clock else None
        d = self._ruled(phase, clock)
        if self.withheld(phase, clock):
            return dataclasses.replace(d, kind=INCONCLUSIVE)  # the same work, per call
        return d

    def _ruled(self, phase: str, clock: Clock | None = None) -> Difference:
        clock = clock or self.clock_of(phase)
        return difference(*(on(self.judged(name).samples, phase, clock) for name in VARIANTS))

    def judged(self, name: str) -> VariantResult:
        """Variant ``name`` less the cold stages of runs that were not cold."""
        v = self.variants[name]
        samples = cold_only(v.samples, self.env.get("backend"))
        return v if samples == v.samples else dataclasses.replace(v, samples=samples)

    def withheld(self, phase: str, clock: Clock | None = None) -> bool:
        """Whether :meth:`difference` leaves ``phase`` undecided whatever the rule says."""
        if self.coarse(phase, clock):
            return True
        return phase == EXECUTE and bool(self.same_compiled) and \
            gap_withheld(self._ruled(phase, clock))

    def coarse(self, phase: str, clock: Clock | None = None) -> bool:
        """Whether ``phase``, a cold stage, is read in under ten ticks of the CPU clock."""
        if (clock or self.clock_of(phase)) is not CPU or phase not in COLD_PHASES:
            return False
        return under_ticks((on(self.judged(n).samples, phase, CPU) for n in VARIANTS),
                           self.env.get("cpu_tick_s"))

    @property
    def waited_share(self) -> float | None:
        """How busy the machine was (:func:`.stats.witness.waited_share`; None: not measured)."""
        return waited_share(v.samples for v in self.variants.values())

    @property
    def busy(self) -> bool:
        return is_busy(self.waited_share)

    @property
    def warm_runs(self) -> dict[str, tuple[int, ...]]:
        """Per variant with any, the runs whose compile was not cold."""
        platform = self.env.get("backend")
        found = {name: warm_runs(v.samples, platform) for name, v in self.variants.items()}
        return {name: runs for name, runs in found.items() if runs}

    def clock_of(self, phase: str) -> Clock:
        """The clock that decides ``phase`` (:func:`.stats.witness.clock_for`)."""
        return clock_for([v.samples for v in (self.flat, self.nested) if v.samples.get(phase)],
                         phase)

    def significant(self, phase: str) -> bool | None:
        """Whether flat and nested differ by the rule; None where not measured."""
        d = self.difference(phase)
        return None if math.isnan(d.ratio) else d.significant

    @property
    def stopped_anywhere(self) -> str | None:
        """Why this comparison, or a part measured after it, ended early (None: nothing did)."""
        records = (self, *(self.part(p.name) for p in table.PARTS))
        return next((r.stopped for r in records if getattr(r, "stopped", None)), None)

    @property
    def why(self) -> tuple[Cause, ...]:
        """The causes of the flat first call, kind by kind (:mod:`.causes.cause`)."""
        return causes(self, table.part_causes())

    @property
    def verdict(self) -> Verdict:
        """What nesting did to the first call (with ``--target``: to the compile)."""
        if target_of(self.env) is not None:
            flat = self.flat.samples
            nested = self.nested.samples if "nested" in self.variants else {}
            clock = target_clock(flat, nested)
            return Verdict(TARGET_COMPILE, compile_difference(flat, nested, clock), clock, self)
        return Verdict("first_call", self.difference(FIRST_CALL), self.clock_of(FIRST_CALL),
                       self)

    def __repr__(self) -> str:
        return self.summary()

    def report(self, verbose: bool = False, width: int | None = None) -> str:
        """The text report: at a glance, or in full with ``verbose``."""
        said = renderer("text", self)
        return said(self, verbose=verbose, width=width) if said else self.summary()

    def measured_s(self) -> float:
        """Sum of every interval this comparison timed (for the overhead check)."""
        total = 0.0
        for v in self.variants.values():
            for phase, xs in ((p, v.samples.get(p, [])) for p in PHASES):  # wall clock only
                if phase in STAGE_PHASES and v.stages_from == FROM_EVENTS:
                    continue  # parts of the first call, not intervals of their own
                loops = v.execute_loops if phase == "execute_s" else 1
                total += sum(xs) * loops
        return total

    @property
    def why_clock(self) -> Clock:
        return self.clock_of(FIRST_CALL)

    def to_dict(self) -> dict[str, Any]:
        d = {"schema": SCHEMA, **without_outputs(super().to_dict(), self)}
        # each variant's every run's samples, beside the medians the report read
        d["variants"] = {k: self.judged(k).to_dict() | {"samples": v.to_dict()["samples"]}
                         for k, v in self.variants.items()}
        return d | {key: r.to_dict() for key in records() if (r := self.part(key)) is not None}

    @classmethod
    def from_dict(cls, d: Any, where: str = "") -> Comparison:
        """The comparison saved as ``d``, every field checked."""
        given = d.get("schema") if isinstance(d, dict) else None
        if given not in READABLE:
            raise schema.ReportSchemaError(f"{where + ': ' if where else ''}cannot read a report "
                                           f"with schema {given!r}: this jitmagic reads "
                                           f"{' or '.join(map(repr, READABLE))}")
        got = check_outputs(schema.fields(d, cls.FIELDS, where), where)
        added: dict[str, Any] = {}
        for key, read in records().items():
            if d.get(key) is not None:
                record = read(d[key], f"{where}.{key}" if where else key)
                (got if key in _OWN_FIELDS else added)[key] = record
        return cls(**got, added=added)


Comparison.SPARSE = frozenset({"whole_s", "budget_s", "same_compiled", *PROVENANCE})
Comparison.FIELDS = (
    *Comparison.FIELDS,
    *OUTPUT_FIELDS,
    ("wall_s", "wall_s", schema.number_or_nan, math.nan),
    ("whole_s", "whole_s", schema.number_or_nan, math.nan),
    ("env", "env", lambda v, at: schema.json_value(schema.obj(v, at), at), {}),
    ("warnings", "warned", read_notes, ()),
    ("stopped", "stopped", schema.optional(schema.text), None),
    ("repeats_ended", "repeats_ended", schema.optional(schema.text), None),
    ("budget_s", "budget_s", schema.number_or_nan, math.nan),
    ("same_compiled", "same_compiled", schema.optional(schema.flag), None),
    *schema.same(schema.optional(schema.text), None, *PROVENANCE),
    ("verdict", "verdict", None, None),  # derived again when read, as the causes are
    ("why", "why", None, None),
    ("why_clock", "why_clock", None, None),
)


def records() -> dict[str, Callable[[Any, str], Any]]:
    """How each optional record is read, by its key (read at each call: a test may add one)."""
    return {"sharding": Sharding.from_dict, **{p.name: p.read for p in table.PARTS}}


#: The comparison's own fields: a part named like one has its record there.
_OWN_FIELDS = frozenset(f.name for f in dataclasses.fields(Comparison))

"""Result records: raw samples in, statistics out.

Like IPython's ``TimeitResult``, a result keeps every sample it measured and
derives medians and spreads from them, so a saved report can be re-read and
re-summarised without losing anything. ``to_dict``/``from_dict`` give the
JSON report format documented in docs/report-format.md; presentation lives in
``__str__``/``_repr_mimebundle_``, which call :mod:`jitmagic.render.bundle`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from . import parts as table
from .advice import Advice
from .attribution import Attribution
from .causes.constant_arguments import ConstantArguments
from .causes.effort import Effort
from .causes.second_start import SecondStart
from .causes.why import Cause
from .causes.why import causes
from .causes.xla_passes import XlaPasses
from .lines import Lines
from .notes import Noted
from .notes import read_notes
from .notes import said
from .orderings import Orderings
from .outputs import OUTPUT_FIELDS
from .outputs import check_outputs
from .outputs import without_outputs
from .rows import COLD_PHASES
from .rows import FROM_EVENTS
from .rows import PHASES
from .rows import STAGE_PHASES
from .rows import VARIANTS
from .rows import VariantResult
from .saved.schema import REQUIRED
from .saved.schema import ReportSchemaError
from .saved.schema import Saved
from .saved.schema import fail
from .saved.schema import fields
from .saved.schema import flag
from .saved.schema import json_value
from .saved.schema import number_or_nan
from .saved.schema import obj
from .saved.schema import optional
from .saved.schema import text
from .sharding import Sharding
from .shown import Shown
from .shown import renderer
from .stats.cold import cold_only
from .stats.cold import warm_runs
from .stats.rule import INCONCLUSIVE
from .stats.rule import Difference
from .stats.rule import difference
from .stats.rule import gap_withheld
from .stats.verdicts import Verdict
from .stats.witness import CPU
from .stats.witness import FIRST_CALL
from .stats.witness import Clock
from .stats.witness import clock_for
from .stats.witness import is_busy
from .stats.witness import on
from .stats.witness import under_ticks
from .stats.witness import waited_share
from .target import TARGET_COMPILE
from .target import compile_difference
from .target import target_clock
from .target import target_of

SCHEMA = "jitmagic.comparison/6"
#: Schemas ``from_dict`` reads: /1 wrote the same keys, unchecked; /2 had no
#: ``stages_from`` (its stages came from a separate staged run) nor ``repeats_ended``;
#: /3 had none of the parts of "why is my compile slow" (``--cache``, ``--xla``, the
#: constants passed as arguments); /4 had no ``effort`` (``--effort``: XLA's lower effort
#: settings), which reads as not measured; /5 saved every warning and note as its sentence
#: (/6 saves a fact, ``{"kind": ...}``, which an older jitmagic cannot read), and a
#: sentence still loads and is shown as it was. ``budget_s`` and the parts' ``rounds`` and
#: ``rounds_ended`` were added to /6 (keys an older reader skips): absent, not recorded.
READABLE = ("jitmagic.comparison/1", "jitmagic.comparison/2", "jitmagic.comparison/3",
            "jitmagic.comparison/4", "jitmagic.comparison/5", SCHEMA)
#: The optional provenance fields of /3, written only when set.
PROVENANCE = ("source", "file", "options", "created")

#: The per-call phase, which XLA's program decides once both variants compile to it.
EXECUTE = "execute_s"


@dataclass(frozen=True)
class Comparison(Shown, Saved):
    """Flat against nested jit for one entry function: the report object."""

    entry: str
    variants: dict[str, VariantResult]
    outputs_match: bool | None
    max_abs_diff: float | None = None
    wall_s: float = math.nan
    #: The whole measurement's wall time, the parts after flat against nested included
    #: (NaN: none ran, or a report before it): ``wall_s`` is flat against nested alone.
    whole_s: float = math.nan
    env: dict[str, Any] = field(default_factory=dict)
    #: What the measuring noted as it ran (facts worded in :mod:`jitmagic.render.notes`;
    #: a report saved before they were facts holds sentences): ``warnings`` says them.
    warned: tuple[Noted, ...] = ()
    stopped: str | None = None  # why the measurement ended early, if it did
    orderings: Orderings | None = None  # --vmap
    attribution: Attribution | None = None  # --attribute
    advice: Advice | None = None  # --advise
    sharding: Sharding | None = None  # where an argument is sharded
    lines: Lines | None = None  # --lines: program size per source line
    xla_passes: XlaPasses | None = None  # --xla: where XLA spends an extra profiled compile
    #: Big captured constants measured passed as arguments (where a variant captured
    #: 1 MiB or more of them); None where they were not measured.
    constant_arguments: ConstantArguments | None = None
    second_start: SecondStart | None = None  # --cache: a warm persistent cache
    effort: Effort | None = None  # --effort: XLA's lower effort settings against the default
    #: How the outputs matched (:mod:`jitmagic.model.outputs`): "exact", "rounding",
    #: "mismatch", "uncompared"; None where nothing was compared (or an older report).
    outputs_kind: str | None = None
    outputs_leaf: str | None = None  # the leaf that decided it, as a dotted path
    outputs_dtype: str | None = None  # that leaf's dtype ("float32")
    #: With ``-r auto``: why the repeats ended (:data:`.stats.verdicts.DECIDED`,
    #: :data:`.stats.verdicts.MOST_ROUNDS`, :data:`.stats.verdicts.BUDGET`); None with a
    #: fixed ``-r N``.
    repeats_ended: str | None = None
    #: ``--budget``: the seconds of rounds past the fewest the comparison and each part
    #: after it may take (as given, else the backend's; NaN: a report before it was saved).
    budget_s: float = math.nan
    #: Provenance (docs/reports.md): the cell's code (for the command, the file's text;
    #: for ``compare``, the entry's source where ``inspect`` finds it), the file measured,
    #: the options as written, and when (ISO 8601, UTC). None in /1 and /2 reports.
    source: str | None = None
    file: str | None = None
    options: str | None = None
    created: str | None = None
    #: Whether XLA compiled both variants to the same program (their optimized HLO equal
    #: instruction by instruction, names and metadata aside): then they do the same work
    #: per call, and an execute ratio is noise or dispatch (None: not compared).
    same_compiled: bool | None = None
    #: The :class:`~jitmagic.model.diff.Diff` against ``--baseline``, shown under the
    #: verdict; not saved (it belongs to the other report as much as to this one).
    baseline: Any = field(default=None, compare=False, repr=False)
    #: The records of parts of :data:`~jitmagic.model.parts.PARTS` that have no field of
    #: their own, by name: a new part needs an entry in the table, not a field here.
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

    @property
    def warnings(self) -> tuple[str, ...]:
        """What the report warns of, in words: each of ``warned`` as its renderer says it."""
        return said(self.warned)

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
        """Nested against flat for a phase, by the one rule (:func:`.stats.rule.difference`):
        ``kind`` "faster" means nesting made the phase faster. On ``clock`` ("wall" or
        "CPU", :mod:`.stats.witness`); by default the one that decides (:meth:`clock_of`).
        Between two compilations of the same program (``same_compiled``) a per-call gap
        is left undecided unless far apart (:func:`.stats.rule.gap_withheld`)."""
        clock = Clock(clock) if clock else None
        d = self._ruled(phase, clock)
        if self.withheld(phase, clock):
            return dataclasses.replace(d, kind=INCONCLUSIVE)  # the same work, per call
        return d

    def _ruled(self, phase: str, clock: Clock | None = None) -> Difference:
        clock = clock or self.clock_of(phase)
        return difference(*(on(self.judged(name).samples, phase, clock) for name in VARIANTS))

    def judged(self, name: str) -> VariantResult:
        """Variant ``name`` as the report reads it, verdict, medians, table, chart and
        causes alike: its runs, less the cold stages of those that were not cold
        (:attr:`warm_runs`, :func:`.stats.cold.cold_only`). ``variants`` keeps every run."""
        v = self.variants[name]
        samples = cold_only(v.samples, self.env.get("backend"))
        return v if samples == v.samples else dataclasses.replace(v, samples=samples)

    def _variant_dict(self, name: str) -> dict[str, Any]:
        """Variant ``name`` as saved: every run's samples, and the medians the report read."""
        return self.judged(name).to_dict() | {"samples": self.variants[name].to_dict()["samples"]}

    def withheld(self, phase: str, clock: Clock | None = None) -> bool:
        """Whether :meth:`difference` leaves ``phase`` undecided whatever the rule says:
        a per-call gap between two compilations of the same program, not far apart, is
        noise or dispatch, not the program's speed; and a cold stage on a CPU clock too
        coarse for it (:meth:`coarse`) cannot be told either way."""
        if self.coarse(phase, clock):
            return True
        return phase == EXECUTE and bool(self.same_compiled) and \
            gap_withheld(self._ruled(phase, clock))

    def coarse(self, phase: str, clock: Clock | None = None) -> bool:
        """Whether ``phase``, a cold stage, is read on CPU time in under ten ticks of the
        process's CPU clock (:func:`.stats.witness.under_ticks`; the tick is recorded
        in ``env["cpu_tick_s"]``)."""
        if (clock or self.clock_of(phase)) is not CPU or phase not in COLD_PHASES:
            return False
        return under_ticks((on(self.judged(n).samples, phase, CPU) for n in VARIANTS),
                           self.env.get("cpu_tick_s"))

    @property
    def waited_share(self) -> float | None:
        """How long the cold first calls waited for a CPU, over their wall time (None:
        not measured): how busy the machine was (:mod:`.stats.witness`)."""
        return waited_share(v.samples for v in self.variants.values())

    @property
    def busy(self) -> bool:
        """Whether the machine was busy while this was measured."""
        return is_busy(self.waited_share)

    @property
    def warm_runs(self) -> dict[str, tuple[int, ...]]:
        """Per variant, the runs whose compile was not cold (:func:`.stats.cold.warm_runs`);
        a variant with none is left out."""
        platform = self.env.get("backend")
        found = {name: warm_runs(v.samples, platform) for name, v in self.variants.items()}
        return {name: runs for name, runs in found.items() if runs}

    def clock_of(self, phase: str) -> Clock:
        """The clock that decides ``phase``: the process's CPU time on a busy machine,
        where both variants have it for every run, else wall time. A variant with no runs
        of ``phase`` (one program, measured once as flat) does not count: the flat one's
        figures are then on the clock the busy machine calls for, as the report says."""
        rows = [v.samples for v in (self.flat, self.nested) if v.samples.get(phase)]
        return clock_for(rows or [self.flat.samples], phase)

    def significant(self, phase: str) -> bool | None:
        """Whether flat and nested differ beyond the noise of their repeats; None where
        the phase was not measured."""
        d = self.difference(phase)
        return None if math.isnan(d.ratio) else d.significant

    @property
    def stopped_anywhere(self) -> str | None:
        """Why this comparison, or a part measured after it (:data:`~.parts.PARTS`), ended
        early (None: nothing did): once anything stops, nothing after it
        runs."""
        records = (self, *(self.part(p.name) for p in table.PARTS))
        return next((r.stopped for r in records if getattr(r, "stopped", None)), None)

    @property
    def why(self) -> tuple[Cause, ...]:
        """The causes of the flat first call, kind by kind: the measured savings and the
        stages, biggest first, then what was inconclusive, had nothing to gain, could not
        be measured or was not measured (:mod:`.causes.why`)."""
        return causes(self, table.part_causes())

    @property
    def verdict(self) -> Verdict:
        """What nesting did to the first call (the report words it through the stages);
        with ``--target``, where nothing ran, to each run's compile for the target."""
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
        """The text report: the answer at a glance (what ``str(result)`` and the magic
        show), or with ``verbose`` in full, every row, note and section (what ``-v``
        prints); ``width``: the most columns a line of prose takes (a table keeps its rows)."""
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
        """The clock of the causes' seconds (the section's)."""
        return self.clock_of(FIRST_CALL)

    def to_dict(self) -> dict[str, Any]:
        d = {"schema": SCHEMA, **without_outputs(super().to_dict(), self)}
        d["variants"] = {k: self._variant_dict(k) for k in self.variants}
        return d | {key: r.to_dict() for key in records() if (r := self.part(key)) is not None}

    @classmethod
    def from_dict(cls, d: Any, where: str = "") -> Comparison:
        """The comparison saved as ``d`` (a ``/1`` or ``/2`` report), every field checked.

        Raises ``ReportSchemaError`` naming the schema found, or the first field of the
        wrong kind (``variants.flat.execute_loops: expected a count, got 'x'``).
        """
        schema = d.get("schema") if isinstance(d, dict) else None
        if schema not in READABLE:
            raise ReportSchemaError(f"{where + ': ' if where else ''}cannot read a report with "
                                    f"schema {schema!r}: this jitmagic reads "
                                    f"{' or '.join(map(repr, READABLE))}")
        got = check_outputs(fields(d, cls.FIELDS, where), where)
        added: dict[str, Any] = {}
        for key, read in records().items():
            if d.get(key) is not None:
                record = read(d[key], f"{where}.{key}" if where else key)
                (got if key in _OWN_FIELDS else added)[key] = record
        return cls(**got, added=added)


def _variants(d: Any, where: str) -> dict[str, VariantResult]:
    """Both variants, flat and nested, and no other."""
    if sorted(obj(d, where)) != sorted(VARIANTS):
        fail(where, f"the variants {' and '.join(VARIANTS)}", ", ".join(d) or "none")
    return {k: VariantResult.from_dict(k, d[k], f"{where}.{k}") for k in VARIANTS}


Comparison.SPARSE = frozenset({"whole_s", "budget_s", "same_compiled", *PROVENANCE})
Comparison.FIELDS = (
    ("entry", "entry", text, REQUIRED),
    ("variants", "variants", _variants, REQUIRED),
    ("outputs_match", "outputs_match", optional(flag), None),
    ("max_abs_diff", "max_abs_diff", number_or_nan, math.nan),
    *OUTPUT_FIELDS,
    ("wall_s", "wall_s", number_or_nan, math.nan),
    ("whole_s", "whole_s", number_or_nan, math.nan),
    ("env", "env", lambda v, at: json_value(obj(v, at), at), {}),
    ("warnings", "warned", read_notes, ()),
    ("stopped", "stopped", optional(text), None),
    ("repeats_ended", "repeats_ended", optional(text), None),
    ("budget_s", "budget_s", number_or_nan, math.nan),
    ("same_compiled", "same_compiled", optional(flag), None),
    *((key, key, optional(text), None) for key in PROVENANCE),
    ("verdict", "verdict", None, None),  # derived again when read, as the causes are
    ("why", "why", None, None),
    ("why_clock", "why_clock", None, None),
)


def records() -> dict[str, Callable[[Any, str], Any]]:
    """The optional records, as written under their keys, and how each is read: the
    sharding, then every part of the table's (read at each call: a test may add one)."""
    return {"sharding": Sharding.from_dict, **{p.name: p.read for p in table.PARTS}}


#: The comparison's own fields: a part named like one has its record there, typed
#: (``result.second_start``), the others theirs in ``added``.
_OWN_FIELDS = frozenset(f.name for f in dataclasses.fields(Comparison))

"""A report against a baseline: NEW against OLD per variant and phase by the one rule
(every ratio NEW over OLD), the structure compared exactly, other machines with a warning."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from .causes.effort import COMPILE, DEFAULT, EXECUTE, Effort
from .comparison import Comparison
from .rows import PHASES, VARIANTS
from .rows import STRUCTURE as ROW_STRUCTURE
from .saved.schema import ReportSchemaError, encode, facts
from .shown import Shown, worded, worded_as
from .stats.rule import SLOWER, Difference, difference, json_number, median
from .stats.witness import WALL, Clock, clock_for, is_busy, loads_differ, on, waited_share

#: ``--fail-on-slower``'s default: a stage 20% slower, by the rule, is a regression.
FAIL_RATIO = 1.2
#: The figures compared exactly: :data:`~.rows.STRUCTURE` but the top-level equations.
STRUCTURE = tuple(key for key in ROW_STRUCTURE if key != "jaxpr_eqns_top")
#: A structure figure of NEW against OLD's (not recorded in both: one report lacks it).
FigureKind = Literal["larger", "smaller", "same", "not recorded in both"]
LARGER, SMALLER, SAME_SIZE, NOT_IN_BOTH = get_args(FigureKind)
#: ``env`` keys that are expected to differ between two runs of the same code.
UNCOMPARED_ENV = frozenset({"jitmagic", "cpu_tick_s"})
#: A structure figure: a count, or XLA's cost analysis (a float in some JAX versions).
Figure = int | float
#: What a timing stage of NEW is where the loads were too far apart to compare.
NOT_JUDGED = "not judged"
#: The two reasons a row is not judged (:func:`load_apart`, :func:`nest_apart`).
Reason = Literal["loads", "nests"]
LOADS_DIFFER, NESTS_DIFFER = get_args(Reason)


@dataclass(frozen=True)
class Apart:
    """Why rows are not judged: each side's waited share, or each side's nested helpers."""

    reason: Reason
    old: Any
    new: Any


def _not_judged(apart: Apart | None) -> str | None:
    """Why a row is not judged, in words; None: judged."""
    return worded("apart", apart) if apart else None


@dataclass(frozen=True)
class StageDiff:
    """One phase of one variant as the rule judged OLD/NEW, turned round to NEW over OLD."""

    variant: str
    phase: str
    judged: Difference
    #: The medians of the samples judged (:func:`judged_samples`), in seconds.
    old_s: float = math.nan
    new_s: float = math.nan
    clock: Clock = WALL  # the clock they were judged on (:func:`judged_clock`)
    apart: Apart | None = None

    not_judged = property(lambda self: _not_judged(self.apart))
    new_over_old = property(lambda self: _inverse(self.judged.ratio))
    low = property(lambda self: _inverse(self.judged.high))
    high = property(lambda self: _inverse(self.judged.low))
    kind = property(lambda self: NOT_JUDGED if self.not_judged else self.judged.kind)
    significant = property(lambda self: self.judged.significant and not self.not_judged)
    runs = property(lambda self: self.judged.runs)

    @property
    def label(self) -> str:
        """How a report labels it: its phase, and its clock where that is CPU time."""
        return worded("label", self) or self.phase

    @property
    def measured(self) -> bool:
        return not math.isnan(self.new_over_old)

    def slower_by(self, ratio: float) -> bool:
        """NEW is, by the rule, slower than OLD by at least ``ratio``."""
        return self.significant and self.kind == SLOWER and self.new_over_old >= ratio

    def to_dict(self) -> dict[str, Any]:
        return facts(self, "variant", "phase", "new_over_old", "low", "high", "kind",
                     "significant", "runs", "old_s", "new_s", "clock", "not_judged")


def _inverse(x: float | None) -> float:
    if x is None or math.isnan(x):
        return math.nan
    return math.inf if x == 0 else 1 / x


@dataclass(frozen=True)
class StructureDiff:
    """One structure figure of one variant, NEW against OLD, compared exactly."""

    variant: str
    figure: str
    old: Figure | None
    new: Figure | None
    apart: Apart | None = None  # why it is not judged (still shown, no gate fails on it)

    not_judged = property(lambda self: _not_judged(self.apart))

    @property
    def label(self) -> str:
        return worded("label", self) or self.figure

    @property
    def recorded(self) -> bool:
        return self.old is not None and self.new is not None

    @property
    def new_over_old(self) -> float:
        if self.old is None or self.new is None:
            return math.nan
        if self.old == 0:
            return 1.0 if self.new == 0 else math.inf
        return self.new / self.old

    @property
    def kind(self) -> FigureKind:
        if self.old is None or self.new is None:
            return NOT_IN_BOTH
        return LARGER if self.new > self.old else SMALLER if self.new < self.old else SAME_SIZE

    def larger_by(self, ratio: float) -> bool:
        """NEW's figure is judged and at least ``ratio`` times OLD's (1× never fails)."""
        return self.kind == LARGER and self.new_over_old >= ratio and not self.not_judged

    def to_dict(self) -> dict[str, Any]:
        return facts(self, "variant", "figure", "old", "new", "new_over_old", "kind",
                     "not_judged")


@dataclass(frozen=True)
class Diff(Shown):
    """NEW against OLD: one :class:`StageDiff` per variant and phase, and the warnings."""

    old_entry: str
    new_entry: str
    stages: tuple[StageDiff, ...]
    #: The ``env`` entries that differ, as (key, OLD's, NEW's).
    env_changed: tuple[tuple[str, Any, Any], ...] = ()
    old_created: str | None = None
    new_created: str | None = None
    #: Whether both reports hold the very same runs and structure (a report against itself).
    same_runs: bool = False
    structure: tuple[StructureDiff, ...] = ()
    #: Why OLD and NEW stopped early (PARTIAL), None where they did not.
    old_stopped: str | None = None
    new_stopped: str | None = None
    #: How long each side's cold runs waited for a CPU (None: not measured).
    old_waited: float | None = None
    new_waited: float | None = None
    #: The diffs of the parts that have one (:data:`DIFFERS`), where both measured them.
    parts: dict[str, Any] = field(default_factory=dict)
    #: For such a part only one report measured: that one, ``"OLD"`` or ``"NEW"``.
    measured_in: dict[str, str] = field(default_factory=dict)

    @property
    def warnings(self) -> tuple[str, ...]:
        """What qualifies the diff (another machine, JAX or entry's name), in words."""
        return worded("warnings", self) or ()

    @property
    def effort(self) -> Any:
        """``--effort`` where both reports measured it, else None."""
        return self.parts.get("effort")

    @property
    def effort_in(self) -> str | None:
        """The one report that measured ``--effort``, where only one did."""
        return self.measured_in.get("effort")

    @property
    def compared_anything(self) -> bool:
        """Whether any stage was measured in both reports, or any figure recorded in both."""
        return any(s.measured for s in self.stages) or any(f.recorded for f in self.structure)

    @property
    def new_measured_nothing(self) -> bool:
        """Whether NEW holds no timing and no structure figure at all."""
        return all(math.isnan(s.new_s) for s in self.stages) and \
            all(f.new is None for f in self.structure)

    #: In words: each side that stopped early, why the stages were judged on CPU time, why
    #: the timing stages (:func:`load_apart`) or nested rows (:func:`nest_apart`) are not.
    partial_lines = worded_as("partial lines", [])
    clock_line = worded_as("clock line")
    loads_line = worded_as("loads line")
    nest_line = worded_as("nest line")

    def not_judged_for(self, why: Reason) -> str | None:
        """The first row's reason for not being judged that is ``why`` (None: none)."""
        rows: tuple[StageDiff | StructureDiff, ...] = (*self.stages, *self.structure)
        return next((r.not_judged for r in rows if r.apart and r.apart.reason == why), None)

    def unjudged(self) -> str | None:
        """Why a gate cannot pass this diff: NEW measured nothing (None where it did)."""
        return worded("unjudged", self) if self.new_measured_nothing else None

    def stage(self, variant: str, phase: str) -> StageDiff:
        return next(s for s in self.stages if s.variant == variant and s.phase == phase)

    def regressions(self, ratio: float = FAIL_RATIO) -> list[StageDiff]:
        """The stages NEW is significantly slower in, by at least ``ratio``."""
        return [s for s in self.stages if s.slower_by(ratio)]

    def figure(self, variant: str, figure: str) -> StructureDiff:
        return next(s for s in self.structure if s.variant == variant and s.figure == figure)

    def larger(self, ratio: float) -> list[StructureDiff]:
        """The structure figures of NEW that are at least ``ratio`` times OLD's."""
        return [s for s in self.structure if s.larger_by(ratio)]

    undecided = worded_as("undecided", "")  # what a diff with nothing decided says

    def __repr__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        return facts(self, "old_entry", "new_entry", "stages", "warnings", "old_created",
                     "new_created", "same_runs", "structure", "old_stopped",
                     "new_stopped") | encode(self.parts)


def diff(old: Comparison, new: Comparison, *, force: bool = False) -> Diff:
    """NEW against OLD by the one rule; another entry's report is refused unless ``force``."""
    a, b = comparison_only(old), comparison_only(new)
    if a.entry != b.entry and not force:
        raise ReportSchemaError(f"OLD measured `{a.entry}` and NEW `{b.entry}`: a diff "
                                "compares one entry's reports; pass force=True (the "
                                "command's --force) if they are the same function renamed")
    nests = nest_apart(a, b)
    stages = tuple(stage_diff(a, b, v, p, nests if v == "nested" else None)
                   for v in VARIANTS for p in PHASES)
    structure = tuple(f for v in VARIANTS
                      for f in structure_diffs(a, b, v, nests if v == "nested" else None))
    same = all(a.variants[v].samples == b.variants[v].samples for v in VARIANTS) and \
        not any(f.kind in (LARGER, SMALLER) for f in structure)
    found = {name: differ(a, b) for name, differ in DIFFERS.items()}
    sides = {name: (a.part(name) is not None, b.part(name) is not None) for name in DIFFERS}
    return Diff(a.entry, b.entry, stages, env_changes(a.env, b.env), a.created, b.created,
                same_runs=same, structure=structure, old_stopped=a.stopped,
                new_stopped=b.stopped, old_waited=a.waited_share, new_waited=b.waited_share,
                parts={name: d for name, d in found.items() if d is not None},
                measured_in={n: "OLD" if x else "NEW" for n, (x, y) in sides.items() if x != y})


def gate_ratio(text: str, option: str) -> float:
    """The RATIO written after a gate's ``option``: a finite number of at least 1."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and value >= 1):
        raise ValueError(f"{option} takes a ratio, a finite number of at least 1 (NEW at "
                         f"least RATIO times OLD fails), not {text!r}: write, for example, "
                         f"{option}=1.3")
    return value


def comparison_only(r: Any) -> Comparison:
    """``r``, a comparison; ``ReportSchemaError`` for any other record."""
    if not isinstance(r, Comparison):
        raise ReportSchemaError(f"diff compares two comparisons, not a {type(r).__name__}: "
                                "give two comparisons' reports (of a sweep, two of its points "
                                "in Python: jitmagic.diff(sweep.points[0], sweep.points[1]))")
    return r


def judged_samples(old: Comparison, new: Comparison, variant: str,
                   phase: str) -> tuple[list[float], list[float]]:
    """The samples (OLD's, NEW's) one timing stage is judged on, on :func:`judged_clock`."""
    clock = judged_clock(old, new, variant, phase)
    return on(old.judged(variant).samples, phase, clock), \
        on(new.judged(variant).samples, phase, clock)


def judged_clock(old: Comparison, new: Comparison, variant: str, phase: str) -> Clock:
    """:func:`clock_for` where either report was busy."""
    return clock_for([old.variants[variant].samples, new.variants[variant].samples], phase,
                     busy=old.busy or new.busy)


def stage_diff(old: Comparison, new: Comparison, variant: str, phase: str,
               apart: Apart | None = None) -> StageDiff:
    """One phase of one variant by the one rule; not judged where loads differ or ``apart``."""
    before, after = judged_samples(old, new, variant, phase)
    return StageDiff(variant, phase, difference(before, after), median(before), median(after),
                     judged_clock(old, new, variant, phase), load_apart(old, new) or apart)


def nest_apart(old: Comparison, new: Comparison) -> Apart | None:
    """Each side's helpers, where the nested variants nest different ones."""
    a, b = old.nested.helpers, new.nested.helpers
    return None if set(a) == set(b) else Apart(NESTS_DIFFER, a, b)


def load_apart(old: Comparison, new: Comparison) -> Apart | None:
    """Each side's waited share, where the loads differ too much to judge any timing stage."""
    a, b = old.waited_share, new.waited_share
    return Apart(LOADS_DIFFER, a, b) if loads_differ(a, b) else None


def structure_diffs(old: Comparison, new: Comparison, variant: str,
                    apart: Apart | None = None) -> list[StructureDiff]:
    """Every :data:`STRUCTURE` figure of ``variant`` that either report holds."""
    a, b = old.variants[variant], new.variants[variant]
    pairs = ((name, structure_figure(a, name), structure_figure(b, name))
             for name in STRUCTURE)
    return [StructureDiff(variant, name, x, y, apart) for name, x, y in pairs
            if x is not None or y is not None]


def structure_figure(row: Any, name: str) -> Figure | None:
    """A variant's finite numeric figure ``name``, or None."""
    value = getattr(row, name, None)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


def env_changes(old: dict[str, Any], new: dict[str, Any]) -> tuple[tuple[str, Any, Any], ...]:
    """Every ``env`` entry that differs, as (key, OLD's, NEW's): what the machine, JAX and
    the samples' place were, not what a run measured (the CPU clock's step, a sample's cost)."""
    a, b = _setting(old), _setting(new)
    return tuple((k, a.get(k), b.get(k)) for k in dict.fromkeys([*a, *b])
                 if k not in UNCOMPARED_ENV and a.get(k) != b.get(k))


def _setting(env: dict[str, Any]) -> dict[str, Any]:
    """``env`` with where the cold samples were taken in place of what they cost."""
    where = env.get("cold_samples")
    return {**env, "cold_samples": where.get("where")} if isinstance(where, dict) else env


# --- ``--effort`` in both reports ------------------------------------------------------


@dataclass(frozen=True)
class SettingRatios:
    """One setting against its own report's default, in OLD and in NEW."""

    setting: str
    old_compile: Difference
    new_compile: Difference
    old_execute: Difference
    new_execute: Difference

    def to_dict(self) -> dict[str, Any]:
        return {"setting": self.setting, **{
            f"{side}_{what}_ratio": json_number(getattr(self, f"{side}_{what}").ratio)
            for what in ("compile", "execute") for side in ("old", "new")}}


@dataclass(frozen=True)
class EffortDiff:
    """``--effort`` in both reports, NEW against OLD per setting (a :class:`StageDiff`'s
    ``variant``) by the one rule on one ``clock``; no gate judges it."""

    clock: Clock
    stages: tuple[StageDiff, ...]
    only_old: tuple[str, ...] = ()
    only_new: tuple[str, ...] = ()
    ratios: tuple[SettingRatios, ...] = ()  # each setting in both against its default

    @property
    def settings(self) -> list[str]:
        """The rows compared, the default first."""
        return list(dict.fromkeys(s.variant for s in self.stages))

    def stage(self, setting: str, phase: str) -> StageDiff:
        return next(s for s in self.stages if s.variant == setting and s.phase == phase)

    def to_dict(self) -> dict[str, Any]:
        return facts(self, "clock", "stages", "only_old", "only_new", "ratios")


def effort_diff(old: Comparison, new: Comparison) -> EffortDiff | None:
    """``--effort``, NEW against OLD, where both reports measured it (None otherwise)."""
    a, b = old.part("effort"), new.part("effort")
    if not (isinstance(a, Effort) and isinstance(b, Effort)):
        return None
    both = [DEFAULT, *(n for n in a.rows if n in b.rows)]
    pairs = {n: (a.series[n], b.series[n]) for n in both}
    # the clock of judged_clock: CPU time where either report or its effort was busy
    sides = list(zip(*pairs.values(), strict=True))  # OLD's rows, NEW's
    busy = old.busy or new.busy or any(is_busy(waited_share(rows)) for rows in sides)
    clock = clock_for([r for rows in sides for r in rows if r.get(COMPILE)], COMPILE, EXECUTE,
                      busy=busy)
    stages = []
    for name, (x, y) in pairs.items():
        for phase in (COMPILE, EXECUTE):
            before, after = on(x, phase, clock), on(y, phase, clock)
            stages.append(StageDiff(name, phase, difference(before, after), median(before),
                                    median(after), clock))

    def against(name: str, side: int, phase: str) -> Difference:
        return difference(on(pairs[DEFAULT][side], phase, clock),
                          on(pairs[name][side], phase, clock))
    ratios = tuple(SettingRatios(n, against(n, 0, COMPILE), against(n, 1, COMPILE),
                                 against(n, 0, EXECUTE), against(n, 1, EXECUTE))
                   for n in both[1:])
    return EffortDiff(clock, tuple(stages), tuple(n for n in a.rows if n not in b.rows),
                      tuple(n for n in b.rows if n not in a.rows), ratios)


#: Each part a diff compares (by its name in :data:`.parts.PARTS`), and its differ.
DIFFERS: dict[str, Callable[[Comparison, Comparison], Any]] = {"effort": effort_diff}

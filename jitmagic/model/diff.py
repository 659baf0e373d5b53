"""A report against a baseline: what changed, stage by stage, by the one rule.

:func:`diff` judges NEW against OLD (two :class:`~jitmagic.model.comparison.Comparison`
records) with :func:`jitmagic.model.stats.rule.difference`,
per variant and phase; every ratio is NEW over OLD (``new_over_old`` above 1: NEW
slower). The program's structure (:data:`STRUCTURE`), which moves only with the code,
is compared exactly, with no rule (:class:`StructureDiff`). Reports from another machine
or JAX still compare, with a warning. A PARTIAL report compares only what both measured
and says so (:meth:`Diff.partial_lines`); with nothing measured in both the diff says
"nothing to compare", and a gate fails where NEW measured nothing (:meth:`Diff.unjudged`).
Under materially different loads (:func:`load_apart`) no clock compares like with like:
the timing stages are shown, not judged, and say why.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Literal
from typing import get_args

from .causes.effort_diff import effort_diff
from .comparison import Comparison
from .rows import PHASES
from .rows import STRUCTURE as ROW_STRUCTURE
from .rows import VARIANTS
from .saved.schema import ReportSchemaError
from .saved.schema import encode
from .saved.schema import facts
from .shown import Shown
from .shown import worded
from .stage_diff import LOADS_DIFFER
from .stage_diff import NESTS_DIFFER
from .stage_diff import NOT_JUDGED as NOT_JUDGED  # where the diff's renderer reads it
from .stage_diff import Apart
from .stage_diff import Reason
from .stage_diff import StageDiff
from .stats.rule import difference
from .stats.rule import median
from .stats.witness import CPU
from .stats.witness import WALL
from .stats.witness import Clock
from .stats.witness import has_cpu
from .stats.witness import loads_differ
from .stats.witness import on

#: ``--fail-on-slower``'s default: a stage 20% slower, by the rule, is a regression.
FAIL_RATIO = 1.2
#: The figures of a variant that move only with the code (and JAX's version), by their
#: ``VariantResult`` field, compared exactly: :data:`~.rows.STRUCTURE` but the top-level
#: equations (a part of ``jaxpr_eqns``). Read with ``getattr`` and diffed where both
#: reports hold them, so an older report without XLA's figures still diffs.
STRUCTURE = tuple(key for key in ROW_STRUCTURE if key != "jaxpr_eqns_top")
#: What a structure figure of NEW is, against OLD's: exact comparison, no rule (larger,
#: smaller, the same), or not recorded in both (one report holds it, an older one not).
FigureKind = Literal["larger", "smaller", "same", "not recorded in both"]
LARGER, SMALLER, SAME_SIZE, NOT_IN_BOTH = get_args(FigureKind)
#: ``env`` keys that are expected to differ between two runs of the same code.
UNCOMPARED_ENV = frozenset({"jitmagic"})


#: A structure figure: a count, or XLA's cost analysis (a float in some JAX versions).
Figure = int | float


@dataclass(frozen=True)
class StructureDiff:
    """One structure figure of one variant (:data:`STRUCTURE`), NEW against OLD.

    These move only with the code, so they are compared exactly: ``kind`` is
    :data:`LARGER`, :data:`SMALLER` or :data:`SAME_SIZE` (:data:`NOT_IN_BOTH` where one
    report does not hold the figure); ``new_over_old`` is NEW / OLD (infinite where OLD
    was 0 and NEW is not; NaN where one is missing).
    """

    variant: str
    figure: str
    old: Figure | None
    new: Figure | None
    #: Why the figure is not judged (:func:`nest_apart`), None where it is: it is still
    #: shown, and no gate fails on it.
    apart: Apart | None = None

    @property
    def not_judged(self) -> str | None:
        """Why it is not judged, in words; None: judged."""
        return worded("apart", self.apart) if self.apart else None

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
        """NEW's figure is at least ``ratio`` times OLD's (and larger: 1× never fails), and
        it is judged."""
        return self.kind == LARGER and self.new_over_old >= ratio and not self.not_judged

    def to_dict(self) -> dict[str, Any]:
        return facts(self, "variant", "figure", "old", "new", "new_over_old", "kind",
                     "not_judged")


@dataclass(frozen=True)
class Diff(Shown):
    """NEW against OLD: one :class:`StageDiff` per variant and phase, and the warnings
    (another machine, another JAX) that qualify them."""

    old_entry: str
    new_entry: str
    stages: tuple[StageDiff, ...]
    #: The ``env`` entries that differ, as (key, OLD's, NEW's) (:func:`env_changes`).
    env_changed: tuple[tuple[str, Any, Any], ...] = ()
    old_created: str | None = None
    new_created: str | None = None
    #: Whether both reports hold the very same runs and structure (a report against
    #: itself, or a copy).
    same_runs: bool = False
    #: The structure figures either report holds, per variant (:class:`StructureDiff`).
    structure: tuple[StructureDiff, ...] = ()
    #: Why OLD and NEW stopped early (PARTIAL: their ``stopped``), None where they did not.
    old_stopped: str | None = None
    new_stopped: str | None = None
    #: How long each side's cold runs waited for a CPU (:attr:`Comparison.waited_share`):
    #: why a stage was judged on CPU time (None: not measured).
    old_waited: float | None = None
    new_waited: float | None = None
    #: The diffs of the parts of the table (:data:`~.parts.PARTS`) that have one, by
    #: name, where both reports measured the part (``--effort``: an
    #: :class:`~.causes.effort_diff.EffortDiff`).
    parts: dict[str, Any] = field(default_factory=dict)
    #: For such a part that one report measured and the other did not, that one:
    #: ``"OLD"`` or ``"NEW"``.
    measured_in: dict[str, str] = field(default_factory=dict)

    @property
    def warnings(self) -> tuple[str, ...]:
        """What qualifies the diff (another machine, another JAX, another entry's name),
        as the registered renderer words it."""
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
        """Whether NEW holds no timing and no structure figure at all (a PARTIAL report
        stopped before its first run, or one whose variants both failed)."""
        return all(math.isnan(s.new_s) for s in self.stages) and \
            all(f.new is None for f in self.structure)

    def partial_lines(self) -> list[str]:
        """``NEW is PARTIAL: <why it stopped>; compared only what both measured``, a line
        for each side that stopped early (none where neither did)."""
        return worded("partial lines", self) or []

    def clock_line(self) -> str | None:
        """Why the stages were judged on CPU time, where any was: which side was measured
        on a busy machine, and how long its runs waited (None where none was, or where
        the stages were not judged: :meth:`loads_line` says why)."""
        return worded("clock line", self)

    def loads_line(self) -> str | None:
        """Why the timing stages are not judged, where they are not (:func:`load_apart`):
        ``the loads differ (...): the timing stages are not judged, ...`` (None: judged)."""
        return worded("loads line", self)

    def nest_line(self) -> str | None:
        """Why the nested rows are not judged, where they are not (:func:`nest_apart`);
        None where they are."""
        return worded("nest line", self)

    def not_judged_for(self, why: Reason) -> str | None:
        """The first row's reason for not being judged that begins with ``why``
        (:data:`LOADS_DIFFER`, :data:`NESTS_DIFFER`), a stage's or a figure's; None."""
        rows: tuple[StageDiff | StructureDiff, ...] = (*self.stages, *self.structure)
        return next((r.not_judged for r in rows if r.apart and r.apart.reason == why), None)

    def unjudged(self) -> str | None:
        """Why a gate cannot pass this diff: NEW measured nothing (None where it did). A
        gate given a report that measured nothing fails, rather than pass on nothing."""
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

    def undecided(self) -> str:
        """What a diff with no stage slower or faster says: nothing to compare, the same,
        or not known."""
        return worded("undecided", self) or ""

    def __repr__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        return facts(self, "old_entry", "new_entry", "stages", "warnings", "old_created",
                     "new_created", "same_runs", "structure", "old_stopped",
                     "new_stopped") | encode(self.parts)


def diff(old: Comparison, new: Comparison, *, force: bool = False) -> Diff:
    """NEW against OLD, per variant and phase, by :func:`jitmagic.model.stats.rule.difference`.

    ``old`` and ``new`` are comparisons (a sweep is refused: diff two of its points;
    :func:`jitmagic.model.reports.diffs.diff_any` loads saved paths first). Reports of
    differently named entries are refused unless ``force`` (then the diff warns). A
    PARTIAL report (``stopped`` set) compares what both measured, and the diff names it.
    Raises ``ReportSchemaError`` for a record that is not a comparison, or another
    entry's.
    """
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
    return Diff(a.entry, b.entry, stages, env_changes(a.env, b.env), a.created, b.created,
                same_runs=same, structure=structure, old_stopped=a.stopped,
                new_stopped=b.stopped,
                old_waited=a.waited_share, new_waited=b.waited_share,
                parts=part_diffs(a, b), measured_in=measured_in(a, b))


#: The parts a diff compares, by their record's key in the table of parts
#: (:data:`.parts.PARTS`): each one's differ, NEW against OLD where both reports measured
#: it (``(old, new) -> record or None``). A part not here is not compared.
DIFFERS: dict[str, Callable[[Comparison, Comparison], Any]] = {"effort": effort_diff}


def part_diffs(old: Comparison, new: Comparison) -> dict[str, Any]:
    """The diffs of the table's parts that have one, where both reports measured them."""
    found = {name: differ(old, new) for name, differ in DIFFERS.items()}
    return {name: d for name, d in found.items() if d is not None}


def measured_in(old: Comparison, new: Comparison) -> dict[str, str]:
    """For each part of the table that has a diff, the one report that measured it
    (``"OLD"`` or ``"NEW"``), where only one did."""
    sides = {name: (old.part(name) is not None, new.part(name) is not None) for name in DIFFERS}
    return {name: "OLD" if a else "NEW" for name, (a, b) in sides.items() if a != b}


def gate_ratio(text: str, option: str) -> float:
    """The RATIO written after a gate's ``option`` (``--fail-on-slower``,
    ``--fail-on-larger``, the plugin's): a finite number of at least 1. ``ValueError``
    saying what to write instead for anything else (0, a negative, nan, inf, a word),
    which would make the gate fail on everything or on nothing."""
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
    """``r``, a comparison; ``ReportSchemaError`` saying what to diff instead for any other
    record (a sweep, a lines table)."""
    if not isinstance(r, Comparison):
        raise ReportSchemaError(f"diff compares two comparisons, not a {type(r).__name__}: "
                                "for a sweep, diff two of its points (sweep.points[i])")
    return r


def judged_samples(old: Comparison, new: Comparison, variant: str,
                   phase: str) -> tuple[list[float], list[float]]:
    """The samples (OLD's, NEW's) that one timing stage is judged on, by every diff and
    gate (``--fail-on-slower``, ``--baseline``, the pytest plugin): the one place that
    chooses them. Wall seconds, or the process's CPU seconds where either side was
    measured on a busy machine and both hold them for every run (:func:`judged_clock`),
    of the runs each report's own verdict read (a run that was not cold left out:
    :meth:`Comparison.judged`)."""
    clock = judged_clock(old, new, variant, phase)
    return on(old.judged(variant).samples, phase, clock), \
        on(new.judged(variant).samples, phase, clock)


def judged_clock(old: Comparison, new: Comparison, variant: str, phase: str) -> Clock:
    """The clock a stage of ``variant`` is judged on between two reports: CPU time where
    either was measured on a busy machine (wall time there moves with the load, not the
    code) and both have it for every run; else wall time, as reports before it hold."""
    if not (old.busy or new.busy):
        return WALL
    rows = (old.variants[variant].samples, new.variants[variant].samples)
    return CPU if all(has_cpu(r, phase) for r in rows) else WALL


def stage_diff(old: Comparison, new: Comparison, variant: str, phase: str,
               apart: Apart | None = None) -> StageDiff:
    """One phase of one variant by the one rule (``before`` OLD, ``after`` NEW), on the
    samples :func:`judged_samples` chooses; not judged where the loads differ, or for
    ``apart`` (why else not: :func:`nest_apart`).

    The rule's ratio is OLD/NEW; it is turned round here, and so is its interval."""
    before, after = judged_samples(old, new, variant, phase)
    return StageDiff(variant, phase, difference(before, after), median(before), median(after),
                     judged_clock(old, new, variant, phase), load_apart(old, new) or apart)


def nest_apart(old: Comparison, new: Comparison) -> Apart | None:
    """Where the nested variants nest different helpers (``--nest``, or helpers added,
    renamed or gone), each side's helpers; else None: NEW's nested variant is then
    another choice, and its rows compare that choice, not the code."""
    a, b = old.nested.helpers, new.nested.helpers
    return None if set(a) == set(b) else Apart(NESTS_DIFFER, a, b)


def load_apart(old: Comparison, new: Comparison) -> Apart | None:
    """Where OLD and NEW were measured under materially different loads
    (:func:`~.stats.witness.loads_differ`), each side's waited share; else None. There
    neither clock compares like with like: wall time stretches with the wait, and the
    same code's CPU time moved and spread with the load (docs/significance.md), so a
    timing stage is not judged and no gate fails on it."""
    a, b = old.waited_share, new.waited_share
    return Apart(LOADS_DIFFER, a, b) if loads_differ(a, b) else None


def structure_diffs(old: Comparison, new: Comparison, variant: str,
                    apart: Apart | None = None) -> list[StructureDiff]:
    """Every :data:`STRUCTURE` figure of ``variant`` that either report holds, NEW
    against OLD (a figure neither holds, such as cost analysis before it was recorded,
    is left out); not judged for ``apart`` (why: :func:`nest_apart`)."""
    a, b = old.variants[variant], new.variants[variant]
    pairs = ((name, structure_figure(a, name), structure_figure(b, name))
             for name in STRUCTURE)
    return [StructureDiff(variant, name, x, y, apart) for name, x, y in pairs
            if x is not None or y is not None]


def structure_figure(row: Any, name: str) -> Figure | None:
    """A variant's figure ``name``, or None where its record has no such field or no value
    (a bool or a non-finite number is no figure: a hand-edited report's, ignored)."""
    value = getattr(row, name, None)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


def env_changes(old: dict[str, Any], new: dict[str, Any]) -> tuple[tuple[str, Any, Any], ...]:
    """Every ``env`` entry that differs (another machine, another JAX), as (key, OLD's,
    NEW's): the two reports still compare, but a change may be the machine's, not the
    code's (the diff's warnings say so)."""
    return tuple((k, old.get(k), new.get(k)) for k in dict.fromkeys([*old, *new])
                 if k not in UNCOMPARED_ENV and old.get(k) != new.get(k))

"""A report against a baseline: what changed, stage by stage, by the one rule.

:func:`diff` judges NEW against OLD (two :class:`~jitmagic.model.comparison.Comparison`
records, or the paths of saved reports) with :func:`jitmagic.model.stats.rule.difference`,
per variant (flat, nested) and per phase. Every ratio is said as NEW over OLD:
``new_over_old`` above 1 is NEW slower ("NEW is 1.3× slower"). Reports measured on
another machine or JAX version still compare, with a warning naming what differs.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from .comparison import Comparison, ReportSchemaError
from .rows import PHASE_LABELS, PHASES, VARIANTS
from .saved.storage import load
from .shown import Shown
from .stats.rule import SAME, SLOWER, difference, json_number

#: ``--fail-on-slower``'s default: a stage 20% slower, by the rule, is a regression.
FAIL_RATIO = 1.2
#: ``env`` keys that are expected to differ between two runs of the same code.
UNCOMPARED_ENV = frozenset({"jitmagic"})


@dataclass(frozen=True)
class StageDiff:
    """One phase of one variant, NEW against OLD.

    ``new_over_old`` is median(NEW) / median(OLD) (above 1: NEW slower; NaN: not
    measured in one of them); ``low``/``high`` its interval (the rule's, wide by design:
    docs/significance.md) where the rule gives one (NaN otherwise); ``kind`` is about
    NEW: "faster", "slower", "no measurable difference" or "inconclusive";
    ``significant`` whether the rule called it faster or slower.
    """

    variant: str
    phase: str
    new_over_old: float
    low: float
    high: float
    kind: str
    significant: bool
    runs: int = 0

    @property
    def label(self) -> str:
        return PHASE_LABELS.get(self.phase, self.phase)

    @property
    def measured(self) -> bool:
        return not math.isnan(self.new_over_old)

    def slower_by(self, ratio: float) -> bool:
        """NEW is, by the rule, slower than OLD by at least ``ratio``."""
        return self.significant and self.kind == SLOWER and self.new_over_old >= ratio

    def to_dict(self) -> dict[str, Any]:
        return {"variant": self.variant, "phase": self.phase,
                "new_over_old": json_number(self.new_over_old), "low": json_number(self.low),
                "high": json_number(self.high), "kind": self.kind, "significant": self.significant,
                "runs": self.runs}


@dataclass(frozen=True)
class Diff(Shown):
    """NEW against OLD: one :class:`StageDiff` per variant and phase, and the warnings
    (another machine, another JAX) that qualify them."""

    old_entry: str
    new_entry: str
    stages: tuple[StageDiff, ...]
    warnings: tuple[str, ...] = ()
    old_created: str | None = None
    new_created: str | None = None
    #: Whether both reports hold the very same runs (a report against itself, or a copy).
    same_runs: bool = False

    def stage(self, variant: str, phase: str) -> StageDiff:
        return next(s for s in self.stages if s.variant == variant and s.phase == phase)

    def regressions(self, ratio: float = FAIL_RATIO) -> list[StageDiff]:
        """The stages NEW is significantly slower in, by at least ``ratio``."""
        return [s for s in self.stages if s.slower_by(ratio)]

    def summary(self) -> str:
        """``<Diff model: 2 stages slower, 1 faster>``: one line, no renderer needed."""
        slower = sum(s.significant and s.kind == SLOWER for s in self.stages)
        faster = sum(s.significant and s.kind != SLOWER for s in self.stages)
        said = ", ".join(f"{n} stage{'s' * (n != 1)} {what}"
                         for n, what in ((slower, "slower"), (faster, "faster")) if n)
        return f"<Diff {self.new_entry}: {said or self.undecided()}>"

    def undecided(self) -> str:
        """What a diff with no stage slower or faster says: the same, or not known."""
        if self.same_runs:
            return "the two reports hold the same runs (a report against itself, or a copy)"
        if all(s.kind == SAME for s in self.stages if s.measured):
            return "no measurable difference"
        return "no stage measurably slower or faster (some inconclusive)"

    def __repr__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        return {"old_entry": self.old_entry, "new_entry": self.new_entry,
                "stages": [s.to_dict() for s in self.stages], "warnings": list(self.warnings),
                "old_created": self.old_created, "new_created": self.new_created,
                "same_runs": self.same_runs}


def diff(old: Comparison | str | os.PathLike, new: Comparison | str | os.PathLike, *,
         force: bool = False) -> Diff:
    """NEW against OLD, per variant and phase, by :func:`jitmagic.model.stats.rule.difference`.

    ``old`` and ``new`` are comparisons or paths of saved reports (a sweep is refused:
    diff two of its points). Reports of differently named entries are refused unless
    ``force`` (then the diff warns). Raises ``ReportSchemaError`` for a file that is not
    a comparison report or another entry's, ``FileNotFoundError`` for a missing one.
    """
    a, b = as_comparison(old), as_comparison(new)
    if a.entry != b.entry and not force:
        raise ReportSchemaError(f"OLD measured `{a.entry}` and NEW `{b.entry}`: a diff "
                                "compares one entry's reports; pass force=True (the "
                                "command's --force) if they are the same function renamed")
    stages = tuple(stage_diff(a, b, v, p) for v in VARIANTS for p in PHASES)
    warnings = (*env_warnings(a.env, b.env), *entry_warnings(a, b))
    same = all(a.variants[v].samples == b.variants[v].samples for v in VARIANTS)
    return Diff(a.entry, b.entry, stages, warnings, a.created, b.created, same_runs=same)


def as_comparison(r: Any) -> Comparison:
    """``r`` itself, or the comparison saved at the path ``r``."""
    if isinstance(r, str | os.PathLike):
        r = load(r)
    if not isinstance(r, Comparison):
        raise ReportSchemaError(f"diff compares two comparisons, not a {type(r).__name__}: "
                                "for a sweep, diff two of its points (sweep.points[i])")
    return r


def stage_diff(old: Comparison, new: Comparison, variant: str, phase: str) -> StageDiff:
    """One phase of one variant by the one rule (``before`` OLD, ``after`` NEW).

    The rule's ratio is OLD/NEW; it is turned round here, and so is its interval."""
    d = difference(old.variants[variant].samples.get(phase, []),
                   new.variants[variant].samples.get(phase, []))
    return StageDiff(variant, phase, _inverse(d.ratio), _inverse(d.high), _inverse(d.low),
                     d.kind, d.significant, d.runs)


def _inverse(x: float | None) -> float:
    if x is None or math.isnan(x):
        return math.nan
    return math.inf if x == 0 else 1 / x


def env_warnings(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """One warning naming every ``env`` entry that differs (another machine, another JAX):
    the two reports still compare, but a change may be the machine's, not the code's."""
    keys = [k for k in dict.fromkeys([*old, *new])
            if k not in UNCOMPARED_ENV and old.get(k) != new.get(k)]
    if not keys:
        return []
    changes = "; ".join(f"{k} {_env(old.get(k))} → {_env(new.get(k))}" for k in keys)
    return [f"the reports were measured in different environments ({changes}): a difference "
            "may come from the machine or the versions, not the code"]


def _env(v: Any) -> str:
    if isinstance(v, list | tuple):
        return ", ".join(map(str, v)) or "none"
    return "(not recorded)" if v is None else repr(v) if v == "" else str(v)


def entry_warnings(old: Comparison, new: Comparison) -> list[str]:
    """A warning where the two reports measured differently named entries."""
    if old.entry == new.entry:
        return []
    return [f"OLD measured `{old.entry}`, NEW `{new.entry}`: are they the same function?"]

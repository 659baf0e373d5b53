"""One stage of a diff, NEW against OLD, and why a row may be left unjudged: what
:mod:`.diff` and a part's own differ (:mod:`.causes.effort_diff`, which the diff
imports) both build on."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from typing import Final
from typing import Literal

from .saved.schema import facts
from .shown import worded
from .stats.rule import SLOWER
from .stats.rule import Difference
from .stats.witness import WALL
from .stats.witness import Clock

#: What a timing stage of NEW is where OLD and NEW were measured under loads too far apart
#: to compare (:func:`.diff.load_apart`): neither faster nor slower, and no gate fails on it.
NOT_JUDGED = "not judged"
#: The two reasons a row is not judged (:func:`.diff.load_apart`, :func:`.diff.nest_apart`).
Reason = Literal["loads", "nests"]
LOADS_DIFFER: Final = "loads"
NESTS_DIFFER: Final = "nests"


@dataclass(frozen=True)
class Apart:
    """Why rows are not judged: the loads differ (``old``, ``new``: each side's waited
    share, :func:`.diff.load_apart`), or the nested variants nest different helpers (each
    side's helpers, :func:`.diff.nest_apart`). Worded by the renderer (``not_judged``)."""

    reason: Reason
    old: Any
    new: Any


@dataclass(frozen=True)
class StageDiff:
    """One phase of one variant, NEW against OLD, as the one rule judged it (``judged``:
    ``before`` OLD, ``after`` NEW, so its ratio is OLD/NEW), turned round to read as NEW
    over OLD.

    ``new_over_old`` is median(NEW) / median(OLD) (above 1: NEW slower; NaN: not
    measured in one of them); ``low``/``high`` its interval (the rule's, wide by design:
    docs/significance.md) where the rule gives one (NaN otherwise); ``kind`` is about
    NEW: "faster", "slower", "no measurable difference" or "inconclusive";
    ``significant`` whether the rule called it faster or slower.
    """

    variant: str
    phase: str
    judged: Difference
    #: The medians of the samples judged (:func:`.diff.judged_samples`), in seconds.
    old_s: float = math.nan
    new_s: float = math.nan
    #: The clock they were judged on (:func:`.diff.judged_clock`): "wall" or "CPU".
    clock: Clock = WALL
    #: Why the stage is not judged (:func:`.diff.load_apart`, :func:`.diff.nest_apart`), None where
    #: it is: its ratio and interval are still shown, its kind is :data:`NOT_JUDGED`.
    apart: Apart | None = None

    @property
    def not_judged(self) -> str | None:
        """Why it is not judged, in words (``the loads differ (...)``); None: judged."""
        return worded("apart", self.apart) if self.apart else None

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

"""The advice record: helpers ranked by the cold start each saves when nested alone.

Measured by :mod:`jitmagic.measure.parts.advice`; the method: docs/advice.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from .saved.schema import REQUIRED
from .saved.schema import Saved
from .saved.schema import count
from .saved.schema import flag
from .saved.schema import items
from .saved.schema import number
from .saved.schema import one_of
from .saved.schema import optional
from .saved.schema import positive_seconds
from .saved.schema import seconds
from .saved.schema import text
from .shown import Shown
from .stats.witness import CPU
from .stats.witness import WALL
from .stats.witness import Clock


@dataclass(frozen=True)
class Candidate(Saved):
    """One helper nested on its own, against flat."""

    helper: str
    calls: int
    saving_s: float | None
    execute_change_s: float | None
    noise_s: float | None
    significant: bool
    error: str | None = None
    #: Whether the one rule called the execute change a difference (None: not judged,
    #: a report of jitmagic 0.3, or too few samples).
    execute_significant: bool | None = None

    WHERE = "candidate"
    FIELDS = (("helper", "helper", text, REQUIRED),
              ("calls", "calls", count, REQUIRED),
              ("saving_s", "saving_s", optional(number), None),
              ("execute_change_s", "execute_change_s", optional(number), None),
              ("noise_s", "noise_s", optional(seconds), None),
              ("significant", "significant", flag, False),
              ("error", "error", optional(text), None),
              ("execute_significant", "execute_significant", optional(flag), None))


@dataclass(frozen=True)
class Advice(Shown, Saved):
    """The ranked candidates, the recommended set and what it saves against nesting all
    (``print(advice)`` and IPython show it in words, as ``--advise`` does)."""

    flat_cold_s: float
    noise_s: float | None  # the largest candidate's noise
    ranked: tuple[Candidate, ...]
    recommended: tuple[str, ...]
    recommended_saving_s: float | None
    all_nested_saving_s: float | None
    not_tried: tuple[str, ...]
    #: The cold runs the most-run set got (saved as ``repeat``, its name before 0.5).
    runs: int
    wall_s: float
    stopped: str | None = None  # why measuring ended early (PARTIAL), if it did
    #: What the one rule said of each saving ("faster": it saves; "slower": it costs;
    #: "no measurable difference", "inconclusive"); None in reports before 0.4.
    recommended_kind: str | None = None
    all_nested_kind: str | None = None
    #: The helpers "nest every helper" nests (empty in reports before 0.4).
    everything: tuple[str, ...] = ()
    #: The clock the cold starts and savings are on: ``"wall"``, or ``"CPU"`` (the
    #: process's CPU seconds) where the machine was busy; wall in reports before 0.4.
    clock: Clock = WALL

    WHERE = "advice"
    FIELDS = (
        ("ranked", "ranked", items(Candidate.from_dict), ()),
        ("recommended", "recommended", items(text), ()),
        ("recommended_saving_s", "recommended_saving_s", optional(number), None),
        ("all_nested_saving_s", "all_nested_saving_s", optional(number), None),
        ("flat_cold_s", "flat_cold_s", positive_seconds, REQUIRED),
        ("noise_s", "noise_s", optional(seconds), None),
        ("not_tried", "not_tried", items(text), ()),
        ("repeat", "runs", count, REQUIRED),
        ("wall_s", "wall_s", seconds, REQUIRED),
        ("stopped", "stopped", optional(text), None),
        ("recommended_kind", "recommended_kind", optional(text), None),
        ("all_nested_kind", "all_nested_kind", optional(text), None),
        ("everything", "everything", items(text), ()),
        ("clock", "clock", lambda v, at: Clock(one_of(WALL, CPU)(v, at)), WALL),
    )

    def summary(self) -> str:
        said = f"--nest {','.join(self.recommended)}" if self.recommended else "no helper"
        return f"<Advice: recommended {said}>"


"""The advice record (``--advise``): helpers ranked by the cold start each saves nested alone."""

from __future__ import annotations

from dataclasses import dataclass

from .saved import schema
from .shown import Shown
from .stats.witness import CPU, WALL, Clock


@dataclass(frozen=True)
class Candidate(schema.Saved):
    """One helper nested on its own, against flat."""

    helper: str = schema.saved(schema.text)
    calls: int = schema.saved(schema.count)
    saving_s: float | None = schema.saved(schema.optional(schema.number), missing=None)
    execute_change_s: float | None = schema.saved(schema.optional(schema.number), missing=None)
    noise_s: float | None = schema.saved(schema.optional(schema.seconds), missing=None)
    significant: bool = schema.saved(schema.flag, missing=False)
    error: str | None = schema.saved(schema.optional(schema.text), None)
    #: Whether the one rule called the execute change a difference (None: not judged).
    execute_significant: bool | None = schema.saved(schema.optional(schema.flag), None)

    WHERE = "candidate"


@dataclass(frozen=True)
class Advice(Shown, schema.Saved):
    """The ranked candidates, the recommended set and what it saves against nesting all."""

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
    #: What the one rule said of each saving ("faster": it saves); None before 0.4.
    recommended_kind: str | None = None
    all_nested_kind: str | None = None
    #: The helpers "nest every helper" nests (empty in reports before 0.4).
    everything: tuple[str, ...] = ()
    #: The clock the cold starts and savings are on (CPU where the machine was busy).
    clock: Clock = WALL

    WHERE = "advice"
    FIELDS = (
        ("ranked", "ranked", schema.items(Candidate.from_dict), ()),
        ("recommended", "recommended", schema.items(schema.text), ()),
        ("recommended_saving_s", "recommended_saving_s", schema.optional(schema.number), None),
        ("all_nested_saving_s", "all_nested_saving_s", schema.optional(schema.number), None),
        ("flat_cold_s", "flat_cold_s", schema.positive_seconds, schema.REQUIRED),
        ("noise_s", "noise_s", schema.optional(schema.seconds), None),
        ("not_tried", "not_tried", schema.items(schema.text), ()),
        ("repeat", "runs", schema.count, schema.REQUIRED),
        ("wall_s", "wall_s", schema.seconds, schema.REQUIRED),
        ("stopped", "stopped", schema.optional(schema.text), None),
        *schema.same(schema.optional(schema.text), None, "recommended_kind", "all_nested_kind"),
        ("everything", "everything", schema.items(schema.text), ()),
        ("clock", "clock", lambda v, at: Clock(schema.one_of(WALL, CPU)(v, at)), WALL),
    )

    def summary(self) -> str:
        said = f"--nest {','.join(self.recommended)}" if self.recommended else "no helper"
        return f"<Advice: recommended {said}>"


"""The advice record: helpers ranked by the cold start each saves when nested alone.

Measured by :mod:`jitmagic.measure.advice`, whose docstring gives the method.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

#: A saving is significant above this many standard errors (see jitmagic.measure.advice).
NOISE_FACTOR = 5


@dataclass(frozen=True)
class Candidate:
    """One helper nested on its own, against flat."""

    helper: str
    calls: int
    saving_s: float | None
    execute_change_s: float | None
    noise_s: float | None
    significant: bool
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Advice:
    """The ranked candidates, the recommended set and what it saves against nesting all."""

    flat_cold_s: float
    noise_s: float | None  # the largest candidate's noise
    ranked: tuple[Candidate, ...]
    recommended: tuple[str, ...]
    recommended_saving_s: float | None
    all_nested_saving_s: float | None
    not_tried: tuple[str, ...]
    repeat: int
    wall_s: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "ranked": [c.to_dict() for c in self.ranked],
            "recommended": list(self.recommended),
            "recommended_saving_s": self.recommended_saving_s,
            "all_nested_saving_s": self.all_nested_saving_s,
            "flat_cold_s": self.flat_cold_s,
            "noise_s": self.noise_s,
            "not_tried": list(self.not_tried),
            "repeat": self.repeat,
            "wall_s": self.wall_s,
        }

"""The record of a verdict (decided by the one rule, worded by :mod:`jitmagic.render`),
and why ``-r auto`` stopped taking rounds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..saved import schema
from ..shown import renderer
from .rule import Difference, json_number
from .witness import WALL, Clock

#: Why ``-r auto`` stopped taking rounds (saved in reports, so they never change).
DECIDED, MOST_ROUNDS, BUDGET = "decided", "most pairs", "budget"
#: How a part's record reads why its rounds ended (None: not recorded).
ROUNDS_ENDED = schema.optional(schema.one_of(DECIDED, MOST_ROUNDS, BUDGET))


@dataclass(frozen=True)
class Verdict:
    """What a verdict decided, on which clock, of which record; its words in full and in a line."""

    key: str
    difference: Difference
    clock: Clock = WALL
    subject: Any = field(default=None, compare=False, repr=False)
    chosen: str = ""

    @property
    def kind(self) -> str:
        return self.difference.kind

    @property
    def text(self) -> str:
        """The verdict in full, as the report words it."""
        return self._said("verdict")

    @property
    def headline(self) -> str:
        """The verdict in one line, shown first by every front end."""
        return self._said("verdict line")

    def _said(self, form: str) -> str:
        said = renderer(form, self.subject)
        return said(self) if said else self.kind

    def to_dict(self) -> dict[str, Any]:
        d = self.difference
        return {self.key: self.kind, "ratio": json_number(d.ratio),
                "ratio_low": json_number(d.low), "ratio_high": json_number(d.high),
                "clock": self.clock}

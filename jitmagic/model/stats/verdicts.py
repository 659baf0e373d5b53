"""The record of a verdict, and why ``-r auto`` stopped taking rounds.

Every verdict decides with the one rule, :func:`.rule.difference`; how its outcome
reads ("faster", "slower", "no measurable difference", "inconclusive", every ratio with
its interval) is :mod:`jitmagic.render.verdicts`, and which differences a record's
verdict names, and in what order, :mod:`jitmagic.render.headlines`. Derived on demand,
never stored as the source of truth.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

from ..saved import schema
from ..shown import renderer
from .rule import Difference
from .rule import json_number
from .witness import WALL
from .witness import Clock

#: Why ``-r auto`` stopped taking rounds (``Comparison.repeats_ended``): the rule decided,
#: the most rounds it takes, or its time budget ran out. The strings are saved in reports
#: (``"most pairs"`` from when a round was called a pair), so they never change.
DECIDED, MOST_ROUNDS, BUDGET = "decided", "most pairs", "budget"
#: How a part's record (``--effort``, ``--cache``'s second start, the constants passed
#: as arguments) saves its rounds: how many it took (0: not recorded, a report before
#: them) and why they ended (one of the above; None: not recorded, or a fixed count).
ROUNDS_FIELDS: tuple[schema.Field, ...] = (
    ("rounds", "rounds", schema.count, 0),
    ("rounds_ended", "rounds_ended",
     schema.optional(schema.one_of(DECIDED, MOST_ROUNDS, BUDGET)), None))


@dataclass(frozen=True)
class Verdict:
    """What a verdict decided (``key``: ``"first_call"``, ``"per_call"`` or, with
    ``--target``, ``"target_compile"``), on which
    clock, of which record (``subject``; for orderings, ``chosen`` against the other).
    Its words are the renderer's (:mod:`jitmagic.model.shown`'s registry, filled by
    :mod:`jitmagic.render`): ``text`` in full, ``headline`` in one line."""

    key: str
    difference: Difference
    #: The clock the difference is on (its ratio and interval): wall time or CPU time.
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
        """The verdict in one line, shown first (under the title) by every front end."""
        return self._said("verdict line")

    def _said(self, form: str) -> str:
        said = renderer(form, self.subject)
        return said(self) if said else self.kind

    def to_dict(self) -> dict[str, Any]:
        d = self.difference
        return {self.key: self.kind, "ratio": json_number(d.ratio),
                "ratio_low": json_number(d.low), "ratio_high": json_number(d.high),
                "clock": self.clock}

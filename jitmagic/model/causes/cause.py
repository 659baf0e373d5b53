"""What one cause of a slow first call is (:class:`Cause`, of one of the :data:`KINDS`),
and what every maker of causes shares: a measured saving as the rule judged it
(:func:`judged`), the section's clock.

A cause holds facts: its name, kind, seconds, the option that measures it, and what its
words are made of (the maker that found it, which of its cases, the comparison). Its
words (``said``, ``fix``) are the renderer's (:mod:`jitmagic.render.causes.said`,
through :mod:`jitmagic.model.shown`'s registry). Kept apart from :mod:`.why`, which
ranks the causes, so that the makers of causes in modules of their own
(:mod:`.nesting`, :mod:`.loops`) import these without a circle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import field
from enum import StrEnum
from typing import Any

from ..shown import worded
from ..stats.rule import FASTER
from ..stats.rule import INCONCLUSIVE
from ..stats.rule import Difference
from ..stats.rule import median
from ..stats.witness import FIRST_CALL
from ..stats.witness import Clock
from ..stats.witness import on
from .compared import Compared


class Kind(StrEnum):
    """What a cause is (saved by value in a report's ``why``)."""

    SAVING = "saving"
    STAGE = "stage"
    UNDECIDED = "inconclusive"
    NOTHING = "nothing to gain"
    UNMEASURABLE = "not measurable"
    NOT_MEASURED = "not measured"


class Named(StrEnum):
    """The causes' names (saved by value in a report's ``why``, under ``cause``): the
    stages, what ``--lines`` and ``--xla`` tell, the fixes measured, and the prefixes of
    a loop's name and the place of a saving in no one stage."""

    TRACING = "Python tracing"
    LOWERING = "lowering to StableHLO"
    COMPILE = "XLA compile"
    LINES = "which lines build the program"
    XLA = "where XLA spends its compile"
    CONSTANTS = "big constants"
    SECOND_START = "a second start"
    NESTING = "helpers inlined on every call"
    NO_ONE_STAGE = "no one stage"
    EFFORT = "XLA's optimization effort"
    OUT_OF_LINE = "helpers kept out of line"
    PYTHON_LOOP = "the Python loop at line "
    JAX_LOOP = "the `jax.lax."

KINDS = SAVING, STAGE, UNDECIDED, NOTHING, UNMEASURABLE, NOT_MEASURED = (
    Kind.SAVING, Kind.STAGE, Kind.UNDECIDED, Kind.NOTHING, Kind.UNMEASURABLE,
    Kind.NOT_MEASURED)


@dataclass(frozen=True)
class Cause:
    """One cause of a slow first call, of one of the :data:`KINDS`.

    ``seconds``: a saving's seconds, or a stage's median (NaN for the other kinds);
    ``option``: for one not measured, the option that measures it. ``maker`` (which
    maker of causes found it), ``case`` (which of its cases: a name of the maker's own),
    ``of`` (the comparison) and ``detail`` (a record the maker found it in: a loop, the
    effort rows) are what its words are made of: ``said``, what was measured, and
    ``fix``, what to do (empty where nothing follows), both the renderer's.
    """

    name: str
    kind: Kind
    seconds: float = math.nan
    option: str = ""
    maker: str = ""
    case: str = ""
    of: Any = field(default=None, compare=False, repr=False)
    detail: Any = field(default=None, compare=False, repr=False)

    @property
    def measured(self) -> bool:
        return self.kind != NOT_MEASURED

    @property
    def said(self) -> str:
        """What was measured, as the report says it."""
        return self._words()[0]

    @property
    def fix(self) -> str:
        """What to do, as the report says it (empty where nothing follows)."""
        return self._words()[1]

    def _words(self) -> tuple[str, str]:
        return worded("cause", self) or ("", "")

    def to_dict(self) -> dict[str, Any]:
        """Its facts, as a report saves them (its words are the report's, not saved)."""
        return {"cause": self.name, "kind": self.kind, "measured": self.measured,
                "seconds": None if math.isnan(self.seconds) else self.seconds,
                "option": self.option or None}


def judged(c: Compared, name: str, d: Difference, clock: Clock,
           samples: tuple[dict[str, list[float]], dict[str, list[float]]],
           maker: str) -> Cause:
    """A measured fix as the rule judged it on ``clock``: a saving only where it calls it
    faster, of the seconds ``samples`` (before, after) differ by on that same clock (its
    words say that clock where it is not the section's own, after the verdict: what else
    was measured follows them, never before: "took 604 ms, 326 ms less" read as a saving
    of the figure before it)."""
    if d.kind != FASTER:
        kind = UNDECIDED if d.kind == INCONCLUSIVE else NOTHING
        return Cause(name, kind, maker=maker, case="judged", of=c)
    before, after = (median(on(x, FIRST_CALL, clock)) for x in samples)
    return Cause(name, SAVING, before - after, maker=maker, case="judged", of=c)


def clock_of(c: Compared) -> Clock:
    """The one clock the section's seconds are on: the one that decides the comparison's
    first call (the process's CPU time on a busy machine, else wall time)."""
    return c.clock_of(FIRST_CALL)

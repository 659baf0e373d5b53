"""What one cause of a slow first call is (:class:`Cause`, of one of the :data:`KINDS`),
and the wording every maker of causes shares: a verdict on a fix (:func:`said_of`), a
measured saving as the rule judged it (:func:`judged`), why a part did not run.

Kept apart from :mod:`.why`, which ranks the causes, so that the makers of causes in
modules of their own (:mod:`.nesting`, :mod:`.loops`) import these without a circle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..stats.rule import FASTER
from ..stats.rule import INCONCLUSIVE
from ..stats.rule import Difference
from ..stats.rule import median
from ..stats.units import fmt_s
from ..stats.verdicts import stated
from ..stats.witness import CPU
from ..stats.witness import FIRST_CALL
from ..stats.witness import Clock
from ..stats.witness import on
from .compared import Compared

KINDS = SAVING, STAGE, UNDECIDED, NOTHING, UNMEASURABLE, NOT_MEASURED = (
    "saving", "stage", "inconclusive", "nothing to gain", "not measurable", "not measured")


@dataclass(frozen=True)
class Cause:
    """One cause of a slow first call, of one of the :data:`KINDS`.

    ``seconds``: a saving's seconds, or a stage's median (NaN for the other kinds);
    ``said``: what was measured; ``fix``: what to do (empty where nothing follows);
    ``option``: for one not measured, the option that measures it.
    """

    name: str
    kind: str
    seconds: float = math.nan
    said: str = ""
    fix: str = ""
    option: str = ""

    @property
    def measured(self) -> bool:
        return self.kind != NOT_MEASURED

    def to_dict(self) -> dict[str, Any]:
        """Its facts, as a report saves them (its words are the report's, not saved)."""
        return {"cause": self.name, "kind": self.kind, "measured": self.measured,
                "seconds": None if math.isnan(self.seconds) else self.seconds,
                "option": self.option or None}


def said_of(what: str, d: Difference, clock: Clock, section: str | None = None) -> str:
    """``the first call is 2.1× faster (1.5×–3.0×)``, ``... takes 2.1× less CPU time``,
    ``... shows no measurable difference``: the rule's verdict on ``what``
    (:func:`~jitmagic.model.stats.verdicts.stated`), led by "inconclusive" where it is;
    in a section whose figures are CPU time (``section``), a wall-time verdict says so."""
    said = stated(what, d, clock, wall_named=section == CPU)
    return f"inconclusive, {said}" if d.kind == INCONCLUSIVE else said


def judged(c: Compared, name: str, d: Difference, clock: Clock,
           samples: tuple[dict[str, list[float]], dict[str, list[float]]],
           said: str, fix: str) -> Cause:
    """A measured fix as the rule judged it on ``clock``: a saving only where it calls it
    faster, of the seconds ``samples`` (before, after) differ by on that same clock (said
    where it is not the section's own), right after the verdict ``said`` (what else was
    measured follows them, never before: "took 604 ms, 326 ms less" read as a saving of
    the figure before it)."""
    if d.kind != FASTER:
        return Cause(name, UNDECIDED if d.kind == INCONCLUSIVE else NOTHING, said=said)
    before, after = (median(on(x, FIRST_CALL, clock)) for x in samples)
    seconds = before - after
    return Cause(name, SAVING, seconds,
                 f"{said}, {fmt_s(seconds)}{of_clock(c, clock)} less", fix)


def of_clock(c: Compared, clock: Clock) -> str:
    """`` of CPU time`` / `` of wall time`` where ``clock`` is not the section's own (which
    its title names), else empty: the clock of seconds said beside a ratio."""
    if clock == clock_of(c):
        return ""
    return " of CPU time" if clock == CPU else " of wall time"


def clock_of(c: Compared) -> Clock:
    """The one clock the section's seconds are on: the one that decides the comparison's
    first call (the process's CPU time on a busy machine, else wall time)."""
    return c.clock_of(FIRST_CALL)


def why_not(c: Compared) -> str:
    """Why a part did not run: the stop that came first; else it was not asked for, or
    failed (the notes say which)."""
    return stopped_first(c) or NOT_RUN


def stopped_first(c: Compared) -> str:
    """``the measurement stopped first (stopped by --timeout after ...)``; empty where
    nothing stopped."""
    stopped = c.stopped_anywhere
    return f"the measurement stopped first ({stopped})" if stopped else ""


#: Why a part with an option did not run where nothing stopped: it was not asked for.
NOT_RUN = "not run this time"

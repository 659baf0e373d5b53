"""How one difference of the one rule reads, and the clocks' names."""

from __future__ import annotations

import math

from ..model.diff import NOT_JUDGED, StageDiff
from ..model.stats.rule import (
    FASTER,
    INCONCLUSIVE,
    MAX_PAIRS,
    MAX_PAIRS_BUSY,
    SAME,
    SLOWER,
    Difference,
)
from ..model.stats.units import counted, fmt_ratio, ratio_figures
from ..model.stats.verdicts import BUDGET, MOST_ROUNDS
from ..model.stats.witness import BUSY_SHARE, CPU, WALL, Clock

#: The one word of each of the rule's four outcomes, in every verdict, table and chart.
OUTCOME = {FASTER: "faster", SLOWER: "slower", SAME: "no measurable difference",
           INCONCLUSIVE: "inconclusive"}


def say(d: Difference, clock: Clock = WALL) -> str:
    """The rule's outcome on ``clock`` in its one word: ``2.60× faster``, ``inconclusive``, …."""
    return OUTCOME[INCONCLUSIVE] if d.kind == INCONCLUSIVE else times(d, clock)


def clock_name(clock: Clock) -> str:
    """How a clock is named beside its figures: ``CPU time`` or ``wall time``."""
    return "CPU time" if clock == CPU else "wall time"


def cpu_mark(clock: Clock, before: str = " ") -> str:
    """``" CPU time"`` after a CPU-time figure (led by ``before``); nothing on wall time."""
    return f"{before}CPU time" if clock == CPU else ""


def waited(share: float) -> str:
    """``waited for a CPU 61% of the time they were ready to run``: the one wording."""
    shown = f"{share:.1%}" if f"{share:.0%}" == f"{BUSY_SHARE:.0%}" else f"{share:.0%}"
    return f"waited for a CPU {shown} of the time they were ready to run"


def times(d: Difference, clock: Clock = WALL) -> str:
    """``15.9× faster`` / ``1.4× slower`` / ``no measurable difference`` / ``1.00×``."""
    cpu = clock == CPU
    if d.kind == SAME:
        return f"{OUTCOME[SAME]}{' in CPU time' * cpu}"
    if _level(d):
        return f"{ratio_figures(1.0)}×{' CPU time' * cpu}"
    side = ('more CPU time' if cpu else OUTCOME[SLOWER]) if turns(d) else \
        ('less CPU time' if cpu else OUTCOME[FASTER])
    return f"{ratio_figures(read(d)[0])}× {side}"


def turns(d: Difference) -> bool:
    """Whether the words turn ``d``'s ratio round (0.71× faster reads 1.40× slower)."""
    return d.kind != SAME and d.ratio < 1 and not _level(d)


def read(d: Difference) -> tuple[float, float, float]:
    """``d``'s ratio and interval ends as the words read them (turned where :func:`turns`)."""
    if turns(d):
        return 1 / d.ratio, 1 / d.high, 1 / d.low
    return d.ratio, d.low, d.high


def verb(clock: Clock, past: bool = False) -> str:
    """The verb before :func:`times`: "is", "takes" (``past``: "was", "took")."""
    if clock == CPU:
        return "took" if past else "takes"
    return "was" if past else "is"


def stated(what: str, d: Difference, clock: Clock = WALL, past: bool = False,
           wall_named: bool = False) -> str:
    """``the first call is 2× faster (1.5×–3.0×)``; ``past`` and ``wall_named`` as said."""
    if d.kind == SAME:
        said = f"{what} {'showed' if past else 'shows'} {times(d, clock)}"
    else:
        said = f"{what} {verb(clock, past)} {times(d, clock)}"
    said += " in wall time" * (wall_named and clock == WALL)
    return f"{said} {interval(d)}".rstrip()


def judged(what: str, d: Difference, clock: Clock = WALL) -> str:
    """:func:`stated`, with an undecided verdict's word first: ``what: inconclusive, …``."""
    if d.kind == INCONCLUSIVE:
        return f"{what}: {OUTCOME[INCONCLUSIVE]}, {with_interval(d, clock)}"
    return stated(what, d, clock)


def _level(d: Difference) -> bool:
    """An undecided ratio that rounds to 1.00: said with no side, its interval unturned."""
    return not d.significant and ratio_figures(d.ratio) == ratio_figures(1.0)


def interval(d: Difference, also: str = "") -> str:
    """``(2.1×–4.0×)``, turned as :func:`times` turns the ratio; ``also`` inside the brackets."""
    said = [interval_ends(*read(d)[1:])] if not math.isnan(d.low + d.high) else []
    said += [also] if also else []
    return f"({'; '.join(said)})" if said else ""


def interval_ends(low: float, high: float) -> str:
    """``2.10×–4.00×``: an interval's ends, the one way every table and sentence writes them."""
    return f"{_end(low)}×–{_end(high)}×"


def _end(x: float) -> str:
    """An interval end with the decimals it takes to show which side of 1 it lies."""
    digits = 2
    while x != 1 and round(x, digits) == 1 and digits < 6:
        digits += 1
    return ratio_figures(x) if digits == 2 else f"{x:.{digits}f}"


def with_interval(d: Difference, clock: Clock = WALL) -> str:
    """``3.2× faster (2.1×–4.0×)``."""
    return f"{times(d, clock)} {interval(d)}".rstrip()


def undecided_reason(d: Difference, ended: str | None, stopped: str | None = None) -> str:
    """Why an inconclusive gap was left undecided (``repeats_ended``, or a stop)."""
    if stopped:
        return f"the measurement was {stopped}, before the rule could decide"
    if not d.enough_data:
        return "one run a side has no spread to judge by: use -r 3 or more, or -r auto"
    if ended == BUDGET:
        return "the time budget ran out"
    if ended == MOST_ROUNDS:
        # past MAX_PAIRS only on a busy machine, which the headline says once, after this
        if MAX_PAIRS < d.runs < MAX_PAIRS_BUSY:  # busy for a while, then quiet again
            return (f"-r auto takes up to {MAX_PAIRS_BUSY} runs only while the machine is "
                    f"busy, and it was quiet again after {d.runs}")
        return f"{MAX_PAIRS_BUSY if d.runs > MAX_PAIRS else MAX_PAIRS} runs is the most " \
               "-r auto takes"
    if d.runs < MAX_PAIRS:
        return f"-r auto or a larger -r (say -r {max(2 * d.runs, MAX_PAIRS)}) may tell"
    return f"a larger -r (say -r {2 * d.runs}) or a quieter machine may tell"


def inconclusive_part(d: Difference, ended: str | None, clock: Clock = WALL,
                      stopped: str | None = None) -> str:
    """``1.9× faster (0.9×–3.9×) after 3 runs; the time budget ran out``."""
    return (f"{with_interval(d, clock)} after {counted(d.runs, 'run')}; "
            f"{undecided_reason(d, ended, stopped)}")


def stage_said(s: StageDiff) -> str:
    """What NEW did, in words: "1.30× slower", "2.00× faster", "no measurable difference"."""
    if not s.measured:
        return "not measured in both"
    if s.not_judged:
        return f"{NOT_JUDGED}: {s.not_judged.split(' (')[0]}"
    if s.kind == INCONCLUSIVE:
        return OUTCOME[INCONCLUSIVE]  # its ratio and interval are beside it
    if not s.significant:
        return OUTCOME[SAME]
    factor = s.new_over_old if s.kind == SLOWER else 1 / s.new_over_old
    return f"{fmt_ratio(factor)} {OUTCOME[s.kind]}"


def stage_interval(s: StageDiff) -> str:
    """A diff stage's interval, NEW over OLD ("—" where the rule gives none)."""
    if math.isnan(s.low) or math.isnan(s.high):
        return "—"
    return interval_ends(s.low, s.high)

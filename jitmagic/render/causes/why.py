"""The "why is the first call slow" section: measured savings, where time goes, the rest."""

from __future__ import annotations

import math

from ...model.causes.cause import KINDS
from ...model.causes.cause import NOT_MEASURED
from ...model.causes.cause import NOTHING
from ...model.causes.cause import SAVING
from ...model.causes.cause import STAGE
from ...model.causes.cause import UNDECIDED
from ...model.causes.cause import UNMEASURABLE
from ...model.causes.cause import Cause
from ...model.causes.cause import clock_of
from ...model.causes.cause import is_rewrite
from ...model.comparison import Comparison
from ...model.stats.rule import median
from ...model.stats.units import counted
from ...model.stats.units import fmt_s
from ...model.stats.witness import CPU
from ...model.stats.witness import Clock
from ...model.stats.witness import on
from ..blocks import Block
from ..blocks import Heading
from ..blocks import Html
from ..blocks import Para
from ..blocks import answer_first
from ..blocks import as_html
from ..blocks import as_text
from .said import NOT_RUN
from .said import stopped_first

#: Said under two or more measured seconds.
OVERLAP = ("the causes overlap (a big constant's cost is part of XLA's compile; a warm cache "
           "skips the compile), so their seconds do not add up")
#: How each kind that has no seconds is introduced, in order.
UNRANKED = ((UNDECIDED, "inconclusive (more runs may tell)"),
            (NOTHING, "nothing measurable to gain"), (UNMEASURABLE, "not measurable here"))


#: What the section folds (in HTML) or shows only with ``-v`` (in text).
FOLDED = "every cause in full: its figures, the stages, what was not measured"


def section(c: Comparison, verbose: bool = False) -> tuple[str, Html] | None:
    """The section as (text, HTML): the answer first, the causes in full after it."""
    full = blocks(c)
    if not full or verbose:
        return (as_text(full), as_html(full)) if full else None
    return answer_first(answer(c), full[1:], FOLDED)


def answer(c: Comparison) -> list[Block]:
    """What ``--why`` asks, briefly: the biggest saving and its fix, then where time goes."""
    of = _by_kind(c)
    clock = clock_of(c)
    first = median(on(c.judged("flat").samples, "first_call_s", clock))
    lines = []
    if of[SAVING]:
        x, more = of[SAVING][0], len(of[SAVING]) - 1
        fix = f"; what to do: {x.fix}" if x.fix else ""
        others = f" (and {counted(more, 'more measured saving')})" if more else ""
        lines.append(f"the biggest measured saving: {x.name}, {fmt_s(x.seconds)}{fix}{others}")
    lines.append(_stages(of[STAGE], first) if of[STAGE] else
                 f"no stage of the first call was measured: {stopped_first(c)}")
    if not of[SAVING]:
        lines += [f"  {x.name}: what to do: {x.fix}" for x in of[STAGE] if x.fix][:1]
    return [Heading(_title(first, clock)), Para(lines)]


def _by_kind(c: Comparison) -> dict[str, list[Cause]]:
    return {kind: [x for x in c.why if x.kind == kind] for kind in KINDS}


def blocks(c: Comparison) -> list[Block]:
    """The section in full as blocks; none where nothing was measured and nothing stopped."""
    of = _by_kind(c)
    if not of[STAGE] and not c.stopped_anywhere:
        return []
    clock, stop = clock_of(c), stopped_first(c)
    first = median(on(c.judged("flat").samples, "first_call_s", clock))
    out: list[Block] = [Heading(_title(first, clock))]
    if of[SAVING]:
        rewrites = [x.name for x in of[NOT_MEASURED] if is_rewrite(x)]
        unranked = ([f"not ranked among them, as not measured, and possibly bigger: "
                     f"rewriting {', '.join(rewrites)} (below)"] if rewrites else [])
        out.append(Para(["measured savings, the biggest first:",
                         *(_saving(i, x) for i, x in enumerate(of[SAVING], 1)), *unranked]))
    if of[STAGE]:
        out.append(Para([_stages(of[STAGE], first), *_details(of[STAGE])]))
    else:
        out.append(Para([f"no stage of the first call was measured: {stop}"]))
    lines = [line for kind, label in UNRANKED if of[kind]
             for line in (f"{label}:", *(f"  {x.name}: {x.said}" for x in of[kind]))]
    cut = [x.name for x in of[NOT_MEASURED] if x.said == stop]
    if cut:
        lines.append(f"not measured, since {stop}: {', '.join(cut)}")
    left = [x for x in of[NOT_MEASURED] if x.said != stop]
    if left:
        lines += ["not measured:", *(f"  {_unmeasured(x)}" for x in left)]
    if of[SAVING]:
        lines.append(OVERLAP)
    return out + ([Para(lines)] if lines else [])


def _title(first: float, clock: Clock) -> str:
    """``Why the first call takes 1.2 s (flat)``; on a busy machine, in CPU time."""
    if math.isnan(first):
        return "Why the first call is slow (flat)"
    on_cpu = ", CPU time: the machine was busy" if clock == CPU else ""
    return f"Why the first call takes {fmt_s(first)} (flat{on_cpu})"


def _saving(i: int, x: Cause) -> str:
    fix = f"; what to do: {x.fix}" if x.fix else ""
    return f"{i}. {x.name}, {fmt_s(x.seconds)}: {x.said}{fix}"


def _stages(stages: list[Cause], first: float) -> str:
    """``where it goes: XLA compile 205 ms (92%), Python tracing 12 ms (5%), ...``."""
    def share(x: Cause) -> str:
        return "" if math.isnan(first) or not first else f" ({min(1.0, x.seconds / first):.0%})"
    return "where it goes: " + ", ".join(f"{x.name} {fmt_s(x.seconds)}{share(x)}"
                                         for x in stages)


def _details(stages: list[Cause]) -> list[str]:
    """A stage's line where there is more to say: what was seen in it, what to do."""
    out = []
    for x in stages:
        said = "; ".join(part for part in (x.said, f"what to do: {x.fix}" if x.fix else "")
                         if part)
        if said:
            out.append(f"  {x.name}: {said}")
    return out


def _unmeasured(x: Cause) -> str:
    """``a second start: use `--cache` ``, or why it was not measured."""
    if not x.option:
        return f"{x.name}: {x.said}"
    if x.said == NOT_RUN:
        return f"{x.name}: use `{x.option}`"
    return f"{x.name}: {x.said}; `{x.option}` measures it"

"""What nesting the helpers saved, split over the stages it was measured in.

The flat variant inlines every helper on every call: Python traces each call again,
lowering lowers each copy, XLA compiles each copy. Nesting them saves the first call
some seconds, which the one rule judges on the first call as a whole; what part of
them lies in which stage is only known where a stage's own difference is significant
on the section's clock. So the saving is split: a stage's part where the rule calls that
stage faster or slower (its medians' difference, never more than the flat stage took),
and the remainder said to lie in no one stage. The cause's name says where the saving
was measured: none of it is called tracing unless tracing or lowering was measured
faster (a Haiku model whose XLA compile was 90% of its first call saved 159 ms nested
while no stage differed measurably: it had been "helpers traced on every call" with more
seconds than the flat trace and lowering took together).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace

from ..stats.rule import FASTER
from ..stats.rule import INCONCLUSIVE
from ..stats.rule import median
from ..stats.units import fmt_s
from ..stats.verdicts import interval
from ..stats.verdicts import times
from ..stats.witness import FIRST_CALL
from ..stats.witness import on
from .cause import NOT_MEASURED
from .cause import NOTHING
from .cause import SAVING
from .cause import UNMEASURABLE
from .cause import Cause
from .cause import clock_of
from .cause import judged
from .cause import said_of
from .cause import why_not
from .compared import Compared

#: The cause, whatever nesting saved: the flat program inlines the helpers on every call.
NAME = "helpers inlined on every call"
#: The stages a first call is split into, as the section names them.
STAGES = (("trace_s", "Python tracing"), ("lower_s", "lowering to StableHLO"),
          ("compile_s", "XLA compile"))
#: Where the part of a saving that no stage's significant difference holds is said to be.
NO_ONE_STAGE = "no one stage"
#: A remainder under this share of the saving is left unsaid (medians of parts and of
#: the whole never add up exactly).
SMALL_REST = 0.05


def nesting(c: Compared) -> Iterator[Cause]:
    """Helpers inlined on every call: what nesting them saved, by the one rule, split
    over the stages it was measured in."""
    nested = c.nested
    if not nested.helpers and nested.inline:
        yield Cause(NAME, UNMEASURABLE, said="no helper could be nested (the notes say why)")
        return
    if not nested.helpers:
        yield Cause(NAME, NOTHING, said="no helper of yours is called, so nothing was nested")
        return
    first, clock = c.difference(FIRST_CALL), clock_of(c)
    if math.isnan(first.ratio):
        yield Cause(NAME, NOT_MEASURED, said=why_not(c))
        return
    names = ", ".join(f"`{h}`" for h in nested.helpers[:3])
    names += ", ..." if len(nested.helpers) > 3 else ""
    said = f"nesting {names}: {said_of('the first call', first, clock)}"
    if first.kind == INCONCLUSIVE:
        said += faster_stages(c)
    cause = judged(c, NAME, first, clock, (c.flat.samples, nested.samples), said,
                   nested.nesting_fix())
    if first.significant and first.kind != FASTER:
        cause = Cause(NAME, NOTHING, said=said,
                      fix="keep them inline: their own jit costs more than it saves")
    if cause.kind == SAVING:
        parts = stage_parts(c)
        places, where = split(cause.seconds, parts)
        cause = replace(cause, name=f"{NAME} (saved in {places})",
                        said=f"{cause.said}; {where}")
    yield cause


def stage_parts(c: Compared) -> list[tuple[str, float, str]]:
    """Each stage the rule calls faster or slower nested, on the section's clock: (its
    name, flat median minus nested median, the verdict with its interval)."""
    clock, out = clock_of(c), []
    for phase, label in STAGES:
        d = c.difference(phase, clock)
        if d.significant:
            flat, nested = (median(on(v.samples, phase, clock)) for v in (c.flat, c.nested))
            out.append((label, flat - nested, f"{times(d, clock)}, {interval(d)[1:-1]}"))
    return out


def split(total: float, parts: list[tuple[str, float, str]]) -> tuple[str, str]:
    """Where a saving of ``total`` seconds lies: (the places, for the cause's name;
    the clause that says each part's seconds and what is left in no one stage)."""
    rest = total - sum(seconds for _, seconds, _ in parts)
    said = [f"{label} {fmt_s(abs(s))} {'less' if s >= 0 else 'more'} ({verdict})"
            for label, s, verdict in parts]
    places = [label for label, s, _ in parts if s > 0]
    if not parts:
        return NO_ONE_STAGE, (f"no stage differs measurably ({', '.join(x for _, x in STAGES)}): "
                              f"the {fmt_s(total)} are in {NO_ONE_STAGE}")
    if rest >= SMALL_REST * total:
        said.append(f"{fmt_s(rest)} in {NO_ONE_STAGE}")
        places.append(NO_ONE_STAGE)
    elif rest < -SMALL_REST * total:
        said.append(f"the stages' parts add up to {fmt_s(-rest)} more than the first call's "
                    "saving (medians of the parts and of the whole are taken apart)")
    return _and(places or [NO_ONE_STAGE]), f"by stage: {', '.join(said)}"


def _and(words: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def faster_stages(c: Compared) -> str:
    """``; its trace is 1.6× faster (1.3×–2.5×)``: the stages the rule calls faster
    nested, on the section's clock, where the first call as a whole is undecided."""
    clock = clock_of(c)
    judged_ = ((label, c.difference(phase, clock)) for phase, label in (
        ("trace_s", "trace"), ("lower_s", "lowering"), ("compile_s", "XLA compile")))
    return "".join(f"; {said_of(f'its {label}', d, clock)}" for label, d in judged_
                   if d.kind == FASTER)

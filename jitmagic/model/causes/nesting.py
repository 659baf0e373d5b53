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
from ..stats.rule import median
from ..stats.witness import FIRST_CALL
from ..stats.witness import on
from .cause import NOT_MEASURED
from .cause import NOTHING
from .cause import SAVING
from .cause import UNMEASURABLE
from .cause import Cause
from .cause import Named
from .cause import clock_of
from .cause import judged
from .compared import Compared

#: The cause, whatever nesting saved: the flat program inlines the helpers on every call.
NAME = Named.NESTING
#: The stages a first call is split into, as the section names them.
STAGES = (("trace_s", Named.TRACING), ("lower_s", Named.LOWERING),
          ("compile_s", Named.COMPILE))
#: Where the part of a saving that no stage's significant difference holds is said to be.
NO_ONE_STAGE = Named.NO_ONE_STAGE
#: A remainder under this share of the saving is left unsaid (medians of parts and of
#: the whole never add up exactly).
SMALL_REST = 0.05


def nesting(c: Compared) -> Iterator[Cause]:
    """Helpers inlined on every call: what nesting them saved, by the one rule, split
    over the stages it was measured in (the cause's name says where)."""
    nested = c.nested
    if not nested.helpers and nested.inline:
        yield Cause(NAME, UNMEASURABLE, maker="nesting", case="none nested", of=c)
        return
    if not nested.helpers:
        yield Cause(NAME, NOTHING, maker="nesting", case="no helper", of=c)
        return
    first, clock = c.difference(FIRST_CALL), clock_of(c)
    if math.isnan(first.ratio):
        yield Cause(NAME, NOT_MEASURED, maker="nesting", case="not run", of=c)
        return
    cause = judged(c, NAME, first, clock, (c.flat.samples, nested.samples), "nesting")
    if first.significant and first.kind != FASTER:
        cause = Cause(NAME, NOTHING, maker="nesting", case="costs", of=c)
    if cause.kind == SAVING:
        places = split(cause.seconds, stage_parts(c))[0]
        cause = replace(cause, name=f"{NAME} (saved in {_and(places)})")
    yield cause


def stage_parts(c: Compared) -> list[tuple[str, float, str]]:
    """Each stage the rule calls faster or slower nested, on the section's clock: (its
    name, flat median minus nested median, its phase)."""
    clock, out = clock_of(c), list[tuple[str, float, str]]()
    for phase, label in STAGES:
        d = c.difference(phase, clock)
        if d.significant:
            flat, nested = (median(on(v.samples, phase, clock)) for v in (c.flat, c.nested))
            out.append((label, flat - nested, phase))
    return out


def split(total: float, parts: list[tuple[str, float, str]]) -> tuple[list[str], float]:
    """Where a saving of ``total`` seconds lies: (the places, for the cause's name; what
    is left in no one stage, in seconds: negative where the stages' parts add up to more
    than the saving)."""
    rest = total - sum(seconds for _, seconds, _ in parts)
    places = [label for label, s, _ in parts if s > 0]
    if parts and rest >= SMALL_REST * total:
        places.append(NO_ONE_STAGE)
    return places or [NO_ONE_STAGE], rest


def _and(words: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"

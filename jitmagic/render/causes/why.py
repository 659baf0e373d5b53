"""The "why is the first call slow" section: the causes of :func:`jitmagic.model.causes.why.causes`,
the biggest first, each with its seconds, what was measured and what to do."""

from __future__ import annotations

import math

from ...model.causes.why import Cause
from ...model.causes.why import causes
from ...model.comparison import Comparison
from ...model.stats.rule import median
from ...model.stats.units import fmt_s
from ..blocks import Block
from ..blocks import Heading
from ..blocks import Html
from ..blocks import Para
from ..blocks import as_html
from ..blocks import as_text


def blocks(c: Comparison) -> list[Block]:
    """The section as blocks: ranked causes, then those that account for nothing
    measurable, then those not measured with the option that measures each."""
    found = causes(c)
    ranked = [x for x in found if x.measured and not math.isnan(x.seconds)]
    if not ranked:
        return []
    first = fmt_s(median(c.flat.samples.get("first_call_s", [])))
    out: list[Block] = [Heading(f"Why the first call takes {first} (flat): the causes "
                                "measured, biggest first")]
    out.append(Para([_ranked(i, x) for i, x in enumerate(ranked, 1)]))
    if len(ranked) > 1:
        out.append(Para([OVERLAP]))
    nothing = [f"{x.name} ({x.said})" for x in found if x.measured and math.isnan(x.seconds)]
    left = [f"{x.name} (use `{x.option}`)" for x in found if not x.measured and x.option]
    left += [f"{x.name} ({x.said})" for x in found if not x.measured and not x.option]
    lines = ([f"nothing measurable to gain: {'; '.join(nothing)}"] if nothing else [])
    lines += [f"not measured: {'; '.join(left)}"] if left else []
    return out + ([Para(lines)] if lines else [])


#: Said under two or more ranked causes.
OVERLAP = ("the causes overlap (a big constant's cost is part of XLA's compile; a warm cache "
           "skips the compile), so their seconds do not add up")


def _ranked(i: int, x: Cause) -> str:
    fix = f"; what to do: {x.fix}" if x.fix else ""
    return f"{i}. {x.name}, {fmt_s(x.seconds)}: {x.said}{fix}"


def text(c: Comparison) -> str:
    return as_text(blocks(c))


def html(c: Comparison) -> Html:
    return as_html(blocks(c))

"""The "why is the first call slow" section: the causes of
:func:`jitmagic.model.causes.why.causes`, the measured savings first, then where the
first call's time goes, then what could not be decided or measured."""

from __future__ import annotations

import math

from ...model.causes.why import NOT_MEASURED
from ...model.causes.why import NOTHING
from ...model.causes.why import SAVING
from ...model.causes.why import STAGE
from ...model.causes.why import UNDECIDED
from ...model.causes.why import UNMEASURABLE
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

#: Said under two or more measured seconds.
OVERLAP = ("the causes overlap (a big constant's cost is part of XLA's compile; a warm cache "
           "skips the compile), so their seconds do not add up")
#: How each kind that has no seconds is introduced, in order.
UNRANKED = ((UNDECIDED, "inconclusive (more runs may tell)"),
            (NOTHING, "nothing measurable to gain"), (UNMEASURABLE, "not measurable here"))


def blocks(c: Comparison) -> list[Block]:
    """The section as blocks; none where nothing at all was measured and nothing stopped."""
    found = causes(c)
    of = {kind: [x for x in found if x.kind == kind] for kind in
          (SAVING, STAGE, UNDECIDED, NOTHING, UNMEASURABLE, NOT_MEASURED)}
    if not of[STAGE] and not c.stopped_anywhere:
        return []
    first = median(c.flat.samples.get("first_call_s", []))
    out: list[Block] = [Heading(f"Why the first call takes {fmt_s(first)} (flat)")]
    if of[SAVING]:
        out.append(Para(["measured savings, the biggest first:",
                         *(_saving(i, x) for i, x in enumerate(of[SAVING], 1))]))
    if of[STAGE]:
        out.append(Para([_stages(of[STAGE], first), *_details(of[STAGE])]))
    lines = [f"{label}: {'; '.join(f'{x.name} ({x.said})' for x in of[kind])}"
             for kind, label in UNRANKED if of[kind]]
    if of[NOT_MEASURED]:
        lines.append("not measured: " + "; ".join(_unmeasured(x) for x in of[NOT_MEASURED]))
    if of[SAVING]:
        lines.append(OVERLAP)
    if not of[STAGE]:
        lines.insert(0, f"no stage of the first call was measured before the stop "
                        f"({c.stopped_anywhere})")
    return out + ([Para(lines)] if lines else [])


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
    return f"{x.name} (use `{x.option}`)" if x.option and "stopped" not in x.said \
        else f"{x.name} ({x.said})"


def text(c: Comparison) -> str:
    return as_text(blocks(c))


def html(c: Comparison) -> Html:
    return as_html(blocks(c))

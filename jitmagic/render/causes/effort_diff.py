"""``--effort`` in a diff's report: each setting's compile and call, NEW against OLD."""

from __future__ import annotations

from ...model.diff import Diff
from ...model.diff import EffortDiff
from ...model.stats.units import fmt_ratio
from ...model.stats.units import fmt_s
from ..blocks import Block
from ..blocks import Para
from ..blocks import Table
from ..format import verdict_ratio
from ..verdicts import clock_name
from ..verdicts import stage_interval
from ..verdicts import stage_said

EFFORT_HEADER = ("setting", "stage", "OLD", "NEW", "NEW/OLD", "interval", "NEW is")
RATIOS_HEADER = ("setting", "compile ratio OLD", "compile ratio NEW", "per-call ratio OLD",
                 "per-call ratio NEW")


def blocks(d: Diff) -> list[Block]:
    """``--effort``'s diff: a clock note, a row per setting and stage, and the unmatched."""
    if d.effort is None:
        return [Para([f"XLA's effort (--effort): measured in {d.effort_in} only, so not "
                      "compared"])] if d.effort_in else []
    e: EffortDiff = d.effort
    clock = clock_name(e.clock)
    note = (f"XLA's effort (--effort), each setting NEW against OLD, on {clock} for every "
            "row (medians, by the one rule; informational: no gate judges these rows)")
    rows_ = [[s.variant, s.label, fmt_s(s.old_s), fmt_s(s.new_s), fmt_ratio(s.new_over_old),
              stage_interval(s), stage_said(s)] for s in e.stages]
    out: list[Block] = [Para([note]), Table(EFFORT_HEADER, rows_)]
    if e.ratios:
        out += [Para([f"each setting against its own report's default (default/setting, as "
                      f"the effort section says it; {clock}; marked inconclusive or "
                      "same where the rule found no difference)"]),
                Table(RATIOS_HEADER, [[r.setting, *(verdict_ratio(d) for d in (
                    r.old_compile, r.new_compile, r.old_execute, r.new_execute))]
                    for r in e.ratios])]
    for side, names in (("OLD", e.only_old), ("NEW", e.only_new)):
        if names:
            out.append(Para([f"measured in {side} only, so not compared: "
                             + ", ".join(f"`{n}`" for n in names)], "note"))
    return out

"""The bar charts of the parts: orderings, XLA's effort, trace time by helper."""

from __future__ import annotations

from matplotlib.figure import Figure

from ...model.attribution import Attribution
from ...model.causes.effort import COMPILE, DEFAULT, EXECUTE, Effort
from ...model.orderings import ORDERINGS, TOGGLED, Orderings
from ...model.stats.rule import median
from ...model.stats.units import fmt_s
from ...model.stats.witness import WALL, on
from ..blocks import more
from ..verdicts import clock_name
from .style import (
    DPI,
    EDGE,
    LABEL_PT,
    LEGEND_PT,
    ORDERING_HIGHLIGHT,
    ORDERING_REFERENCE,
    ORDERING_TOGGLED,
    PHASE,
    TRACE_INCLUSIVE,
    bar_panels,
    plain,
)

ORDERING_PANELS = (("first_call_s", "first call (cold: caches cleared)"),
          ("execute_s", "per call (steady state)"))


def orderings_figure(o: Orderings, highlight: str | None = None) -> Figure:
    """Two bar panels, cold first call and steady per call, one bar per ordering."""
    names = [n for n in ORDERINGS if n in o.rows and o[n].error is None]
    fig = Figure(figsize=(9, 2.8), layout="constrained", dpi=DPI)
    colors = [ORDERING_HIGHLIGHT if n == highlight else ORDERING_TOGGLED
              if highlight is None and n in TOGGLED else ORDERING_REFERENCE for n in names]
    panels = []
    for key, label in ORDERING_PANELS:  # per call on the verdict's clock, first call on wall time
        clock = o.clock() if key == EXECUTE else WALL
        panels.append(([on(o[n].samples, key, clock) for n in names],
                       f"{label}, {clock_name(clock)}", colors))
    bar_panels(fig, names, panels, edgecolor=EDGE, linewidth=0.5)
    if highlight is None:
        fig.suptitle(f"{plain(o.entry)}, batch {plain(o.batch)}: four orderings", fontsize=11)
    else:
        per_call = median(on(o[highlight].samples, EXECUTE, o.clock()))
        fig.suptitle(f"{plain(highlight)}: first call {fmt_s(o[highlight].first_call_s)} "
                     f"wall time, per call {fmt_s(per_call)} {clock_name(o.clock())}",
                     fontsize=11)
    return fig


#: The two panels: the sample key, what its axis says, its colour (the phases' own).
EFFORT_PANELS = ((COMPILE, "XLA compile (cold first call)"), (EXECUTE, "a call (steady state)"))


def measured_rows(e: Effort) -> dict[str, dict[str, list[float]]]:
    """Each row with samples (default first), its compile and call samples on the clock."""
    clock = e.clock()
    rows = {DEFAULT: e.default, **{n: r.samples for n, r in e.rows.items()}}
    return {n: {k: on(s, k, clock) for k, _ in EFFORT_PANELS} for n, s in rows.items()
            if s.get(COMPILE) or s.get(EXECUTE)}


def effort_figure(e: Effort) -> Figure:
    """Two bar panels, XLA's compile and a call, one bar per measured row in each."""
    rows = measured_rows(e)
    clock = clock_name(e.clock())
    fig = Figure(figsize=(9, 0.9 + 0.45 * len(rows)), layout="constrained", dpi=DPI)
    bar_panels(fig, list(rows), [([xs[key] for xs in rows.values()], f"{label}, {clock}",
                                  PHASE[key]) for key, label in EFFORT_PANELS])
    fig.suptitle(f"{plain(e.entry)}: XLA's compile against a call, per setting ({clock})",
                 fontsize=11)
    return fig


#: The most helpers drawn (the table lists more): a bar per helper makes the figure taller.
MAX_BARS = 25


def attribution_figure(a: Attribution) -> Figure:
    """Horizontal bars, heaviest first: each helper's share of the flat trace, its own inside."""
    shown, left = a.heaviest(MAX_BARS)
    rows = [(h.helper, h.calls, _bar(a.share(h.inclusive_s)), _bar(a.share(h.own_s)))
            for h in shown]
    entry = _bar(a.share(a.entry_own_s))
    rows.append((f"{a.entry} (entry, own)", 1, entry, entry))
    fig = Figure(figsize=(7, 0.45 * len(rows) + 1.6), layout="constrained", dpi=DPI)
    ax = fig.subplots()
    for i, (name, calls, inclusive, own) in enumerate(rows):
        ax.barh(i, inclusive * 100, color=TRACE_INCLUSIVE,
                label="inclusive (with its callees)" if i == 0 else None)
        ax.barh(i, own * 100, color=PHASE["trace_s"], height=0.5, label="own" if i == 0 else None)
        ax.text(inclusive * 100, i, f"  {plain(name)}: {calls} call{'s' * (calls != 1)}, "
                f"{inclusive:.0%} of trace time", va="center", fontsize=LABEL_PT)
    ax.set_yticks(range(len(rows)), [plain(r[0]) for r in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, 175)  # room for the labels right of the bars
    ax.set_xticks(range(0, 101, 25))
    ax.margins(y=0.1)
    ax.set_xlabel(f"% of the flat trace ({fmt_s(a.trace_s)} of wall time, one cold trace)")
    ax.set_title(f"{plain(a.entry)}: trace time by helper"
                 + (f" ({plain(more(left, 'helpers'))} not drawn)" if left else ""))
    fig.legend(loc="outside lower center", ncol=2, fontsize=LEGEND_PT, frameon=False)
    return fig


def _bar(share: float) -> float:
    """A share as a bar can draw it: within 0 and 1.5 (a loaded report may say anything)."""
    return min(max(share, 0.0), 1.5)

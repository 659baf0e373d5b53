"""The trace-time-by-helper chart, as a ``matplotlib.figure.Figure``; never displays."""

from __future__ import annotations

from matplotlib.figure import Figure

from ...model.attribution import Attribution
from ...model.stats.units import fmt_s
from ..blocks import more
from .style import DPI
from .style import LABEL_PT
from .style import LEGEND_PT
from .style import PHASE
from .style import TRACE_INCLUSIVE
from .style import plain

#: The most helpers drawn (the table lists more): a bar per helper makes the figure taller.
MAX_BARS = 25


def attribution_figure(a: Attribution) -> Figure:
    """Horizontal bars, heaviest first: a helper's inclusive share of the flat trace (light) with
    its own share inside (the trace colour), labelled "layer: 16 calls, 91% of trace time"; the
    legend below the bars."""
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

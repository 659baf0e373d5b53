"""Charts of the vmap/jit orderings: first call against per call; never displays.

Built with ``matplotlib.figure.Figure`` (not pyplot), so no figure stays open
in the user's kernel.
"""

from __future__ import annotations

import math

from matplotlib.figure import Figure

from ...model.orderings import ORDERINGS, TOGGLED, Orderings
from ..format import fmt_s

HIGHLIGHT = "#c44e52"
TOGGLED_COLOR = "#4c72b0"
REFERENCE_COLOR = "#a0a0a0"


def _colors(names: list[str], highlight: str | None) -> list[str]:
    if highlight is not None:
        return [HIGHLIGHT if n == highlight else REFERENCE_COLOR for n in names]
    return [TOGGLED_COLOR if n in TOGGLED else REFERENCE_COLOR for n in names]


def orderings_figure(o: Orderings, highlight: str | None = None) -> Figure:
    """Two bar panels, cold first call and steady per call, one bar per ordering.

    With ``highlight`` that ordering is drawn in colour and named in the
    title (the toggle's chart); without, the two toggled orderings are.
    """
    names = [n for n in ORDERINGS if n in o.rows and o[n].error is None]
    fig = Figure(figsize=(9, 2.8), layout="constrained")
    first, per_call = fig.subplots(1, 2)
    colors = _colors(names, highlight)
    panels = ((first, "first_call_s", 1e3, "ms, first call (cold: caches cleared)"),
              (per_call, "execute_s", 1e6, "µs per call (steady state)"))
    for ax, key, scale, label in panels:
        values = [o[n].median(key) for n in names]
        ax.barh(range(len(names)), [0 if math.isnan(v) else v * scale for v in values],
                color=colors)
        for i, v in enumerate(values):
            ax.text(0 if math.isnan(v) else v * scale, i, f" {fmt_s(v)}", va="center", fontsize=8)
        ax.set_yticks(range(len(names)), names if ax is first else [""] * len(names))
        ax.invert_yaxis()
        ax.set_xlabel(label)
        ax.margins(x=0.25)
    if highlight is None:
        fig.suptitle(f"{o.entry}, batch {o.batch}: four orderings", fontsize=10)
    else:
        row = o[highlight]
        fig.suptitle(f"{highlight}: first call {fmt_s(row.first_call_s)}, "
                     f"per call {fmt_s(row.execute_s)}", fontsize=10)
    return fig

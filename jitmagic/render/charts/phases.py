"""Charts of a comparison, as matplotlib ``Figure`` objects or PNG bytes; never displays.

Figures are built with ``matplotlib.figure.Figure`` directly, not ``pyplot``,
so they never join pyplot's global list of open figures in the user's kernel.
"""

from __future__ import annotations

import io
import math

from matplotlib.figure import Figure

from ...model.comparison import PHASE_LABELS, Comparison
from ..format import fmt_ratio, fmt_s

COLD = ("trace_s", "lower_s", "compile_s")
COLORS = {"trace_s": "#4c72b0", "lower_s": "#55a868", "compile_s": "#c44e52"}


def phases_figure(c: Comparison) -> Figure:
    """Stacked cold-start bars per variant, first-call markers, and per-call execute bars."""
    fig = Figure(figsize=(9, 3.2), layout="constrained")
    cold, steady = fig.subplots(1, 2, width_ratios=(3, 1))
    names = [v for v in ("flat", "nested") if c.variants[v].ok]
    for row, name in enumerate(names):
        v, left = c.variants[name], 0.0
        for p in COLD:
            width = v.median(p)
            cold.barh(row, width, left=left, color=COLORS[p],
                      label=f"{PHASE_LABELS[p]} (flat/nested {fmt_ratio(c.ratio(p))})"
                      if row == 0 else None)
            left += width
        first = v.median("first_call_s")
        if not math.isnan(first):
            cold.plot([first, first], [row - 0.4, row + 0.4], color="black", lw=2,
                      label="first call" if row == 0 else None)
        cold.text(left, row, f"  {fmt_s(left)}", va="center", fontsize=9)
    cold.set_yticks(range(len(names)), names)
    cold.invert_yaxis()
    cold.set_xlabel("seconds, cold (caches cleared)")
    cold.set_title(f"{c.entry}: where start-up time goes")
    cold.legend(fontsize=8, loc="best")
    cold.margins(x=0.15)
    per_call = [c.variants[n].median("execute_s") * 1e6 for n in names]
    steady.bar(names, per_call, color="#8172b2")
    steady.set_ylabel("µs per call")
    steady.set_title(f"execute ({fmt_ratio(c.ratio('execute_s'))})")
    return fig


def to_png(fig: Figure, dpi: int = 90) -> bytes:
    """PNG bytes of a figure (for inline display and self-contained HTML)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()

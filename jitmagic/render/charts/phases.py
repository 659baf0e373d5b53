"""Charts of a comparison, as matplotlib ``Figure`` objects or PNG bytes; never displays.

Figures are built with ``matplotlib.figure.Figure`` directly, not ``pyplot``,
so they never join pyplot's global list of open figures in the user's kernel.
"""

from __future__ import annotations

import io
import math

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ...model.comparison import PHASE_LABELS, VARIANTS, Comparison, VariantResult
from ...model.stats import spread
from ..format import fmt_ratio, fmt_s, time_unit
from .palette import PHASE
from .style import plain, whisker

COLD = ("trace_s", "lower_s", "compile_s")


def _finite(x: float) -> float:
    return 0.0 if math.isnan(x) else x


def cold_totals(v: VariantResult) -> list[float]:
    """Trace + lower + compile of each cold run (the phases are sampled run by run)."""
    cols = [v.samples.get(p, []) for p in COLD]
    return [sum(run) for run in zip(*cols, strict=False)]


def phases_figure(c: Comparison) -> Figure:
    """Stacked cold-start bars per variant with the min–max of their totals, first-call
    markers, and per-call execute bars with their min–max; the legend below the panels."""
    fig = Figure(figsize=(9, 3.6), layout="constrained")
    cold, steady = fig.subplots(1, 2, width_ratios=(3, 1))
    names = [n for n in VARIANTS if n in c.variants and c.variants[n].ok]
    _cold_panel(cold, c, names)
    _execute_panel(steady, c, names)
    fig.legend(loc="outside lower center", ncol=4, fontsize=8, frameon=False)
    return fig


def _cold_panel(ax: Axes, c: Comparison, names: list[str]) -> None:
    """One stacked bar per variant; the total's label right of everything drawn on its row."""
    variants = [c.variants[n] for n in names]
    unit, scale = time_unit([x for v in variants for x in cold_totals(v) + [v.first_call_s]])
    for row, v in enumerate(variants):
        left = 0.0
        for p in COLD:
            width = _finite(v.median(p))
            ax.barh(row, width / scale, left=left / scale, color=PHASE[p],
                    label=f"{PHASE_LABELS[p]} (flat/nested {fmt_ratio(c.ratio(p))})"
                    if row == 0 else None)
            left += width
        ends = [left]
        if (rng := spread(cold_totals(v))) is not None:
            whisker(ax, row, rng[0] / scale, rng[1] / scale)
            ends.append(rng[1])
        first = v.first_call_s
        if not math.isnan(first):
            ax.plot([first / scale] * 2, [row - 0.4, row + 0.4], color=PHASE["first_call_s"],
                    lw=2, label="first call (median)" if row == 0 else None)
            ends.append(first)
        ax.text(max(ends) / scale, row, f"  {fmt_s(left)}", va="center", fontsize=9)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel(f"{unit}, cold (caches cleared); whiskers: min–max")
    ax.set_title(f"{plain(c.entry)}: where start-up time goes")
    ax.margins(x=0.2)


def _execute_panel(ax: Axes, c: Comparison, names: list[str]) -> None:
    """Median seconds per call for each variant, with the min–max of its samples."""
    samples = [c.variants[n].samples.get("execute_s", []) for n in names]
    unit, scale = time_unit([x for xs in samples for x in xs])
    medians = [_finite(c.variants[n].execute_s) / scale for n in names]
    ax.bar(range(len(names)), medians, color=PHASE["execute_s"])
    for i, xs in enumerate(samples):
        if (rng := spread(xs)) is not None:
            whisker(ax, i, rng[0] / scale, rng[1] / scale, horizontal=False)
    ax.set_xticks(range(len(names)), names)
    ax.set_ylabel(f"{unit} per call")
    ax.set_title(f"execute ({fmt_ratio(c.ratio('execute_s'))})")


def to_png(fig: Figure, dpi: int = 90) -> bytes:
    """PNG bytes of a figure (for inline display and self-contained HTML)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()

"""What every chart shares: the palette, plain text, type sizes, resolution, whiskers, bars."""

from __future__ import annotations

import math
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ...model.saved.schema import printable
from ...model.stats.rule import median, spread
from ...model.stats.units import cut_to, fmt_s, time_unit

BLACK, ORANGE, SKY_BLUE, BLUISH_GREEN = "#000000", "#e69f00", "#56b4e9", "#009e73"
YELLOW, BLUE, VERMILLION, REDDISH_PURPLE = "#f0e442", "#0072b2", "#d55e00", "#cc79a7"

#: One colour per part of a first call, and per call (a marker: stages from a staged run).
PHASE = {
    "trace_s": BLUE,
    "lower_s": BLUISH_GREEN,
    "compile_s": ORANGE,
    "rest_s": "#c8c8c8",        # light grey: what is not a stage
    "first_call_s": BLACK,      # the marker
    "execute_s": REDDISH_PURPLE,
}
#: Trace time that includes the helpers' callees: a light tint of the trace colour.
TRACE_INCLUSIVE = "#a6cde6"

#: One colour per variant (lines and markers, never bars, so never mistaken for a phase).
VARIANT = {"flat": VERMILLION, "nested": SKY_BLUE}

#: The orderings chart: the ordering picked out, the two toggled ones, the references.
ORDERING_HIGHLIGHT = YELLOW
ORDERING_TOGGLED = "#6b6b6b"    # dark grey
ORDERING_REFERENCE = "#d9d9d9"  # light grey
#: Bar edges on the orderings chart (a yellow bar needs one on white).
EDGE = "#444444"

#: Whiskers (the min–max range of a bar's samples) and text on the charts.
RANGE = "#333333"

#: Resolution of every PNG: at 100 dpi one point is 1.39 pixels, so 10 pt type is 14 px.
DPI = 100
#: Type sizes in points: legends and labels on the bars never go below 10 pt.
LEGEND_PT = 10
LABEL_PT = 10


#: A chart shows at most this many characters of a name (laying out megabytes takes minutes).
MAX_LABEL = 60


def plain(x: Any, width: int = MAX_LABEL) -> str:
    """``x`` as matplotlib shows it literally (``$`` and controls escaped), cut to ``width``."""
    shown = printable(str(x)).replace("\t", r"\t").replace("\n", r"\n")
    return cut_to(shown, width).replace("$", r"\$")


def whisker(ax: Axes, at: float, lo: float, hi: float, horizontal: bool = True) -> None:
    """The min–max range of a bar's samples at position ``at``, as a capped line."""
    middle, half = (lo + hi) / 2, (hi - lo) / 2
    x, y, xerr, yerr = (middle, at, half, None) if horizontal else (at, middle, None, half)
    ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="none", ecolor=RANGE, elinewidth=1, capsize=3,
                zorder=3)


def bar_panels(fig: Figure, names: list[str], panels: list[tuple[list[list[float]], str, Any]],
               **bar: Any) -> None:
    """Panels side by side: median bars, min–max whiskers, each median said."""
    axes = fig.subplots(1, len(panels))
    for i, (ax, (samples, label, color)) in enumerate(zip(axes, panels, strict=True)):
        unit, scale = time_unit([x for xs in samples for x in xs])
        values = [median(xs) for xs in samples]
        ax.barh(range(len(values)), [0 if math.isnan(v) else v / scale for v in values],
                color=color, **bar)
        for row, (xs, v) in enumerate(zip(samples, values, strict=True)):
            end = 0.0 if math.isnan(v) else v
            if (rng := spread(xs)) is not None:
                whisker(ax, row, rng[0] / scale, rng[1] / scale)
                end = max(end, rng[1])
            ax.text(end / scale, row, f" {fmt_s(v)}", va="center", fontsize=LABEL_PT)
        ax.invert_yaxis()
        ax.margins(x=0.3)
        ax.set_yticks(range(len(names)), [plain(n) for n in names] if i == 0 else [""] * len(names))
        ax.set_xlabel(f"{unit}, {label}")

"""What every chart shares: plain text for matplotlib, legible type sizes, the PNG
resolution, and min–max whiskers."""

from __future__ import annotations

from typing import Any

from matplotlib.axes import Axes

from ...model.saved.schema import printable
from ...model.stats.units import cut_to
from .palette import RANGE

#: Resolution of every PNG: at 100 dpi one point is 1.39 pixels, so 10 pt type is 14 px.
DPI = 100
#: Type sizes in points: legends and labels on the bars never go below 10 pt.
LEGEND_PT = 10
LABEL_PT = 10


#: A chart shows at most this many characters of a name (a report from someone else may
#: hold a name of megabytes, and laying one out takes matplotlib minutes).
MAX_LABEL = 60


def plain(x: Any, width: int = MAX_LABEL) -> str:
    """``x`` as text matplotlib shows as it is: every ``$`` escaped, so a name such as
    ``$\\frac{$`` is never parsed as mathtext (which raises while drawing), and every
    control character, tab and newline written as its escape (``\\x1b``, ``\\t``: no
    font has their glyphs); cut to ``width`` characters, ending in ``…``."""
    shown = printable(str(x)).replace("\t", r"\t").replace("\n", r"\n")
    return cut_to(shown, width).replace("$", r"\$")


def whisker(ax: Axes, at: float, lo: float, hi: float, horizontal: bool = True) -> None:
    """The min–max range of a bar's samples at position ``at``, as a capped line."""
    if horizontal:
        ax.errorbar((lo + hi) / 2, at, xerr=(hi - lo) / 2, fmt="none", ecolor=RANGE,
                    elinewidth=1, capsize=3, zorder=3)
    else:
        ax.errorbar(at, (lo + hi) / 2, yerr=(hi - lo) / 2, fmt="none", ecolor=RANGE,
                    elinewidth=1, capsize=3, zorder=3)

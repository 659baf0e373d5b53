"""Charts of the vmap/jit orderings: first call against per call; never displays."""

from __future__ import annotations

from matplotlib.figure import Figure

from ...model.orderings import EXECUTE
from ...model.orderings import ORDERINGS
from ...model.orderings import TOGGLED
from ...model.orderings import Orderings
from ...model.stats.rule import median
from ...model.stats.units import fmt_s
from ...model.stats.witness import WALL
from ...model.stats.witness import on
from ..verdicts import clock_name
from .style import DPI
from .style import EDGE
from .style import ORDERING_HIGHLIGHT
from .style import ORDERING_REFERENCE
from .style import ORDERING_TOGGLED
from .style import bar_panels
from .style import plain

PANELS = (("first_call_s", "first call (cold: caches cleared)"),
          ("execute_s", "per call (steady state)"))


def _colors(names: list[str], highlight: str | None) -> list[str]:
    if highlight is not None:
        return [ORDERING_HIGHLIGHT if n == highlight else ORDERING_REFERENCE for n in names]
    return [ORDERING_TOGGLED if n in TOGGLED else ORDERING_REFERENCE for n in names]


def orderings_figure(o: Orderings, highlight: str | None = None) -> Figure:
    """Two bar panels, cold first call and steady per call, one bar per ordering, each with the
    min–max of its samples."""
    names = [n for n in ORDERINGS if n in o.rows and o[n].error is None]
    fig = Figure(figsize=(9, 2.8), layout="constrained", dpi=DPI)
    panels = []
    for key, label in PANELS:  # per call on the verdict's clock, the first call on wall time
        clock = o.clock() if key == EXECUTE else WALL
        panels.append(([on(o[n].samples, key, clock) for n in names],
                       f"{label}, {clock_name(clock)}", _colors(names, highlight)))
    bar_panels(fig, names, panels, edgecolor=EDGE, linewidth=0.5)
    if highlight is None:
        fig.suptitle(f"{plain(o.entry)}, batch {plain(o.batch)}: four orderings", fontsize=11)
    else:
        per_call = median(on(o[highlight].samples, EXECUTE, o.clock()))
        fig.suptitle(f"{plain(highlight)}: first call {fmt_s(o[highlight].first_call_s)} "
                     f"wall time, per call {fmt_s(per_call)} {clock_name(o.clock())}",
                     fontsize=11)
    return fig


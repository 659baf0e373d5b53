"""Charts of the vmap/jit orderings: first call against per call; never displays."""

from __future__ import annotations

import math

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ...model.orderings import EXECUTE
from ...model.orderings import ORDERINGS
from ...model.orderings import TOGGLED
from ...model.orderings import Orderings
from ...model.stats.rule import median
from ...model.stats.rule import spread
from ...model.stats.units import fmt_s
from ...model.stats.units import time_unit
from ...model.stats.witness import WALL
from ...model.stats.witness import Clock
from ...model.stats.witness import on
from ..verdicts import clock_name
from .palette import EDGE
from .palette import ORDERING_HIGHLIGHT
from .palette import ORDERING_REFERENCE
from .palette import ORDERING_TOGGLED
from .style import DPI
from .style import LABEL_PT
from .style import plain
from .style import whisker

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
    for ax, (key, label) in zip(fig.subplots(1, 2), PANELS, strict=True):
        clock = _clock(o, key)
        _panel(ax, o, names, key, clock, _colors(names, highlight))
        ax.set_yticks(range(len(names)), [plain(n) for n in names] if key == PANELS[0][0]
                      else [""] * len(names))
        ax.set_xlabel(f"{time_unit(_seconds(o, names, key, clock))[0]}, {label}, "
                      f"{clock_name(clock)}")
    if highlight is None:
        fig.suptitle(f"{plain(o.entry)}, batch {plain(o.batch)}: four orderings", fontsize=11)
    else:
        per_call = median(on(o[highlight].samples, EXECUTE, o.clock()))
        fig.suptitle(f"{plain(highlight)}: first call {fmt_s(o[highlight].first_call_s)} "
                     f"wall time, per call {fmt_s(per_call)} {clock_name(o.clock())}",
                     fontsize=11)
    return fig


def _clock(o: Orderings, key: str) -> Clock:
    """A panel's clock: per call, the one the verdict is on (the table shows it beside the
    wall time); the first call, wall time, as the table shows it."""
    return o.clock() if key == EXECUTE else WALL


def _seconds(o: Orderings, names: list[str], key: str, clock: Clock) -> list[float]:
    return [x for n in names for x in on(o[n].samples, key, clock)]


def _panel(ax: Axes, o: Orderings, names: list[str], key: str, clock: Clock,
           colors: list[str]) -> None:
    """Median bars in the panel's unit, whiskers, and each median's label past its whisker."""
    _, scale = time_unit(_seconds(o, names, key, clock))
    values = [median(on(o[n].samples, key, clock)) for n in names]
    ax.barh(range(len(names)), [0 if math.isnan(v) else v / scale for v in values], color=colors,
            edgecolor=EDGE, linewidth=0.5)
    for i, (n, v) in enumerate(zip(names, values, strict=True)):
        end = 0 if math.isnan(v) else v
        if (rng := spread(on(o[n].samples, key, clock))) is not None:
            whisker(ax, i, rng[0] / scale, rng[1] / scale)
            end = max(end, rng[1])
        ax.text(end / scale, i, f" {fmt_s(v)}", va="center", fontsize=LABEL_PT)
    ax.invert_yaxis()
    ax.margins(x=0.3)

"""The sweep's chart: each phase against the swept value, with growth exponents."""

from __future__ import annotations

import math
from typing import Any

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from ...model.rows import PHASES
from ...model.stats.units import fmt_s
from ...model.stats.witness import CPU
from ...model.sweep import Sweep, clock_of, exponents, log_scale, medians
from ..blocks import more
from ..format import PHASE_LABELS, fmt_exponent
from ..sweep import MAX_POINTS
from .style import DPI, LEGEND_PT, VARIANT, plain

#: At most this many tick labels on an axis (every k-th value is labelled).
MAX_TICKS = 12
#: Panels a row (one per phase, on two rows).
COLUMNS = 3

#: Each variant's line: its colour, and a marker and dash of its own (told apart in grey too).
STYLE = {"flat": dict(color=VARIANT["flat"], marker="o", linestyle="-"),
         "nested": dict(color=VARIANT["nested"], marker="s", linestyle="--")}


def _axis(ax: Any, xs: list[Any], labelled: list[Any], step: int, loglog: bool) -> None:
    """A panel's x axis: every ``step``-th value labelled, log-log where all positive."""
    if loglog:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
        ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xticks(xs[::step], [plain(v) for v in labelled])


def sweep_figure(c: Sweep) -> Figure:
    """One panel per phase: median seconds against the swept value, both variants."""
    name, values = plain(c.name), list(c.values)[:MAX_POINTS]
    left = len(c.values) - len(values)
    loglog = log_scale(values)
    xs = values if loglog else list(range(len(values)))
    meds, ks = medians(c), exponents(c)
    step = -(-len(values) // MAX_TICKS)  # every value up to MAX_TICKS, then every k-th
    # three panels a row, 10 inches wide: at a notebook's width (about 900 px) its 10 pt
    # type is 12 px or more (five panels in a row were shrunk to 9 px)
    fig = Figure(figsize=(10, 6.4), layout="constrained", dpi=DPI)
    grid = list(fig.subplots(2, COLUMNS).flat)
    axes = grid[:len(PHASES)]
    for spare in grid[len(PHASES):]:
        spare.set_axis_off()
    for ax, phase in zip(axes, PHASES, strict=True):
        for variant, style in STYLE.items():
            ys = meds[variant][phase][:MAX_POINTS]
            if all(math.isnan(y) for y in ys):
                continue
            label = f"{variant} {fmt_exponent(name, ks[variant][phase])}"
            ax.plot(xs, ys, label=label, **style)
        _axis(ax, values if loglog else xs, values[::step], step, loglog)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: fmt_s(y)))
        ax.set_title(PHASE_LABELS[phase])
        ax.set_xlabel(name)
        if ax.lines:  # a phase nothing measured (a stopped sweep) has no legend
            ax.legend(fontsize=LEGEND_PT)
    for ax in axes[::COLUMNS]:
        ax.set_ylabel(f"median {'CPU' if clock_of(c) == CPU else 'wall'} time")
    fig.suptitle(f"{plain(c.entry)}: how each phase grows with {name}"
                 + (f" (the first {len(values)}; {plain(more(left, 'values'))} not drawn)"
                    if left else ""))
    return fig

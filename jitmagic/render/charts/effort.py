"""The effort chart (``--effort``): per setting, XLA's compile beside what a call costs."""

from __future__ import annotations

import math

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ...model.causes.effort import COMPILE
from ...model.causes.effort import DEFAULT
from ...model.causes.effort import EXECUTE
from ...model.causes.effort import Effort
from ...model.stats.rule import median
from ...model.stats.rule import spread
from ...model.stats.units import fmt_s
from ...model.stats.units import time_unit
from ...model.stats.witness import on
from ..verdicts import clock_name
from .palette import PHASE
from .style import DPI
from .style import LABEL_PT
from .style import plain
from .style import whisker

#: The two panels: the sample key, what its axis says, its colour (the phases' own).
PANELS = ((COMPILE, "XLA compile (cold first call)"), (EXECUTE, "a call (steady state)"))


def measured_rows(e: Effort) -> dict[str, dict[str, list[float]]]:
    """Each row that has samples (the default first), as its samples of the compile and
    a call on the record's clock; a row whose code failed before a sample is left out."""
    clock = e.clock()
    rows = {DEFAULT: e.default, **{n: r.samples for n, r in e.rows.items()}}
    return {n: {k: on(s, k, clock) for k, _ in PANELS} for n, s in rows.items()
            if s.get(COMPILE) or s.get(EXECUTE)}


def effort_figure(e: Effort) -> Figure:
    """Two bar panels, XLA's compile and a call, one bar per measured row in each."""
    rows = measured_rows(e)
    names = list(rows)
    clock = clock_name(e.clock())
    fig = Figure(figsize=(9, 0.9 + 0.45 * len(names)), layout="constrained", dpi=DPI)
    for i, (ax, (key, label)) in enumerate(zip(fig.subplots(1, 2), PANELS, strict=True)):
        seconds = [x for n in names for x in rows[n][key]]
        unit, scale = time_unit(seconds)
        _panel(ax, [rows[n][key] for n in names], scale, PHASE[key])
        ax.set_yticks(range(len(names)), [plain(n) for n in names] if i == 0
                      else [""] * len(names))
        ax.set_xlabel(f"{unit}, {label}, {clock}")
    fig.suptitle(f"{plain(e.entry)}: XLA's compile against a call, per setting ({clock})",
                 fontsize=11)
    return fig


def _panel(ax: Axes, samples: list[list[float]], scale: float, color: str) -> None:
    """Median bars in the panel's unit, min–max whiskers, each median said past its
    whisker ("—" and no bar where a row has no sample of this)."""
    values = [median(xs) for xs in samples]
    ax.barh(range(len(values)), [0 if math.isnan(v) else v / scale for v in values],
            color=color)
    for i, (xs, v) in enumerate(zip(samples, values, strict=True)):
        end = 0.0 if math.isnan(v) else v
        if (rng := spread(xs)) is not None:
            whisker(ax, i, rng[0] / scale, rng[1] / scale)
            end = max(end, rng[1])
        ax.text(end / scale, i, f" {fmt_s(v)}", va="center", fontsize=LABEL_PT)
    ax.invert_yaxis()
    ax.margins(x=0.3)

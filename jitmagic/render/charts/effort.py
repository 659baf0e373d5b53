"""The effort chart (``--effort``): per setting, XLA's compile beside what a call costs."""

from __future__ import annotations

from matplotlib.figure import Figure

from ...model.causes.effort import COMPILE
from ...model.causes.effort import DEFAULT
from ...model.causes.effort import EXECUTE
from ...model.causes.effort import Effort
from ...model.stats.witness import on
from ..verdicts import clock_name
from .style import DPI
from .style import PHASE
from .style import bar_panels
from .style import plain

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
    clock = clock_name(e.clock())
    fig = Figure(figsize=(9, 0.9 + 0.45 * len(rows)), layout="constrained", dpi=DPI)
    bar_panels(fig, list(rows), [([xs[key] for xs in rows.values()], f"{label}, {clock}",
                                  PHASE[key]) for key, label in PANELS])
    fig.suptitle(f"{plain(e.entry)}: XLA's compile against a call, per setting ({clock})",
                 fontsize=11)
    return fig

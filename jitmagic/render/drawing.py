"""Charts drawn into PNG bytes, and what drawing them imports, imported whole first (so
that Ctrl-C while a chart is drawn never cuts an import half way). matplotlib is
imported here only when a chart is drawn, never for a text report."""

from __future__ import annotations

import importlib
import sys

from ..interrupts import interrupts_held
from ..model.causes.effort import Effort
from ..model.comparison import Comparison
from ..model.orderings import Orderings
from ..model.reports.releases import Releases

#: What drawing a chart imports: the chart modules (matplotlib with them), the backend
#: that writes PNG, and the image plugins Pillow loads as it saves its first image.
CHART_MODULES = (f"{__package__}.charts.phases", f"{__package__}.charts.sweep",
                 f"{__package__}.charts.attribution", f"{__package__}.charts.orderings",
                 f"{__package__}.charts.effort", f"{__package__}.charts.releases",
                 "matplotlib.backends.backend_agg", "PIL.BmpImagePlugin", "PIL.GifImagePlugin",
                 "PIL.JpegImagePlugin", "PIL.PpmImagePlugin")


def imported_whole(*modules: str) -> None:
    """Import ``modules`` (and what they import) whole: a Ctrl-C during the import comes
    after it (:func:`~jitmagic.interrupts.interrupts_held`). One cut half way would
    leave the modules it had begun half made, and matplotlib broken in that process
    until a restart
    (``KeyError: 'Rectangle:kwdoc'`` at every later ``import matplotlib.pyplot``)."""
    missing = [name for name in modules if name not in sys.modules]
    if not missing:
        return
    with interrupts_held():
        for name in missing:
            importlib.import_module(name)


def load_charts() -> None:
    """Everything a chart needs, imported whole (:func:`imported_whole`) before anything
    is drawn, so that Ctrl-C while a chart is drawn never cuts an import; matplotlib is
    imported here, when a chart is drawn, never for a text report."""
    imported_whole(*CHART_MODULES)


def attribution_png(c: Comparison, plot: bool = True) -> bytes | None:
    """The per-helper trace-time chart as PNG bytes, when there is an attribution."""
    a = c.attribution
    if not plot or a is None:
        return None
    load_charts()
    from .charts.attribution import attribution_figure
    from .charts.phases import to_png

    return to_png(attribution_figure(a))


def orderings_png(o: Orderings, plot: bool = True) -> bytes | None:
    """The orderings' chart as PNG bytes (matplotlib imported only when drawing)."""
    if not plot:
        return None
    load_charts()
    from .charts.orderings import orderings_figure
    from .charts.phases import to_png

    return to_png(orderings_figure(o))


def effort_png(e: Effort, plot: bool = True) -> bytes | None:
    """The effort chart (XLA's compile against a call, per setting) as PNG bytes, where
    any row was measured (matplotlib imported only when drawing)."""
    if not plot or e.default_error is not None:
        return None
    load_charts()
    from .charts.effort import effort_figure
    from .charts.effort import measured_rows
    from .charts.phases import to_png

    return to_png(effort_figure(e)) if measured_rows(e) else None


def releases_png(r: Releases) -> bytes | None:
    """The releases' stages side by side as PNG bytes, where any release measured."""
    load_charts()
    from .charts.phases import to_png
    from .charts.releases import releases_figure

    fig = releases_figure(r)
    return None if fig is None else to_png(fig)

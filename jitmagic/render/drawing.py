"""Charts drawn into PNG bytes, and what drawing them imports, imported whole first (so that Ctrl-C
while a chart is drawn never cuts an import half way)."""

from __future__ import annotations

import importlib
import sys

from ..interrupts import interrupts_held
from ..model.causes.effort import Effort
from ..model.comparison import Comparison
from ..model.orderings import Orderings

#: What drawing a chart imports: the chart modules (matplotlib with them), the backend
#: that writes PNG, and the image plugins Pillow loads as it saves its first image.
CHART_MODULES = (f"{__package__}.charts.phases", f"{__package__}.charts.sweep",
                 f"{__package__}.charts.bars",
                 "matplotlib.backends.backend_agg", "PIL.BmpImagePlugin", "PIL.GifImagePlugin",
                 "PIL.JpegImagePlugin", "PIL.PpmImagePlugin")


def imported_whole(*modules: str) -> None:
    """Import ``modules`` (and what they import) whole: a Ctrl-C during the import comes after it
    (:func:`~jitmagic.interrupts.interrupts_held`)."""
    missing = [name for name in modules if name not in sys.modules]
    if not missing:
        return
    with interrupts_held():
        for name in missing:
            importlib.import_module(name)


def load_charts() -> None:
    """Everything a chart needs, imported whole (:func:`imported_whole`) before drawing."""
    imported_whole(*CHART_MODULES)


def attribution_png(c: Comparison, plot: bool = True) -> bytes | None:
    """The per-helper trace-time chart as PNG bytes, when there is an attribution."""
    a = c.attribution
    if not plot or a is None:
        return None
    load_charts()
    from .charts.bars import attribution_figure
    from .charts.phases import to_png

    return to_png(attribution_figure(a))


def orderings_png(o: Orderings, plot: bool = True) -> bytes | None:
    """The orderings' chart as PNG bytes (matplotlib imported only when drawing)."""
    if not plot:
        return None
    load_charts()
    from .charts.bars import orderings_figure
    from .charts.phases import to_png

    return to_png(orderings_figure(o))


def effort_png(e: Effort, plot: bool = True) -> bytes | None:
    """The effort chart (XLA's compile against a call, per setting) as PNG bytes, where
    any row was measured (matplotlib imported only when drawing)."""
    if not plot or e.default_error is not None:
        return None
    load_charts()
    from .charts.bars import effort_figure
    from .charts.bars import measured_rows
    from .charts.phases import to_png

    return to_png(effort_figure(e)) if measured_rows(e) else None

"""Charts drawn into PNG bytes, and what drawing them imports, imported whole first (so that Ctrl-C
while a chart is drawn never cuts an import half way)."""

from __future__ import annotations

import importlib
import sys

from ..interrupts import interrupts_held
from ..model.attribution import Attribution
from ..model.causes.effort import Effort
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


def bars_png(record: Attribution | Orderings | Effort | None, plot: bool = True) -> bytes | None:
    """A part's bar chart (:mod:`.charts.bars`) as PNG bytes; None where not asked for (``plot``)
    or there is nothing to draw (matplotlib imported only when drawing)."""
    failed = isinstance(record, Effort) and record.default_error is not None
    if not plot or record is None or failed:
        return None
    load_charts()
    from .charts import bars
    from .charts.phases import to_png

    if isinstance(record, Effort):
        return to_png(bars.effort_figure(record)) if bars.measured_rows(record) else None
    if isinstance(record, Attribution):
        return to_png(bars.attribution_figure(record))
    return to_png(bars.orderings_figure(record))

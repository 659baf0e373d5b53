"""Charts drawn into PNG bytes, their imports loaded whole first (Ctrl-C safe)."""

from __future__ import annotations

from ..interrupts import interrupts_held
from ..model.attribution import Attribution
from ..model.causes.effort import Effort
from ..model.orderings import Orderings
from ..model.reports.releases import Releases


def load_charts() -> None:
    """Import what drawing a chart imports, whole, so a Ctrl-C comes after the import."""
    with interrupts_held():
        import matplotlib.backends.backend_agg  # noqa: F401
        from PIL import (
            BmpImagePlugin,  # noqa: F401
            GifImagePlugin,  # noqa: F401
            JpegImagePlugin,  # noqa: F401
            PpmImagePlugin,  # noqa: F401
        )

        from .charts import (
            bars,  # noqa: F401
            phases,  # noqa: F401
            releases,  # noqa: F401
            sweep,  # noqa: F401
        )


def bars_png(record: Attribution | Orderings | Effort | None, plot: bool = True) -> bytes | None:
    """A part's bar chart as PNG bytes; None where not asked for or nothing to draw."""
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


def releases_png(r: Releases) -> bytes | None:
    """The releases' stages side by side as PNG bytes, where any release measured."""
    load_charts()
    from .charts.phases import to_png
    from .charts.releases import releases_figure

    fig = releases_figure(r)
    return None if fig is None else to_png(fig)

"""The ordering toggle: a thin layer over what was measured, never a measurement.

``ToggleButtons`` over an ``Output``, in the ``interactive_output`` pattern:
:func:`panel_output` is a plain function of (orderings, choice); the observer
only puts its result into the ``Output``. The ``Output`` is filled by setting
``out.outputs`` (not ``with out:``), which a plain IPython shell and a real
kernel both honour; each choice replaces what was shown before.
"""

from __future__ import annotations

import uuid
from typing import Any

import ipywidgets as widgets

from ..model.orderings import TOGGLED, Orderings
from ..render.charts.orderings import orderings_figure
from ..render.charts.phases import to_png
from ..render.orderings import panel_html, panel_text, static_toggle


def as_orderings(result: Any) -> Orderings:
    """The orderings of a ``Comparison`` (from ``--vmap``), or ``result`` itself."""
    if isinstance(result, Orderings):
        return result
    found = getattr(result, "orderings", None)
    if found is None:
        raise ValueError("this result has no vmap/jit orderings: measure with --vmap "
                         "(or jitmagic.compare(..., vmap=True))")
    return found


def panel_output(o: Orderings, chosen: str) -> dict[str, Any]:
    """One ordering's panel as a display_data output: its verdict's headline first, then
    the chart, the numbers, the full verdict and the jaxpr (all from the record)."""
    png = to_png(orderings_figure(o, highlight=chosen))
    return {"output_type": "display_data", "metadata": {},
            "data": {"text/plain": panel_text(o, chosen), "text/html": panel_html(o, chosen, png)}}


class OrderingToggle(widgets.VBox):
    """The toggle's box, which also shows as plain HTML where no widget can run.

    Its MIME bundle carries, beside the widget view, a ``text/html`` with both
    orderings' panels behind radio buttons (:func:`~jitmagic.render.orderings.static_toggle`):
    what nbconvert exports and notebook viewers show, switchable without a kernel.
    """

    static_html: str = ""

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data = dict(super()._repr_mimebundle_(**kwargs) or {})
        if self.static_html:
            data["text/html"] = self.static_html
        # what a terminal shows (no widget runs there): one line, not the widget's repr
        data["text/plain"] = TEXT_FORM
        return data


#: The toggle in plain text: the orderings table above it holds the same figures.
TEXT_FORM = ("(the jit(vmap(f)) / vmap(jit(f)) toggle: shown in Jupyter; the orderings "
             "table above holds its figures)")


def ordering_widget(result: Any, value: str = TOGGLED[0]) -> widgets.VBox:
    """A ``ToggleButtons`` (``jit(vmap(f))`` / ``vmap(jit(f))``) over an ``Output``.

    Both panels are rendered once, here; a click only swaps which is shown, and the
    static HTML (:class:`OrderingToggle`) holds the same two panels.
    """
    o = as_orderings(result)
    panels = {name: panel_output(o, name) for name in TOGGLED}
    static = static_toggle(o, {n: p["data"]["text/html"] for n, p in panels.items()},
                           f"jitcompare-orderings-{uuid.uuid4().hex[:12]}", value)
    toggle = widgets.ToggleButtons(options=list(TOGGLED), value=value,
                                   description="ordering:",
                                   tooltips=[f"show what {n} measured" for n in TOGGLED])
    out = widgets.Output()

    def show(change: dict | None = None) -> None:
        out.outputs = (panels[toggle.value],)

    toggle.observe(show, names="value")
    show()
    box = OrderingToggle([toggle, out])
    box.static_html = static
    return box

"""The ordering toggle from Python (``ordering_widget(result)``; the magic shows none, as a
notebook reopened without a kernel would say "model not found"): switched in the browser
(``jslink``), with a static twin nbconvert keeps."""

from __future__ import annotations

import uuid
from typing import Any

import ipywidgets as widgets
from IPython.display import display

from ..model.orderings import TOGGLED, Orderings
from ..render.charts.bars import orderings_figure
from ..render.charts.phases import to_png
from ..render.orderings import panel_html, panel_text, static_toggle


def panel_output(o: Orderings, chosen: str) -> dict[str, Any]:
    """One ordering's panel as a display_data output: headline, chart, numbers, verdict, jaxpr."""
    png = to_png(orderings_figure(o, highlight=chosen))
    return {"output_type": "display_data", "metadata": {},
            "data": {"text/plain": panel_text(o, chosen), "text/html": panel_html(o, chosen, png)}}


#: The toggle in plain text: the orderings table above it holds the same figures.
TEXT_FORM = ("(the jit(vmap(f)) / vmap(jit(f)) toggle: shown in Jupyter; the orderings "
             "table above holds its figures)")


class OrderingToggle(widgets.VBox):
    """The toggle's box: ``display(box)`` shows the widget, then its static twin."""

    static_html: str = ""

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data = dict(super()._repr_mimebundle_(**kwargs) or {})
        # what a terminal shows (no widget runs there): one line, not the widget's repr
        data["text/plain"] = TEXT_FORM
        # an export without widget state shows this: nothing, as the twin follows
        data["text/html"] = ""
        return data

    def static_bundle(self) -> dict[str, str]:
        return {"text/html": self.static_html}

    def _ipython_display_(self) -> None:
        display(self._repr_mimebundle_(), raw=True)
        if self.static_html:
            display(self.static_bundle(), raw=True)


def ordering_widget(result: Any, value: str = TOGGLED[0]) -> OrderingToggle:
    """``ToggleButtons`` (``jit(vmap(f))`` / ``vmap(jit(f))``) over a ``Stack`` of panels."""
    o = result if isinstance(result, Orderings) else getattr(result, "orderings", None)
    if o is None:
        raise ValueError("this result has no vmap/jit orderings: measure with --vmap "
                         "(or jitmagic.compare(..., vmap=True))")
    panels = {name: panel_output(o, name) for name in TOGGLED}
    key = f"jitcompare-orderings-{uuid.uuid4().hex[:12]}"
    static = static_toggle(o, {n: p["data"]["text/html"] for n, p in panels.items()}, key, value)
    toggle = widgets.ToggleButtons(options=list(TOGGLED), value=value,
                                   description="ordering:",
                                   tooltips=[f"show what {n} measured" for n in TOGGLED])
    outs = [widgets.Output() for _ in TOGGLED]
    for out, name in zip(outs, TOGGLED, strict=True):
        out.outputs = (panels[name],)
    stack = widgets.Stack(outs, selected_index=toggle.index)
    widgets.jslink((toggle, "index"), (stack, "selected_index"))  # the browser, kernel or not
    widgets.link((toggle, "index"), (stack, "selected_index"))  # Python setting toggle.value
    box = OrderingToggle([toggle, stack])
    # the static twin (``#key``) hidden right after an output that drew the buttons
    box.static_html = (f"<style>.jp-OutputArea-child:has(.widget-toggle-buttons) + "
                       f".jp-OutputArea-child:has(#{key}) {{display: none;}}</style>{static}")
    return box


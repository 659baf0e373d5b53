"""A record that shows itself: ``str()``, IPython's pretty printer and its MIME bundle.

The one upward import of the model: :mod:`jitmagic.render.bundle`, imported lazily
here, so a ``Comparison`` or a ``Lines`` table (measured, or loaded from a report)
displays as the magic showed it, and the model never needs the renderers to load.
"""

from __future__ import annotations

from typing import Any


class Shown:
    """Mixin for records that :mod:`jitmagic.render.bundle` knows how to present."""

    def __str__(self) -> str:
        from ..render.bundle import text

        return text(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """What IPython shows: the bundle the magic displays, chart included (one code
        path, so a loaded report looks as it did when it was measured)."""
        from ..render.bundle import repr_mimebundle

        return repr_mimebundle(self, include, exclude)

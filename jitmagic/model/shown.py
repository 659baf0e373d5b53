"""A record that shows itself: ``str()``, IPython's pretty printer and its MIME bundle.

The records know nothing of how they are shown: :mod:`jitmagic.render` fills the
registry below when it is imported (``import jitmagic`` imports it), so a
``Comparison`` or a ``Lines`` table, measured or loaded from a report, displays as
the magic showed it. Without a renderer a record still has a one-line ``str()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: ``text(record) -> str`` and ``bundle(record, include, exclude) -> dict``, set by render.
_RENDERERS: dict[str, Callable[..., Any]] = {}


def register_renderers(text: Callable[[Any], str],
                       bundle: Callable[[Any, Any, Any], dict[str, str]]) -> None:
    """Show every :class:`Shown` record with ``text`` (``str()``) and ``bundle`` (IPython)."""
    _RENDERERS.update(text=text, bundle=bundle)


class Shown:
    """Mixin for records a renderer registered with :func:`register_renderers` presents."""

    def summary(self) -> str:
        """One line that needs no renderer."""
        return f"<{type(self).__name__}>"

    def __str__(self) -> str:
        text = _RENDERERS.get("text")
        return text(self) if text else self.summary()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """What IPython shows: the bundle the magic displays, chart included (one code
        path, so a loaded report looks as it did when it was measured)."""
        bundle = _RENDERERS.get("bundle")
        if bundle is None:
            return {"text/plain": str(self)}
        return bundle(self, include, exclude)

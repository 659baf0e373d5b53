"""A record that shows itself: ``str()``, IPython's pretty printer and its MIME bundle,
and the registry of renderers through which every record is worded.

The records know nothing of how they are shown or said: :mod:`jitmagic.render` fills
the registry below when it is imported (``import jitmagic`` imports it), one renderer
per record type and form (:func:`register`), so a ``Comparison`` or a ``Lines`` table,
measured or loaded from a report, displays as the magic showed it, and a verdict's
``text`` is the sentence the report shows. Without a renderer a record still has a
one-line ``str()`` (``<Comparison>``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: The forms a record is rendered in: ``text`` (``str()``), ``bundle`` (IPython's MIME
#: bundle), ``summary`` (the ``repr``), ``headline`` (a verdict in one line),
#: ``verdict`` (a verdict in full).
_RENDERERS: dict[tuple[str, type], Callable[..., Any]] = {}


def register(form: str, record_type: type, renderer: Callable[..., Any]) -> None:
    """Render records of ``record_type`` (and its subclasses) in ``form`` with
    ``renderer``."""
    _RENDERERS[form, record_type] = renderer


def renderer(form: str, record: Any) -> Callable[..., Any] | None:
    """The renderer of ``form`` registered for ``record``'s type, or the nearest of its
    bases (None: none is registered, as before :mod:`jitmagic.render` is imported)."""
    for cls in type(record).__mro__:
        if (found := _RENDERERS.get((form, cls))) is not None:
            return found
    return None


def worded(form: str, record: Any) -> Any:
    """What the renderer of ``form`` registered for ``record``'s type says of it (None
    where none is registered)."""
    said = renderer(form, record)
    return said(record) if said else None


class Shown:
    """Mixin for records that a renderer registered with :func:`register` presents."""

    def summary(self) -> str:
        """One line: the registered ``summary`` where there is one, else ``<Name>``."""
        said = renderer("summary", self)
        return said(self) if said else f"<{type(self).__name__}>"

    def __str__(self) -> str:
        text = renderer("text", self)
        return text(self) if text else self.summary()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """What IPython shows: the bundle the magic displays, chart included (one code
        path, so a loaded report looks as it did when it was measured)."""
        bundle = renderer("bundle", self)
        if bundle is None:
            return {"text/plain": str(self)}
        return bundle(self, include, exclude)

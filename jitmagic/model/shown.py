"""The registry of renderers (:mod:`jitmagic.render` fills it) through which every record is
shown and worded, and :class:`Shown`, a record that shows itself through it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: The renderers by form (``text``, ``bundle``, ``summary``, ...) and record type.
_RENDERERS: dict[tuple[str, type], Callable[..., Any]] = {}


def register(form: str, record_type: type, renderer: Callable[..., Any]) -> None:
    """Render records of ``record_type`` (and its subclasses) in ``form`` with ``renderer``."""
    _RENDERERS[form, record_type] = renderer


def renderer(form: str, record: Any) -> Callable[..., Any] | None:
    """The renderer of ``form`` for ``record``'s type or its nearest base (None: none)."""
    for cls in type(record).__mro__:
        if (found := _RENDERERS.get((form, cls))) is not None:
            return found
    return None


def worded(form: str, record: Any) -> Any:
    """What the renderer of ``form`` says of ``record`` (None: none is registered)."""
    said = renderer(form, record)
    return said(record) if said else None


def worded_as(form: str, empty: Any = None) -> Any:
    """A method: what the renderer of ``form`` says of the record (``empty``: nothing)."""
    return lambda self: worded(form, self) or empty


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
        """What IPython shows: the bundle the magic displays, chart included."""
        bundle = renderer("bundle", self)
        if bundle is None:
            return {"text/plain": str(self)}
        return bundle(self, include, exclude)

"""The attribution record (``--attribute``): the flat trace split by helper."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .saved import schema


@dataclass(frozen=True)
class HelperTime(schema.Saved):
    """One helper's part of the flat trace."""

    helper: str = schema.saved(schema.text)
    calls: int = schema.saved(schema.count)
    inclusive_s: float = schema.saved(schema.seconds)
    own_s: float = schema.saved(schema.number)


@dataclass(frozen=True)
class Attribution(schema.Saved):
    """The flat variant's trace split by helper, sorted by inclusive seconds."""

    entry: str
    trace_s: float
    entry_s: float  # the entry function's call, inclusive of the helpers it calls
    entry_code_s: float  # the entry function's own lines
    helpers: tuple[HelperTime, ...]

    WHERE = "attribution"
    #: The shares and JAX's seconds are written, derived again when read.
    FIELDS = (("entry", "entry", schema.text, schema.REQUIRED),
              ("trace_s", "trace_s", schema.seconds, schema.REQUIRED),
              ("entry_s", "entry_s", schema.seconds, schema.REQUIRED),
              ("entry_own_s", "entry_own_s", None, None),
              ("entry_code_s", "entry_code_s", schema.number, schema.REQUIRED),
              ("jax_s", "jax_s", None, None),
              ("entry_share", "entry_share", None, None),
              ("helpers", "helpers", schema.items(HelperTime.from_dict), ()))

    @property
    def jax_s(self) -> float:
        """Trace seconds outside the entry function: JAX's own."""
        return self.trace_s - self.entry_s

    @property
    def entry_own_s(self) -> float:
        """What the trace spent on the entry itself: its own lines plus JAX's work around it."""
        return self.entry_code_s + self.jax_s

    def heaviest(self, limit: int) -> tuple[tuple[HelperTime, ...], int]:
        """The ``limit`` heaviest helpers (inclusive seconds), and how many were left out."""
        ordered = sorted(self.helpers, key=lambda h: -h.inclusive_s)
        return tuple(ordered[:limit]), max(len(ordered) - limit, 0)

    def share(self, seconds: float) -> float:
        """``seconds`` as a fraction of the measured trace."""
        return seconds / self.trace_s if self.trace_s > 0 else 0.0

    @property
    def entry_share(self) -> float:
        return self.share(self.entry_own_s)

    def to_dict(self) -> dict[str, Any]:
        shares = [{"share": self.share(h.own_s), "inclusive_share": self.share(h.inclusive_s)}
                  for h in self.helpers]
        return super().to_dict() | {"helpers": [
            h.to_dict() | share for h, share in zip(self.helpers, shares, strict=True)]}

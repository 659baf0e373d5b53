"""The attribution record: the flat trace split by helper (own and inclusive seconds).

Measured by :mod:`jitmagic.measure.parts.attribution`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .saved.schema import REQUIRED
from .saved.schema import count
from .saved.schema import fields
from .saved.schema import items
from .saved.schema import number
from .saved.schema import seconds
from .saved.schema import text


@dataclass(frozen=True)
class HelperTime:
    """One helper's part of the flat trace."""

    helper: str
    calls: int
    inclusive_s: float
    own_s: float


@dataclass(frozen=True)
class Attribution:
    """The flat variant's trace split by helper, sorted by inclusive seconds."""

    entry: str
    trace_s: float
    entry_s: float  # the entry function's call, inclusive of the helpers it calls
    entry_code_s: float  # the entry function's own lines
    helpers: tuple[HelperTime, ...]

    @property
    def jax_s(self) -> float:
        """Trace seconds outside the entry function: JAX's set-up and its finishing of the jaxpr."""
        return self.trace_s - self.entry_s

    @property
    def entry_own_s(self) -> float:
        """What the trace spent on the entry itself: its own lines plus JAX's work around it."""
        return self.entry_code_s + self.jax_s

    def heaviest(self, limit: int) -> tuple[tuple[HelperTime, ...], int]:
        """The ``limit`` helpers with the most inclusive seconds, heaviest first, and how
        many were left out (the table and the chart show these; the record keeps all)."""
        ordered = sorted(self.helpers, key=lambda h: -h.inclusive_s)
        return tuple(ordered[:limit]), max(len(ordered) - limit, 0)

    def share(self, seconds: float) -> float:
        """``seconds`` as a fraction of the measured trace."""
        return seconds / self.trace_s if self.trace_s > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "entry": self.entry,
            "trace_s": self.trace_s,
            "entry_s": self.entry_s,
            "entry_own_s": self.entry_own_s,
            "entry_code_s": self.entry_code_s,
            "jax_s": self.jax_s,
            "entry_share": self.share(self.entry_own_s),
            "helpers": [
                {"helper": h.helper, "calls": h.calls, "inclusive_s": h.inclusive_s,
                 "own_s": h.own_s, "share": self.share(h.own_s),
                 "inclusive_share": self.share(h.inclusive_s)}
                for h in self.helpers
            ],
        }

    @classmethod
    def from_dict(cls, d: Any, where: str = "attribution") -> Attribution:
        """The attribution saved as ``d`` (its shares are derived again, not read)."""
        return cls(**fields(d, _FIELDS, where))


def _helper(d: Any, where: str) -> HelperTime:
    return HelperTime(**fields(d, _HELPER_FIELDS, where))


_HELPER_FIELDS = (
    ("helper", "helper", text, REQUIRED),
    ("calls", "calls", count, REQUIRED),
    ("inclusive_s", "inclusive_s", seconds, REQUIRED),
    ("own_s", "own_s", number, REQUIRED),
)
_FIELDS = (
    ("entry", "entry", text, REQUIRED),
    ("trace_s", "trace_s", seconds, REQUIRED),
    ("entry_s", "entry_s", seconds, REQUIRED),
    ("entry_code_s", "entry_code_s", number, REQUIRED),
    ("helpers", "helpers", items(_helper), ()),
)

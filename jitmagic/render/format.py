"""Numbers as a person reads them: one format for seconds, ratios and growth."""

from __future__ import annotations

import math


def fmt_s(x: float) -> str:
    """Seconds in a unit a person reads at a glance."""
    if x is None or math.isnan(x):
        return "—"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x / 1e-9:.3g} ns"


def fmt_ratio(r: float) -> str:
    return "—" if math.isnan(r) else f"{r:.3g}×"


def fmt_exponent(name: str, k: float | None) -> str:
    """``~ N^1.0`` (or ``—`` when it could not be fitted)."""
    return "—" if k is None else f"~ {name}^{k:.1f}".replace("-0.0", "0.0")

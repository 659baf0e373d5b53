"""Numbers as a person reads them: one format for seconds, ratios and growth."""

from __future__ import annotations

from ..model.units import UNITS, fmt_ratio, fmt_s, time_unit

__all__ = ["UNITS", "fmt_exponent", "fmt_ratio", "fmt_s", "time_unit"]


def fmt_exponent(name: str, k: float | None) -> str:
    """``~ N^1.0`` (or ``—`` when it could not be fitted)."""
    return "—" if k is None else f"~ {name}^{k:.1f}".replace("-0.0", "0.0")

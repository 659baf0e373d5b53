"""Seconds, ratios, sizes and cut text as a person reads them, the same way everywhere."""

from __future__ import annotations

import math
from collections.abc import Iterable

#: Time units, largest first: (name, seconds per unit).
UNITS = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))


def time_unit(seconds: Iterable[float | None]) -> tuple[str, float]:
    """The unit (name, seconds per unit) the largest of ``seconds`` reads in (17.5 ms)."""
    finite = [abs(x) for x in seconds if x is not None and math.isfinite(x)]
    top = max(finite, default=1.0)
    return next(((u, s) for u, s in UNITS if top >= s), UNITS[-1])


def fmt_s(x: float | None) -> str:
    """Seconds in a unit a person reads at a glance ("—" where not measured)."""
    if x is None or math.isnan(x):
        return "—"
    if not math.isfinite(x):
        return f"{x} s"
    rounded = float(f"{x:.3g}")  # 0.9996 s is 1 s, not 1e+03 ms: the unit of what is shown
    unit, scale = time_unit([rounded])
    shown = rounded / scale
    return f"{shown:,.0f} {unit}" if shown >= 1000 else f"{shown:.3g} {unit}"


def fmt_ratio(r: float) -> str:
    """A ratio such as ``3.07×`` or ``15.9×`` ("—" where not measured): :func:`ratio_figures`."""
    return "—" if math.isnan(r) else f"{ratio_figures(r)}×"


def ratio_figures(r: float) -> str:
    """The one way a ratio is written: two decimals below 10, one below 100, none above."""
    if not math.isfinite(r):
        return str(r)
    return f"{r:.2f}" if r < 10 else f"{r:.1f}" if r < 100 else f"{r:,.0f}"


def counted(n: int, word: str) -> str:
    """``1 line``, ``8,208 equations``: the one pluralising rule of every report."""
    return f"{n:,} {word}{'s' * (n != 1)}"


def fmt_bytes(n: int | None) -> str:
    """``4.0 MiB``, ``40 KiB``, ``512 B`` (empty for none)."""
    if not n:
        return ""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            value = n / size
            return f"{value:.1f} {unit}" if value < 10 else f"{value:,.0f} {unit}"
    return f"{n} B"


def cut_to(text: str, width: int) -> str:
    """``text``, or its first ``width - 1`` characters and ``…``."""
    return text if len(text) <= width else text[:width - 1] + "…"

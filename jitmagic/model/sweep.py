"""Reading a sweep: its points, and how each phase grows with the swept value.

A sweep is stored in ``Comparison.extras["sweep"]``; growth exponents are derived
from the points' medians (a least-squares line on log-log axes), never stored.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from .comparison import PHASES, VARIANTS, Comparison


def is_sweep(c: Comparison) -> bool:
    """Whether ``c`` carries a sweep (from ``--sweep`` or a loaded report)."""
    return isinstance(c.extras.get("sweep"), dict)


def sweep_points(c: Comparison) -> list[Comparison]:
    """The sweep's comparisons, one per value, in the order they were measured."""
    return [Comparison.from_dict(p) for p in c.extras["sweep"]["points"]]


def log_scale(values: Sequence[Any]) -> bool:
    """Whether the values can go on a log axis: real numbers, all positive, at least two."""
    nums = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return len(nums) == len(values) and len(set(nums)) >= 2 and all(v > 0 for v in nums)


def growth_exponent(values: Sequence[float], seconds: Sequence[float]) -> float | None:
    """Slope of log(seconds) against log(value): ``seconds ~ value**k``.

    ``None`` where it cannot be fitted (fewer than two usable points, or values
    that are not positive numbers).
    """
    pairs = [(v, s) for v, s in zip(values, seconds, strict=True)
             if s is not None and not math.isnan(s) and s > 0]
    if not log_scale([v for v, _ in pairs]):
        return None
    x = [math.log(v) for v, _ in pairs]
    y = [math.log(s) for _, s in pairs]
    return statistics.linear_regression(x, y).slope


def medians(c: Comparison) -> dict[str, dict[str, list[float]]]:
    """Per variant and phase, the medians across the sweep's values (NaN: not measured)."""
    points = sweep_points(c)
    return {v: {p: [pt.variants[v].median(p) if v in pt.variants else math.nan for pt in points]
                for p in PHASES} for v in VARIANTS}


def exponents(c: Comparison) -> dict[str, dict[str, float | None]]:
    """Per variant and phase, the fitted growth exponent (``None``: cannot be fitted)."""
    values = c.extras["sweep"]["values"]
    return {v: {p: growth_exponent(values, secs) for p, secs in by_phase.items()}
            for v, by_phase in medians(c).items()}

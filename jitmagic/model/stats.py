"""Statistics derived from raw samples: the one median, and numbers as JSON writes them."""

from __future__ import annotations

import math
import statistics


def median(xs: list[float] | None) -> float:
    """The median of samples; NaN (not measured) when there are none."""
    return statistics.median(xs) if xs else math.nan


def json_number(x: float | None) -> float | None:
    """JSON has no NaN: a number that was not measured is written as null."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x

"""The sweep record, its points, and how each phase grows with the swept value.

A sweep is stored in ``Comparison.sweep``; growth exponents are derived from the
points' medians (a least-squares line on log-log axes), never stored.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .rows import PHASES, VARIANTS
from .schema import REQUIRED, fail, fields, items, optional, scalar, seconds, text

if TYPE_CHECKING:
    from .comparison import Comparison


@dataclass(frozen=True)
class Sweep:
    """``--sweep name=values``: one comparison per value, in the order they were measured."""

    name: str
    values: tuple[Any, ...]
    points: tuple[Comparison, ...]
    wall_s: float
    stopped: str | None = None  # why the sweep ended before its last value (PARTIAL)

    def __post_init__(self) -> None:
        if len(self.values) != len(self.points):
            raise ValueError(f"a sweep has {len(self.values)} values but {len(self.points)} "
                             "points: they must pair up")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "values": list(self.values),
                "points": [p.to_dict() for p in self.points], "wall_s": self.wall_s,
                "stopped": self.stopped}

    @classmethod
    def from_dict(cls, d: Any, point: Callable[[Any, str], Comparison],
                  where: str = "sweep") -> Sweep:
        """The sweep saved as ``d``; ``point(dict, where)`` reads each point (a comparison,
        itself without a sweep)."""
        got = fields(d, _FIELDS, where)
        got["points"] = tuple(point(p, f"{where}.points[{i}]")
                              for i, p in enumerate(items(lambda x, _: x)(d["points"],
                                                                          f"{where}.points")))
        if len(got["values"]) != len(got["points"]):
            fail(f"{where}.points", f"one point per value ({len(got['values'])})",
                 f"{len(got['points'])} points")
        return cls(**got)


_FIELDS = (
    ("name", "name", text, REQUIRED),
    ("values", "values", items(scalar), REQUIRED),
    ("points", "points", lambda x, _: x, REQUIRED),
    ("wall_s", "wall_s", seconds, REQUIRED),
    ("stopped", "stopped", optional(text), None),
)


def _sweep(c: Comparison) -> Sweep:
    """``c.sweep``: this module's functions are given a sweep's comparison only."""
    assert c.sweep is not None, f"{c.entry}: not a sweep's comparison"
    return c.sweep


def sweep_points(c: Comparison) -> list[Comparison]:
    """The sweep's comparisons, one per value, in the order they were measured."""
    return list(_sweep(c).points)


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


def program_sizes(c: Comparison) -> set[tuple[Any, ...]]:
    """The distinct (variant, jaxpr equations, StableHLO bytes) the sweep's points built."""
    return {(v, pt.variants[v].jaxpr_eqns, pt.variants[v].stablehlo_bytes)
            for pt in sweep_points(c) for v in VARIANTS if v in pt.variants}


def unchanged(c: Comparison) -> bool:
    """Whether every value of the sweep built the same flat and the same nested program
    (equal jaxpr equations and StableHLO bytes): the swept value changed nothing, so
    any growth in the timings is noise."""
    sizes = program_sizes(c)
    known = bool(sizes) and all(e is not None and b is not None for _, e, b in sizes)
    return len(_sweep(c).points) >= 2 and known and len(sizes) == len({v for v, _, _ in sizes})


def unchanged_warning(c: Comparison) -> str | None:
    """What to tell the user when :func:`unchanged`: the value is not read as a global."""
    if not unchanged(c):
        return None
    sweep = _sweep(c)
    name = sweep.name
    eqns = sweep.points[0].flat.jaxpr_eqns
    return (f"`{name}` did not change the program: every value built {eqns} jaxpr equations "
            f"(flat), so the growth is not fitted; is `{name}` read by the code as a global?")


def exponents(c: Comparison) -> dict[str, dict[str, float | None]]:
    """Per variant and phase, the fitted growth exponent (``None``: cannot be fitted,
    or the swept value did not change the program, see :func:`unchanged`)."""
    values = _sweep(c).values
    fit = not unchanged(c)
    return {v: {p: growth_exponent(values, secs) if fit else None
                for p, secs in by_phase.items()}
            for v, by_phase in medians(c).items()}

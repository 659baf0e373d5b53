"""The sweep record (``--sweep``): one comparison per value, in the order measured, and how
each phase grows with the swept value (a log-log least-squares line, never stored)."""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .comparison import PROVENANCE, READABLE, Comparison
from .notes import Noted, read_notes, said_in, saved
from .rows import PHASES, VARIANTS
from .saved import schema
from .saved.schema import fail
from .shown import Shown, renderer
from .stats.rule import median
from .stats.witness import CPU, WALL, Clock, has_cpu, is_busy, on, waited_share

SCHEMA = "jitmagic.sweep/3"
#: The sweep schemas ``from_dict`` reads (/1 kept the provenance on every point).
SWEEP_READABLE = ("jitmagic.sweep/1", "jitmagic.sweep/2", SCHEMA)


@dataclass(frozen=True)
class Sweep(Shown):
    """``--sweep name=values``: one comparison per value, in the order they were measured."""

    name: str
    values: tuple[Any, ...]
    points: tuple[Comparison, ...]
    wall_s: float
    stopped: str | None = None  # why the sweep ended before its last value (PARTIAL)
    warned: tuple[Noted, ...] = ()  # about the whole sweep (each point keeps its own)
    #: Provenance, as a comparison's (docs/reports.md).
    source: str | None = None
    file: str | None = None
    options: str | None = None
    created: str | None = None
    baseline: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if len(self.values) != len(self.points):
            raise ValueError(f"a sweep has {len(self.values)} values but {len(self.points)} "
                             "points: they must pair up")
        if not self.points:
            raise ValueError("a sweep has at least one point")

    @property
    def entry(self) -> str:
        return self.last.entry

    warnings = said_in("warned")

    @property
    def last(self) -> Comparison:
        """The last value's comparison (what orderings, advice and ``--lines`` ran on)."""
        return self.points[-1]

    @property
    def env(self) -> dict[str, Any]:
        return self.last.env

    @property
    def stopped_anywhere(self) -> str | None:
        return self.stopped or self.last.stopped_anywhere

    @property
    def headline(self) -> str:
        """The first call's verdict value by value, in one line."""
        said = renderer("headline", self)
        return said(self) if said else self.summary()

    def summary(self) -> str:
        return f"<Sweep {self.entry} over {self.name}: {len(self.points)} values>"

    def __repr__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "entry": self.entry, "name": self.name,
                "values": list(self.values), "points": [p.to_dict() for p in self.points],
                "wall_s": self.wall_s, "stopped": self.stopped, "warnings": saved(self.warned),
                **{k: getattr(self, k) for k in PROVENANCE if getattr(self, k) is not None}}

    @classmethod
    def from_dict(cls, d: Any, where: str = "") -> Sweep:
        """The sweep saved as ``d`` (or inside a comparison, before 0.3)."""
        if isinstance(d, dict) and d.get("schema") in READABLE and "sweep" in d:
            return cls._inside_comparison(d)
        if not isinstance(d, dict) or d.get("schema") not in SWEEP_READABLE:
            got = d.get("schema") if isinstance(d, dict) else None
            raise schema.ReportSchemaError(f"cannot read a sweep with schema {got!r}: this "
                                           f"jitmagic reads "
                                           f"{' or '.join(map(repr, SWEEP_READABLE))}")
        top = schema.fields(d, _TOP_FIELDS, where)
        read = cls._read(d, where, top.pop("warned"))
        if d["schema"] == SWEEP_READABLE[0]:  # /1: the provenance was every point's
            top = {k: getattr(read.last, k) for k in PROVENANCE}
        return dataclasses.replace(read, **top)

    @classmethod
    def _inside_comparison(cls, d: dict[str, Any]) -> Sweep:
        inner = schema.obj(d["sweep"], "sweep")
        read = cls._read(inner, "sweep", ())
        kept = set(read.last.warned)  # the last point's own; the rest are the sweep's
        return cls(read.name, read.values, read.points, read.wall_s, read.stopped,
                   tuple(w for w in Comparison.from_dict(d).warned if w not in kept))

    @classmethod
    def _read(cls, d: Any, where: str, warned: tuple[Noted, ...]) -> Sweep:
        got = schema.fields(d, _FIELDS, where)
        at = f"{where}.points" if where else "points"
        if len(got["values"]) != len(got["points"]):
            fail(at, f"one point per value ({len(got['values'])})",
                        f"{len(got['points'])} points")
        if not got["points"]:
            fail(at, "at least one point", "none")
        return cls(**got, warned=warned)


def _point(d: Any, where: str) -> Comparison:
    if isinstance(d, dict) and d.get("sweep") is not None:
        fail(f"{where}.sweep", "no sweep inside a sweep's point", "a sweep")
    return Comparison.from_dict(d, where)


_FIELDS = (
    ("name", "name", schema.text, schema.REQUIRED),
    ("values", "values", schema.items(schema.scalar), schema.REQUIRED),
    ("points", "points", schema.items(_point), schema.REQUIRED),
    ("wall_s", "wall_s", schema.seconds, schema.REQUIRED),
    ("stopped", "stopped", schema.optional(schema.text), None),
)
_TOP_FIELDS = (("warnings", "warned", read_notes, ()),
               *schema.same(schema.optional(schema.text), None, *PROVENANCE))


def log_scale(values: Sequence[Any]) -> bool:
    """Whether the values can go on a log axis: real numbers, all positive, at least two."""
    nums = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return len(nums) == len(values) and len(set(nums)) >= 2 and all(v > 0 for v in nums)


def growth_exponent(values: Sequence[float], seconds: Sequence[float]) -> float | None:
    """Slope of log(seconds) against log(value) (None: it cannot be fitted)."""
    pairs = [(v, s) for v, s in zip(values, seconds, strict=True)
             if s is not None and not math.isnan(s) and s > 0]
    if not log_scale([v for v, _ in pairs]):
        return None
    x = [math.log(v) for v, _ in pairs]
    y = [math.log(s) for _, s in pairs]
    return statistics.linear_regression(x, y).slope


def clock_of(s: Sweep) -> Clock:
    """The one clock the sweep's medians and growth are on."""
    rows = [pt.variants[v].samples for pt in s.points for v in VARIANTS if v in pt.variants]
    if not rows or not is_busy(waited_share(rows)):
        return WALL
    return CPU if all(has_cpu(r, p) for r in rows for p in PHASES if r.get(p)) else WALL


def medians(s: Sweep) -> dict[str, dict[str, list[float]]]:
    """Per variant and phase, the medians across the sweep's values on :func:`clock_of`."""
    clock = clock_of(s)
    return {v: {p: [median(on(pt.judged(v).samples, p, clock)) if v in pt.variants
                    else math.nan for pt in s.points]
                for p in PHASES} for v in VARIANTS}


def unchanged(s: Sweep) -> bool:
    """Whether every value built the same programs: then any growth is noise."""
    sizes = {(v, pt.variants[v].jaxpr_eqns, pt.variants[v].stablehlo_bytes)
             for pt in s.points for v in VARIANTS if v in pt.variants}
    known = bool(sizes) and all(e is not None and b is not None for _, e, b in sizes)
    return len(s.points) >= 2 and known and len(sizes) == len({v for v, _, _ in sizes})


def exponents(s: Sweep) -> dict[str, dict[str, float | None]]:
    """Per variant and phase, the fitted growth exponent (None: not fitted)."""
    values = s.values
    fit = not unchanged(s)
    return {v: {p: growth_exponent(values, secs) if fit else None
                for p, secs in by_phase.items()}
            for v, by_phase in medians(s).items()}


#: Student's t at 97.5% by degrees of freedom, for a 95% interval on a fitted slope.
T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)


def t_975(df: int) -> float:
    """Student's t quantile at 0.975 with ``df`` degrees of freedom (at least one)."""
    if df <= len(T_975):
        return T_975[df - 1]
    z = statistics.NormalDist().inv_cdf(0.975)
    return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3))


@dataclass(frozen=True)
class Trend:
    """seconds ~ value^``k`` for one variant's stage, and its 95% interval (None: too few)."""

    k: float
    low: float | None = None
    high: float | None = None


def slope_error(values: Sequence[float], runs: Sequence[Sequence[float]]) -> tuple[float, int]:
    """The standard error of the log-log slope over every run, and its degrees of freedom."""
    pairs = [(math.log(v), math.log(x)) for v, xs in zip(values, runs, strict=True)
             for x in xs if x > 0 and math.isfinite(x)]
    df = len(pairs) - 2
    xs = [x for x, _ in pairs]
    mean_x = statistics.fmean(xs) if xs else 0.0
    sxx = math.fsum((x - mean_x) ** 2 for x in xs)
    if df < 1 or sxx == 0:
        return math.nan, 0
    fit = statistics.linear_regression(xs, [y for _, y in pairs])
    resid = math.fsum((y - fit.intercept - fit.slope * x) ** 2 for x, y in pairs)
    return math.sqrt(resid / df / sxx), df


def trends(s: Sweep) -> dict[str, dict[str, Trend | None]]:
    """Per variant and phase, the growth :class:`Trend` (None where none is fitted)."""
    clock, ks = clock_of(s), exponents(s)
    out: dict[str, dict[str, Trend | None]] = {}
    for v, by_phase in ks.items():
        out[v] = {}
        for p, k in by_phase.items():
            runs = [on(pt.judged(v).samples, p, clock) if v in pt.variants else []
                    for pt in s.points]
            se, df = slope_error(s.values, runs) if k is not None else (math.nan, 0)
            half = t_975(df) * se if df else math.nan
            out[v][p] = None if k is None else \
                Trend(k, *((k - half, k + half) if math.isfinite(half) else (None, None)))
    return out

"""``--sweep NAME=V1,V2,...``: one comparison per value, and how each phase grows.

A sweep binds ``NAME`` to each value in the cell's scratch namespace before the
cell runs, measures flat against nested for each, and returns the last value's
:class:`~jitmagic.result.Comparison` with the whole sweep in
``extras["sweep"] = {"name", "values", "points", "wall_s"}`` (``points``: one
comparison dict per value). Growth exponents are derived from the points'
medians (a least-squares line on log-log axes), never stored.

No IPython and no matplotlib here: progress goes to a callback.
"""

from __future__ import annotations

import ast
import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .engine import prepare_function, run_comparison
from .errors import InputError, UserCodeError
from .result import PHASES, VARIANTS, Comparison

SWEEP_USAGE = "--sweep NAME=V1,V2,... (e.g. --sweep n=1,2,4,8,16)"

#: ``progress(index, count, value, elapsed_s)``, called before each value is measured
#: (index counts from 0) and once more with ``index == count`` when the sweep is done.
Progress = Callable[[int, int, Any, float], None]


def parse_sweep(spec: str) -> tuple[str, list[Any]]:
    """``"n=1,2,4"`` → ``("n", [1, 2, 4])``; values are Python literals."""
    name, sep, rest = spec.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise InputError(f"--sweep {spec!r} does not name a variable: write {SWEEP_USAGE}")
    texts = [t.strip() for t in rest.split(",") if t.strip()]
    if not texts:
        raise InputError(f"--sweep {spec!r} has no values: write {SWEEP_USAGE}")
    return name, [_literal(text) for text in texts]


def _literal(text: str) -> Any:
    """A sweep value: a number, string or bool written as a Python literal (JSON can hold it)."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = None
        ok = False
    else:
        ok = isinstance(value, int | float | str) and not (
            isinstance(value, float) and not math.isfinite(value))
    if not ok:
        raise InputError(f"--sweep value {text!r} is not a number or a quoted string: "
                         f"write {SWEEP_USAGE}")
    return value


def run_sweep(name: str, values: Sequence[Any], measure: Callable[[Any], Comparison],
              progress: Progress | None = None) -> Comparison:
    """Call ``measure(value)`` for each value; the last comparison, with the sweep in extras."""
    if not values:
        raise InputError(f"a sweep needs at least one value: write {SWEEP_USAGE}")
    start = time.perf_counter()
    points: list[Comparison] = []
    for i, value in enumerate(values):
        if progress:
            progress(i, len(values), value, time.perf_counter() - start)
        try:
            points.append(measure(value))
        except (InputError, UserCodeError) as exc:
            raise type(exc)(f"sweep {name}={value!r}: {exc}") from None
        if points[-1].stopped:  # interrupted or out of time: the later values are not run
            break
    wall = time.perf_counter() - start
    if progress:
        progress(len(points), len(points), values[len(points) - 1], wall)
    record = {"name": name, "values": list(values[:len(points)]),
              "points": [p.to_dict() for p in points], "wall_s": wall}
    last = points[-1]
    return dataclasses.replace(last, extras={**last.extras, "sweep": record})


def sweep(name: str, values: Sequence[Any], fn: Callable, /, *args: Any, repeat: int = 3,
          number: int | None = None, nest: Sequence[str] | None = None,
          progress: Progress | bool = True, **kwargs: Any) -> Comparison:
    """``jitmagic.compare`` once per value, with the global ``name`` of ``fn``'s module
    bound to the value (in a copy of that module's namespace; yours is not changed).

    ``progress=True`` prints a line per value; pass a callable to show it your way,
    or ``False`` for silence. Returns what ``--sweep`` returns.
    """
    if not name.isidentifier():
        raise InputError(f"sweep: {name!r} is not a variable name")

    def one(value: Any) -> Comparison:
        prepared = prepare_function(fn, args, kwargs, nest, bindings={name: value})
        return run_comparison(fn.__name__, prepared, repeat=repeat, number=number)

    if progress is True:
        def progress(*a: Any) -> None:
            print(progress_line(name, *a), flush=True)
    return run_sweep(name, list(values), one, progress or None)


def progress_line(name: str, index: int, count: int, value: Any, elapsed_s: float) -> str:
    """``sweep n=4 (3/5), 12.3 s elapsed``: what the magic and the command show meanwhile."""
    if index >= count:
        return f"sweep over {name} done: {count} values in {elapsed_s:.1f} s"
    return f"sweep {name}={value!r} ({index + 1}/{count}), {elapsed_s:.1f} s elapsed"


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
    x, y = np.log([v for v, _ in pairs]), np.log([s for _, s in pairs])
    return float(np.polyfit(x, y, 1)[0])


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


def fmt_exponent(name: str, k: float | None) -> str:
    """``~ N^1.0`` (or ``—`` when it could not be fitted)."""
    return "—" if k is None else f"~ {name}^{k:.1f}".replace("-0.0", "0.0")

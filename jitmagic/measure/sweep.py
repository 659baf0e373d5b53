"""``--sweep NAME=V1,V2,...``: one comparison per value, and how each phase grows.

A sweep binds ``NAME`` to each value in the cell's scratch namespace before the
cell runs, measures flat against nested for each, and returns the last value's
:class:`~jitmagic.model.comparison.Comparison` with the whole sweep in its
``sweep`` (a :class:`~jitmagic.model.sweep.Sweep`: one comparison per value).
Growth exponents are derived from the points' medians (a least-squares line on
log-log axes), never stored.

No IPython and no matplotlib here: progress goes to a callback.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import InputError, UserCodeError
from ..model.comparison import Comparison
from ..model.sweep import Sweep
from ..options import Options, split_options
from .pipeline import measure, prepare_function

#: ``progress(index, count, value, elapsed_s)``, called before each value is measured
#: (index counts from 0) and once more with ``index == count`` when the sweep is done.
Progress = Callable[[int, int, Any, float], None]


def run_sweep(name: str, values: Sequence[Any], measure: Callable[[Any], Comparison],
              progress: Progress | None = None) -> Comparison:
    """Call ``measure(value)`` for each value (at least one, as :class:`Options` checks);
    the last comparison, holding the sweep."""
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
    record = Sweep(name, tuple(values[:len(points)]), tuple(points), wall)
    return dataclasses.replace(points[-1], sweep=record)


def sweep(name: str, values: Sequence[Any], fn: Callable, /, *args: Any,
          progress: Progress | bool = True, options: Options | None = None,
          **kwargs: Any) -> Comparison:
    """``jitmagic.compare`` once per value, with the global ``name`` of ``fn``'s module
    bound to the value (set in that module's namespace while it runs, then put back).

    Takes ``compare``'s option keywords (``repeat``, ``nest``, ``vmap``, ``batch``,
    ``in_axes``, ``attribute``, ``advise``, ...), measured at every value; other
    keywords go to ``fn``. ``progress=True`` prints a line per value; pass a
    callable to show it your way, or ``False`` for silence. Returns what
    ``--sweep`` returns.
    """
    options, kwargs = split_options({**kwargs, "sweep": (name, values)}, options)

    def one(value: Any) -> Comparison:
        prepared = prepare_function(fn, args, kwargs, options.nest, bindings={name: value})
        return measure(prepared["flat"].variant.plan.name, prepared, options)

    if progress is True:
        def progress(*a: Any) -> None:
            print(progress_line(name, *a), flush=True)
    return run_sweep(*options.sweep, one, progress or None)


def progress_line(name: str, index: int, count: int, value: Any, elapsed_s: float) -> str:
    """``sweep n=4 (3/5), 12.3 s elapsed``: what the magic and the command show meanwhile."""
    if index >= count:
        return f"sweep over {name} done: {count} values in {elapsed_s:.1f} s"
    return f"sweep {name}={value!r} ({index + 1}/{count}), {elapsed_s:.1f} s elapsed"

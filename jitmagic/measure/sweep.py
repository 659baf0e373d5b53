"""``--sweep NAME=V1,V2,...``: one comparison per value of ``NAME``, in the order measured."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import InputError, UserCodeError
from ..model.comparison import Comparison
from ..model.notes import Warned
from ..model.progress import Draw
from ..model.sweep import Sweep, unchanged
from ..options import Options
from ..options.keywords import split_options
from ..usercode import mine
from . import pipeline
from .sampling import clocks, stops
from .variants.entry import entry_name


def run_sweep(name: str, values: Sequence[Any], measure: Callable[[Any, stops.Checkpoint],
              Comparison], check: stops.Checkpoint) -> Sweep:
    """``measure(value, check)`` for each value; once a value stops no later value starts."""
    start = clocks.wall()
    points: list[Comparison] = []
    stopped: str | None = None
    with check.catching_interrupts():
        for i, value in enumerate(values):
            check.report.sweep_at(f"{name}={value!r}", i, len(values))
            try:
                with check.mode(python=True):  # the cell's setup: the user's Python
                    points.append(measure(value, check))
            except (InputError, UserCodeError) as exc:
                raise type(exc)(f"sweep {name}={value!r}: {exc}") from None
            except (stops.Stop, stops.StageInterrupted) as stop:
                why = why_unmeasured(stop)
                if not points:  # the first value: then nothing at all was measured
                    raise KeyboardInterrupt(f"at {name}={value!r}: {why}: nothing was "
                                            "measured") from None
                stopped = f"at {name}={value!r}: {why}, before it was measured"
            else:
                cut = points[-1].stopped_anywhere
                stopped = f"at {name}={value!r}: {cut}" if cut else None
            if stopped:
                break
    record = Sweep(name, tuple(values[:len(points)]), tuple(points),
                   clocks.wall() - start, stopped)
    warning = unchanged_warning(record)
    return dataclasses.replace(record, warned=(warning,)) if warning else record


def why_unmeasured(stop: stops.Stop | stops.StageInterrupted) -> str:
    """Why a sweep stopped at a value before anything of it was measured."""
    if isinstance(stop, stops.StageInterrupted):  # in the cell's own code, run for this value
        return "interrupted by the user while the code ran"
    return "interrupted while finding your helpers" if stop.reason == stops.FINDING else stop.reason


def sweep(name: str, values: Sequence[Any], fn: Callable, /, *args: Any,
          progress: Draw | None = None, options: Options | None = None,
          **kwargs: Any) -> Sweep:
    """``jitmagic.compare`` once per value of the global ``name`` of ``fn``'s module."""
    start = clocks.wall()
    options, kwargs = split_options({**kwargs, "sweep": (name, values)}, options)

    def one(value: Any, check: stops.Checkpoint) -> Comparison:
        begun = clocks.wall()  # a point's wall time counts its discovery trace
        with check.finding_helpers():  # as the magic's: Ctrl-C there stops it at once
            prepared = pipeline.variants_of(fn, args, kwargs, nest=options.nest,
                                   bindings={name: value}, in_axes=options.in_axes)
        return pipeline.measure_prepared(prepared, options, start=begun, check=check)

    assert options.sweep is not None  # given just above
    with pipeline.option_hints(), mine(options.mine):
        return run_sweep(*options.sweep, one,
                         pipeline.checkpoint(entry_name(fn), options, start, progress))


def unchanged_warning(s: Sweep) -> Warned | None:
    """The warning where the swept value is not read as a global."""
    return Warned("sweep_unchanged", s.name, s.points[0].flat.jaxpr_eqns) if unchanged(s) \
        else None

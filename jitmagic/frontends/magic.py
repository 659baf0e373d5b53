"""The ``%jitcompare`` / ``%%jitcompare`` magic: parse → measure → present.

Only this module knows about IPython's magic machinery; the measuring is in
:mod:`jitmagic.engine`, the pictures in :mod:`jitmagic.plot`.
"""

from __future__ import annotations

import functools
import time
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from ..errors import InputError, UserCodeError
from ..measure.sweep import progress_line, run_sweep
from ..model.comparison import Comparison
from ..model.storage import save
from ..options import check_options, parse_in_axes, parse_sweep, split_names
from ..render.bundle import bundle
from . import cell as cellmod
from .prepare import measure_plan, parse


@magics_class
class JitCompareMagics(Magics):
    """Magics that measure a JAX function flat and with nested jit on its helpers."""

    @magic_arguments()
    @argument("-o", "--output", action="store_true",
              help="return the result object (like %%timeit -o)")
    @argument("-r", "--repeat", type=int, default=3,
              help="cold runs per variant; medians are reported (default 3)")
    @argument("-n", "--number", type=int, default=None,
              help="calls per steady-state timing loop (default: auto-ranged like %%timeit)")
    @argument("--nest", type=str, default=None, metavar="HELPER[,HELPER...]",
              help="add jit only to these helpers in the nested variant (default: all)")
    @argument("--timeout", type=float, default=None, metavar="SECONDS",
              help="stop after the stage that runs past SECONDS and show what was measured")
    @argument("--no-plot", action="store_true", help="leave the chart out")
    @argument("--save", type=str, default=None, metavar="PATH",
              help="write the result as JSON to PATH")
    @argument("--vmap", action="store_true",
              help="also compare jit(vmap(f)) with vmap(jit(f)) on a batch, with a toggle")
    @argument("--batch", type=int, default=None, metavar="N",
              help="--vmap: stack the call's arguments N times along a new axis (default 64)")
    @argument("--in-axes", type=str, default=None, metavar="SPEC",
              help="--vmap: the arguments already are a batch, mapped as jax.vmap's in_axes "
                   "(e.g. 0,None)")
    @argument("--sweep", type=str, default=None, metavar="NAME=V1,V2,...",
              help="run once per value with NAME bound to it before the cell runs; "
                   "plots each phase against the value (log-log, with growth exponents)")
    @argument("--attribute", action="store_true",
              help="time each helper during the flat variant's trace (calls, inclusive, own)")
    @argument("--advise", action="store_true",
              help="measure which helpers are worth their own jit: nest each alone (needs -r 3+)")
    @line_cell_magic
    def jitcompare(self, line: str = "", cell: str | None = None) -> Comparison | None:
        """Time trace, lower, XLA compile, first call and steady-state execution of a
        function with and without nested jax.jit on the helpers it calls.

        Cell form: the cell's last statement calls the entry, e.g. `model(x)`.
        Line form: `%jitcompare [options] model(x)` on functions defined earlier.
        """
        start = time.perf_counter()
        if cell is None:
            line, call = cellmod.split_line(line)
            source = call
        else:
            source = self.shell.transform_cell(cell)
        args = self._parse_options(line)
        try:
            result = self._measure(source, args, start)
        except (InputError, UserCodeError) as exc:
            raise UsageError(str(exc)) from None
        self._present(result, args)
        return result if args.output else None

    def _parse_options(self, line: str) -> Any:
        try:
            args = parse_argstring(self.jitcompare, line)
        except ValueError as exc:  # e.g. an unclosed quote
            raise UsageError(f"cannot read the options {line!r}: {exc}") from None
        if args.nest is not None:
            args.nest = split_names(args.nest)
        args.vmap = args.vmap or args.batch is not None or args.in_axes is not None
        try:
            check_options(args.repeat, args.number, args.timeout)
            if args.in_axes is not None:
                args.in_axes = parse_in_axes(args.in_axes)
            if args.sweep is not None:
                args.sweep = parse_sweep(args.sweep)
        except InputError as exc:
            raise UsageError(str(exc)) from None
        return args

    def _measure(self, source: str, args: Any, start: float) -> Comparison:
        plan = parse(source)
        measure = functools.partial(measure_plan, plan, self.shell.user_ns, repeat=args.repeat,
                                    number=args.number, nest=args.nest, timeout=args.timeout,
                                    vmap=args.vmap, batch=args.batch, in_axes=args.in_axes,
                                    attribute=args.attribute, advise=args.advise)
        if args.sweep:
            name, values = args.sweep
            return run_sweep(name, values, lambda v: measure(bindings={name: v}),
                             progress=_SweepProgress(name))
        return measure(start=start)

    def _present(self, result: Comparison, args: Any) -> None:
        display(bundle(result, plot=not args.no_plot), raw=True)
        if "orderings" in result.extras:
            from .widget import ordering_widget

            display(ordering_widget(result))
        if args.save:
            save(result, args.save)


class _SweepProgress:
    """Which value a sweep is on and for how long, in one display updated in place."""

    def __init__(self, name: str):
        self.name = name
        self.handle = None

    def __call__(self, index: int, count: int, value: Any, elapsed_s: float) -> None:
        data = {"text/plain": progress_line(self.name, index, count, value, elapsed_s)}
        if self.handle is None:
            self.handle = display(data, raw=True, display_id=True)
        else:
            self.handle.update(data, raw=True)

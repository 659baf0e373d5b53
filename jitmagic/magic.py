"""The ``%jitcompare`` / ``%%jitcompare`` magic: parse → measure → present.

Only this module knows about IPython's magic machinery; the measuring is in
:mod:`jitmagic.engine`, the pictures in :mod:`jitmagic.plot`.
"""

from __future__ import annotations

import json
import math
import time
import traceback
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from . import cell as cellmod
from . import orderings as orderingsmod
from .engine import Prepared, check_nest, run_comparison
from .errors import InputError, UserCodeError, user_traceback
from .plot import phases_figure, to_png
from .report import html_summary, text_table
from .result import VARIANTS, Comparison
from .variants import build_variant


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
        if args.repeat < 1:
            raise UsageError(f"-r/--repeat must be at least 1, not {args.repeat}")
        if args.number is not None and args.number < 1:
            raise UsageError(f"-n/--number must be at least 1, not {args.number}")
        if args.timeout is not None and not args.timeout > 0:
            raise UsageError(f"--timeout must be a positive number of seconds, not {args.timeout}")
        if args.nest is not None:
            args.nest = tuple(n.strip() for n in args.nest.split(",") if n.strip())
        args.vmap = args.vmap or args.batch is not None or args.in_axes is not None
        if args.in_axes is not None:
            try:
                args.in_axes = orderingsmod.parse_in_axes(args.in_axes)
            except InputError as exc:
                raise UsageError(str(exc)) from None
        return args

    def _measure(self, source: str, args: Any, start: float) -> Comparison:
        try:
            plan = cellmod.parse_cell(source)
        except SyntaxError as exc:
            raise InputError("syntax error in the cell:\n"
                             + "".join(traceback.format_exception_only(exc))) from None
        prepared = {v: self._prepare(plan, v, args.nest) for v in VARIANTS}
        batched = self._batch(prepared["flat"], args) if args.vmap else None
        result = run_comparison(plan.entry, prepared, repeat=args.repeat, number=args.number,
                                timeout=args.timeout, start=start)
        deadline = start + args.timeout if args.timeout else math.inf
        return orderingsmod.add_orderings(result, batched, repeat=args.repeat,
                                          number=args.number, deadline=deadline)

    def _batch(self, flat: Prepared, args: Any) -> orderingsmod.Batched:
        """The flat entry on a batch, checked before anything is timed."""
        return orderingsmod.prepare_batch(flat.variant.entry, flat.args, flat.kwargs,
                                          batch=args.batch, in_axes=args.in_axes)

    def _prepare(self, plan: cellmod.CellPlan, variant: str, nest: tuple | None) -> Prepared:
        """Run the cell's setup in a fresh scratch copy of the user's namespace."""
        scratch = dict(self.shell.user_ns)
        try:
            cellmod.run_setup(plan, scratch)
            fn, call_args, call_kwargs = cellmod.resolve_call(plan, scratch)
        except InputError:
            raise
        except Exception as exc:
            raise UserCodeError("the cell raised before its final call:\n"
                                + user_traceback(exc)) from None
        nest = check_nest(nest, fn, scratch)
        return Prepared(build_variant(variant, fn, scratch, nest), call_args, call_kwargs)

    def _present(self, result: Comparison, args: Any) -> None:
        png = None if args.no_plot else to_png(phases_figure(result))
        display({"text/plain": text_table(result), "text/html": html_summary(result, png)},
                raw=True)
        if "orderings" in result.extras:
            from .widget import ordering_widget, summary_bundle

            display(summary_bundle(result), raw=True)
            display(ordering_widget(result))
        if args.save:
            with open(args.save, "w") as f:
                json.dump(result.to_dict(), f, indent=1)

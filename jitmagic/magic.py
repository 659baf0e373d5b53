"""The ``%jitcompare`` / ``%%jitcompare`` magic: parse → measure → present.

Only this module knows about IPython's magic machinery; the measuring is in
:mod:`jitmagic.engine`, the pictures in :mod:`jitmagic.plot`.
"""

from __future__ import annotations

import json
import time
import traceback
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from . import advice
from . import cell as cellmod
from .engine import Prepared, check_nest, run_comparison
from .errors import InputError, UserCodeError, user_traceback
from .helpers_plot import attribution_figure
from .helpers_report import helpers_html, helpers_text
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
    @argument("--no-plot", action="store_true", help="leave the chart out")
    @argument("--save", type=str, default=None, metavar="PATH",
              help="write the result as JSON to PATH")
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
            if args.attribute or args.advise:
                result = self._advise(source, args, result)
        except (InputError, UserCodeError) as exc:
            raise UsageError(str(exc)) from None
        self._present(result, args)
        return result if args.output else None

    def _parse_options(self, line: str) -> Any:
        args = parse_argstring(self.jitcompare, line)
        if args.repeat < 1:
            raise UsageError(f"-r/--repeat must be at least 1, not {args.repeat}")
        if args.number is not None and args.number < 1:
            raise UsageError(f"-n/--number must be at least 1, not {args.number}")
        if args.advise and args.repeat < advice.MIN_REPEAT:
            raise UsageError(f"--advise needs at least {advice.MIN_REPEAT} cold runs per variant "
                             f"to tell a saving from noise: use -r {advice.MIN_REPEAT} or more")
        if args.nest is not None:
            args.nest = tuple(n.strip() for n in args.nest.split(",") if n.strip())
        return args

    def _measure(self, source: str, args: Any, start: float) -> Comparison:
        try:
            plan = cellmod.parse_cell(source)
        except SyntaxError as exc:
            raise InputError("syntax error in the cell:\n"
                             + "".join(traceback.format_exception_only(exc))) from None
        prepared = {v: self._prepare(plan, v, args.nest) for v in VARIANTS}
        return run_comparison(plan.entry, prepared, repeat=args.repeat, number=args.number,
                              start=start)

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

    def _advise(self, source: str, args: Any, result: Comparison) -> Comparison:
        """Add per-helper attribution and/or advice, over one more scratch namespace."""
        plan = cellmod.parse_cell(source)
        scratch = dict(self.shell.user_ns)
        cellmod.run_setup(plan, scratch)
        fn, call_args, call_kwargs = cellmod.resolve_call(plan, scratch)
        return advice.extend(result, fn, call_args, call_kwargs, scratch, attribute=args.attribute,
                             advise=args.advise, repeat=args.repeat, number=args.number)

    def _present(self, result: Comparison, args: Any) -> None:
        png = None if args.no_plot else to_png(phases_figure(result))
        display({"text/plain": text_table(result), "text/html": html_summary(result, png)},
                raw=True)
        if "attribution" in result.extras or "advice" in result.extras:
            present_helpers(result, args.no_plot)
        if args.save:
            with open(args.save, "w") as f:
                json.dump(result.to_dict(), f, indent=1)


def present_helpers(result: Comparison, no_plot: bool) -> None:
    """Display the attribution (with its chart) and the advice below the comparison."""
    attribution = result.extras.get("attribution")
    png = None if no_plot or not attribution else to_png(attribution_figure(attribution))
    display({"text/plain": helpers_text(result), "text/html": helpers_html(result, png)},
            raw=True)

"""Cell or file source → the variants ready to measure: the one path behind the magic
and ``python -m jitmagic FILE.py``.

The source's setup runs once per variant, each time in a fresh scratch copy of
a base namespace (the kernel's ``user_ns``, or a bare module namespace for a
file), with any ``bindings`` (a sweep's ``N=4``) set before it runs. Nothing is
written to the base namespace. No IPython here.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterable
from typing import Any

from ..errors import InputError, UserCodeError, user_traceback
from ..measure.pipeline import Prepared, check_nest, measure
from ..measure.sweep import Progress, run_sweep
from ..measure.variants import build_variant
from ..model.comparison import VARIANTS, Comparison
from ..options import Options
from . import cell as cellmod


def parse(source: str) -> cellmod.CellPlan:
    """Parse cell or file text; a syntax error becomes an ``InputError`` naming the line."""
    try:
        return cellmod.parse_cell(source)
    except SyntaxError as exc:
        raise InputError("syntax error in the cell:\n"
                         + "".join(traceback.format_exception_only(exc))) from None


def prepare_variant(plan: cellmod.CellPlan, variant: str, namespace: dict[str, Any],
                    nest: Iterable[str] | None = None,
                    bindings: dict[str, Any] | None = None) -> Prepared:
    """Run the setup in a scratch copy of ``namespace`` (plus ``bindings``) and build
    one variant of the entry it ends by calling."""
    scratch = dict(namespace)
    scratch.update(bindings or {})
    try:
        cellmod.run_setup(plan, scratch)
        fn, call_args, call_kwargs = cellmod.resolve_call(plan, scratch)
    except InputError:
        raise
    except Exception as exc:
        raise UserCodeError("the cell raised before its final call:\n"
                            + user_traceback(exc)) from None
    nest = check_nest(nest, fn, scratch)
    return Prepared(build_variant(variant, fn, scratch, nest), call_args, call_kwargs, fn,
                    scratch)


def measure_plan(plan: cellmod.CellPlan, namespace: dict[str, Any], options: Options, *,
                 bindings: dict[str, Any] | None = None,
                 start: float | None = None) -> Comparison:
    """Prepare both variants of a parsed source and measure them side by side.

    ``bindings`` (a sweep's value) are set before the setup runs; ``options.sweep``
    itself is the caller's to run.
    """
    start = time.perf_counter() if start is None else start
    prepared = {v: prepare_variant(plan, v, namespace, options.nest, bindings)
                for v in VARIANTS}
    return measure(plan.entry, prepared, options, start=start)


def measure_source(plan: cellmod.CellPlan, namespace: dict[str, Any], options: Options,
                   progress: Progress | None = None, start: float | None = None) -> Comparison:
    """What a front end shows for ``options``: one comparison, or with ``options.sweep``
    one per value (``progress`` told before each), the last holding the sweep."""
    if options.sweep is None:
        return measure_plan(plan, namespace, options, start=start)
    name, values = options.sweep
    return run_sweep(name, values,
                     lambda v: measure_plan(plan, namespace, options, bindings={name: v}),
                     progress)

"""``python -m jitmagic FILE.py``: the comparison without a notebook.

The file follows the rule of a ``%%jitcompare`` cell: its last statement calls
the function to measure. The command prints the plain-text table and can write
the JSON report (``--json``) and a self-contained HTML report (``--html``:
charts embedded as PNG data, nothing fetched from a network). ``--vmap``
adds the jit/vmap orderings, ``--sweep`` a scaling sweep. ``demo`` runs the
example from the JAX discussion this project came from (``jitmagic/demo.py``
followed by ``g(x)``).
"""

from __future__ import annotations

import argparse
import builtins
import os
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import InputError, UserCodeError
from ..measure.sweep import progress_line, run_sweep
from ..model.comparison import Comparison
from ..model.storage import save
from ..options import SWEEP_USAGE, check_options, parse_in_axes, parse_sweep, split_names
from ..render.bundle import html_document, text
from . import demo
from .prepare import measure_plan, parse

DEMO_HTML = "jitmagic-demo.html"


def build_parser() -> argparse.ArgumentParser:
    """The command's options; one ``add_argument`` per option, so new ones slot in."""
    parser = argparse.ArgumentParser(prog="python -m jitmagic", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", metavar="FILE.py|demo",
                        help="a Python file whose last statement calls the function to "
                             "measure, or `demo` for the built-in example")
    parser.add_argument("-r", "--repeat", type=int, default=3,
                        help="cold runs per variant; medians are reported (default 3)")
    parser.add_argument("-n", "--number", type=int, default=None,
                        help="calls per steady-state timing loop (default: auto-ranged)")
    parser.add_argument("--nest", type=str, default=None, metavar="HELPER[,HELPER...]",
                        help="add jit only to these helpers in the nested variant")
    parser.add_argument("--sweep", type=str, default=None, metavar="NAME=V1,V2,...",
                        help=f"one comparison per value, NAME bound before the file runs "
                             f"({SWEEP_USAGE})")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="stop after the stage that runs past SECONDS; report what was "
                             "measured")
    parser.add_argument("--vmap", action="store_true",
                        help="also compare jit(vmap(f)) with vmap(jit(f)) on a batch")
    parser.add_argument("--batch", type=int, default=None, metavar="N",
                        help="--vmap: stack the call's arguments N times (default 64)")
    parser.add_argument("--in-axes", type=str, default=None, metavar="SPEC",
                        help="--vmap: the arguments already are a batch, mapped as jax.vmap's "
                             "in_axes (e.g. 0,None)")
    parser.add_argument("--attribute", action="store_true",
                        help="time each helper during the flat variant's trace")
    parser.add_argument("--advise", action="store_true",
                        help="measure which helpers are worth their own jit (needs -r 3+)")
    parser.add_argument("--json", type=str, default=None, metavar="OUT",
                        help="write the report as JSON (readable by jitmagic.load)")
    parser.add_argument("--html", type=str, default=None, metavar="OUT",
                        help="write a self-contained HTML report "
                             f"(demo: default {DEMO_HTML} in the current folder)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command; return the exit status (0 ok, 2 bad input, 1 the user's code failed)."""
    args = build_parser().parse_args(argv)
    path = list(sys.path)
    try:
        result = run(args)
    except (InputError, UserCodeError) as exc:
        print(f"jitmagic: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, InputError) else 1
    finally:
        sys.path[:] = path
    print(text(result))
    write_outputs(result, args)
    return 0


def run(args: argparse.Namespace) -> Comparison:
    """Measure the file (or the demo) as the magic measures a cell."""
    start = time.perf_counter()
    check_options(args.repeat, args.number, args.timeout)
    source, namespace = load_target(args.target)
    if args.target == "demo" and args.html is None:
        args.html = DEMO_HTML
    plan = parse(source)
    nest = None if args.nest is None else split_names(args.nest)
    in_axes = None if args.in_axes is None else parse_in_axes(args.in_axes)
    options: dict[str, Any] = dict(repeat=args.repeat, number=args.number, nest=nest,
                                   timeout=args.timeout, vmap=args.vmap, batch=args.batch,
                                   in_axes=in_axes, attribute=args.attribute,
                                   advise=args.advise)
    if args.sweep:
        name, values = parse_sweep(args.sweep)
        return run_sweep(name, values,
                         lambda v: measure_plan(plan, namespace, bindings={name: v}, **options),
                         progress=lambda *a: print(progress_line(name, *a), flush=True))
    return measure_plan(plan, namespace, start=start, **options)


def load_target(target: str) -> tuple[str, dict[str, Any]]:
    """(source, base namespace) for a file, or for the demo: its module source plus ``g(x)``.

    The namespace is a fresh module namespace named ``__main__``, as for
    ``python FILE.py``; the file's folder goes first on ``sys.path`` likewise.
    """
    if target == "demo":
        path = Path(demo.__file__)
        source = path.read_text() + "\ng(x)\n"
    else:
        path = Path(target)
        if not path.is_file():
            raise InputError(f"{target}: no such file; give a Python file whose last statement "
                             "calls the function to measure, or `demo`")
        source = path.read_text()
        sys.path.insert(0, str(path.resolve().parent))
    namespace = {"__name__": "__main__", "__file__": str(path), "__builtins__": builtins}
    return source, namespace


def write_outputs(result: Comparison, args: argparse.Namespace) -> None:
    """Write the JSON and HTML reports asked for, and say where."""
    if args.json:
        save(result, args.json)
        print(f"wrote {os.path.abspath(args.json)}")
    if args.html:
        Path(args.html).write_text(html_document(result))
        print(f"wrote {os.path.abspath(args.html)} (open it in a browser; works offline)")

"""``python -m jitmagic FILE.py``: the comparison without a notebook.

The file follows the rule of a ``%%jitcompare`` cell: its last statement calls
the function to measure. The command prints the plain-text table and can write
the JSON report (``--save``) and a self-contained HTML report (``--html``:
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
from ..measure.sweep import progress_line
from ..model.comparison import Comparison
from ..model.storage import save
from ..options import OPTIONS, Options
from ..render.bundle import html_document, text
from . import demo
from .prepare import measure_source, parse

DEMO_HTML = "jitmagic-demo.html"


def build_parser() -> argparse.ArgumentParser:
    """The command's parser: its target, the options shared with the magic (from
    :data:`jitmagic.options.OPTIONS`), ``--html``, and ``--json``, the old hidden
    spelling of ``--save``."""
    parser = argparse.ArgumentParser(prog="python -m jitmagic", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", metavar="FILE.py|demo",
                        help="a Python file whose last statement calls the function to "
                             "measure, or `demo` for the built-in example")
    for option in OPTIONS:
        parser.add_argument(*option.flags, **option.parser_keywords())
    parser.add_argument("--html", type=str, default=None, metavar="PATH",
                        help="write a self-contained HTML report to PATH "
                             f"(demo: default {DEMO_HTML} in the current folder)")
    parser.add_argument("--json", type=str, default=None, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command; return the exit status (0 ok, 2 bad input, 1 the user's code failed)."""
    args = build_parser().parse_args(argv)
    if args.json:
        print("jitmagic: --json is deprecated; write --save PATH", file=sys.stderr)
        args.save = args.save or args.json
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
    options = Options.from_namespace(args)
    source, namespace = load_target(args.target)
    if args.target == "demo" and args.html is None:
        args.html = DEMO_HTML
    progress = None
    if options.sweep:
        def progress(*state: Any) -> None:
            print(progress_line(options.sweep[0], *state), flush=True)
    return measure_source(parse(source), namespace, options, progress, start)


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
    if args.save:
        save(result, args.save)
        print(f"wrote {os.path.abspath(args.save)}")
    if args.html:
        Path(args.html).write_text(html_document(result))
        print(f"wrote {os.path.abspath(args.html)} (open it in a browser; works offline)")

"""``python -m jitmagic watch FILE.py [ARGS...]``: run a script as ``python FILE.py ARGS``
would, and print every compile it caused, why, and what it cost. Exit statuses: 0 ended
(gate held); 1 raised, gate failed, or ended early (``os._exit``); 2 bad options; 3 a report
not written; 130 Ctrl-C; 128 + N signal N. Files and status are decided before anything is
printed (:mod:`.live`)."""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import runpy
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

from jitmagic_watch import AfterJax

from ...errors import CannotWriteError, InputError, user_traceback
from ...model.ledger import Gate, Ledger
from ...options import argument_keywords
from ...options.table import COMMAND, WATCH, specs_for
from ...render.ledger import text
from ..statuses import CANNOT_WRITE, INTERRUPTED, MEASURED, RAISED, REGRESSED, USAGE
from .live import Live, write


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m jitmagic watch",
        description="Run FILE.py as written and show every trace and compile it caused: "
                    "per jitted function, JAX's reason, the line, the seconds, the fix.")
    parser.add_argument("script", metavar="FILE.py", help="the script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its own arguments")
    for option in specs_for(WATCH, COMMAND):  # JITMAGIC_WATCH reads the same table
        parser.add_argument(*option.flags, **argument_keywords(option, WATCH))
    return parser


#: Flags of the hook's installer, which jitmagic's own installation replaced.
RETIRED = ("--install-hook", "--remove-hook")


def main(argv: list[str]) -> int:
    if argv[:1] and argv[0] in RETIRED:
        write(f"jitmagic watch: {argv[0]} is no longer needed, and did nothing: installing "
              "jitmagic (pip install) installs the hook of JITMAGIC_WATCH=1 python FILE.py, "
              "and uninstalling it removes it", "stdout")
        return MEASURED
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse has said why
        return USAGE if exc.code else MEASURED
    gate = _checked(args, argv)
    if not isinstance(gate, Gate):
        return gate
    made, status, said = _ran(args, gate)
    if not made:
        return RAISED
    from .api import write_ledger

    written, failed = write_ledger(made[0], args.save, args.html)
    if made[0].over_gate() and status == MEASURED:
        status = REGRESSED
    write("\n".join([text(made[0], args.verbose), *written]), "stdout", last=True)
    for line in ([said] if said else []) + [f"jitmagic watch: {line}" for line in failed]:
        write(line, last=True)
    return (status or CANNOT_WRITE) if failed else status


def _checked(args: argparse.Namespace, argv: list[str]) -> Gate | int:
    """The checked gate (paths made absolute: the script may chdir); else the status, said why."""
    from .api import checked

    script = os.path.abspath(args.script)
    try:
        gate, paths = checked(args.fail_after_warmup, args.max_compiles,
                              {"--save": args.save, "--html": args.html}, {"FILE.py": script})
        _own_options_after(args, argv)
        if not os.path.isfile(script):
            raise InputError(f"{args.script!r} is not a file: give the script to run, e.g. "
                             "`python -m jitmagic watch train.py`")
    except (InputError, CannotWriteError) as exc:
        print(f"jitmagic watch: {exc}", file=sys.stderr)
        return CANNOT_WRITE if isinstance(exc, CannotWriteError) else USAGE
    args.save, args.html = paths["--save"], paths["--html"]
    return gate


def _ran(args: argparse.Namespace, gate: Gate) -> tuple[list[Ledger], int, str | None]:
    """Run the script watched: (the ledger in a list, the status, its traceback where it raised)."""
    from .api import watched

    script = os.path.abspath(args.script)
    entered: list[list[Ledger]] = []
    status, said = MEASURED, None
    argv_before, path_before = sys.argv[:], sys.path[:]
    sys.argv, sys.path[0:0] = [script, *args.args], [os.path.dirname(script)]
    try:
        with _from_jax_import(functools.partial(watched, gate, os.path.basename(script),
                                                script, on_again=Live(source_file=script))
                              ) as entered:
            runpy.run_path(script, run_name="__main__")
    except KeyboardInterrupt:
        status = INTERRUPTED
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else RAISED)
    except BaseException as exc:  # noqa: BLE001 (the script's own error, shown after)
        status, said = RAISED, user_traceback(exc, nest_hint=False)
    finally:
        sys.argv, sys.path[:] = argv_before, path_before
    return (entered[0] if entered else []), status, said


@contextlib.contextmanager
def _from_jax_import(watch: Callable[[], AbstractContextManager[list[Ledger]]],
                     ) -> Iterator[list[list[Ledger]]]:
    """``watch()`` entered as the script's import of jax ends, so that its lines before set
    what JAX reads as it is imported (``os.environ["JAX_PLATFORMS"]``) as under ``python
    FILE.py``, and its run is timed from there as ``JITMAGIC_WATCH``'s (at once where jax is
    imported; at the end where it never is). The list holds what ``watch`` gave."""
    entered: list[list[Ledger]] = []
    stack = contextlib.ExitStack()

    def enter() -> None:
        entered.append(stack.enter_context(watch()))

    after = AfterJax(enter)  # and no JITMAGIC_WATCH's: the command watches by itself
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, AfterJax)]
    with stack:
        if "jax" in sys.modules:
            enter()
        else:
            sys.meta_path.insert(0, after)
        try:
            yield entered
        finally:
            sys.meta_path[:] = [f for f in sys.meta_path if f is not after]
            if not entered:
                enter()


#: The watch's own gate options, and its report options (after FILE.py: the script's).
GATE_OPTIONS = tuple(s.flags[-1] for s in specs_for(WATCH, COMMAND) if s.tools == {WATCH})
OUTPUT_OPTIONS = tuple(s.flags[-1] for s in specs_for(WATCH, COMMAND) if s.tools != {WATCH})


def _own_options_after(args: argparse.Namespace, argv: list[str]) -> None:
    """``InputError`` where the script's arguments start a gate option of the
    watch's (a gate not set cannot fail); a note for ``--save``/``--html``; after ``--``, none."""
    rest = argv[argv.index(args.script) + 1:] if args.script in argv else []
    if rest[:1] == ["--"]:
        return
    named = [a.partition("=")[0] for a in args.args]
    gates = [a for a in named if a in GATE_OPTIONS]
    if gates:
        raise InputError(f"{gates[0]} after {args.script} goes to the script, not to the "
                         f"watch, so no gate would be set: put the watch's options before the "
                         f"script (python -m jitmagic watch {gates[0]} N {args.script}); to "
                         f"pass it to the script, write -- before the script's arguments")
    for option in (a for a in named if a in OUTPUT_OPTIONS):
        print(f"jitmagic watch: {option} after {args.script} goes to the script, not to the "
              f"watch (the watch's own options go before the script)", file=sys.stderr)

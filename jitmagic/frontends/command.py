"""``python -m jitmagic FILE.py``: the comparison without a notebook.

The file follows the rule of a ``%%jitcompare`` cell: its last statement calls
the function to measure. The command prints the answer at a glance (``-v``: the full
report, every row, note and section) and can write
the JSON report (``--save``) and a self-contained HTML report (``--html``:
charts embedded as PNG data, nothing fetched from a network). ``--vmap``
adds the jit/vmap orderings, ``--sweep`` a scaling sweep. ``demo`` runs the
example from the JAX discussion this project came from (``jitmagic/frontends/demo.py``
followed by ``g(x)``).

It runs like ``python FILE.py``: nothing imports jax before the file's leading lines
have run (:mod:`~jitmagic.cell.prelude`), so ``os.environ["XLA_FLAGS"] = ...``
before ``import jax`` takes effect. Reports are written before anything is printed; a
stdout closed early (``| head``) ends the printing quietly, and characters the terminal
cannot encode (a C locale, ``PYTHONIOENCODING=ascii``) are replaced on stdout
(``?``) and stderr (``\\xd7``), in what the file prints too: a finished measurement
never ends in a ``UnicodeEncodeError``.
"""

from __future__ import annotations

import argparse
import ast
import atexit
import dataclasses
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from ..cell.prelude import late_settings, run_prelude
from ..cell.provenance import spell
from ..errors import (
    CannotWriteError,
    InputError,
    RaisedElsewhere,
    UserCodeError,
    exit_after_measuring,
)
from ..interrupts import held_while_importing
from ..measure.children import Entry
from ..measure.sampling import clocks, fresh
from ..measure.sampling.lockstep import LockstepError, current, with_others
from ..measure.sampling.stops import ABANDONED, NO_RESULT, Checkpoint
from ..model.comparison import Comparison
from ..model.sweep import Sweep
from ..options import Options, argument_keywords
from ..options.hints import with_option_hint
from ..options.table import COMMAND, COMPARE, specs_for
from ..render.bundle import at_a_glance, stopped_note, text
from . import launcher
from .saving import ABANDONED_SHOWING, Showing, check_endings, checked_reports, write_outputs, wrote
from .script.crashes import staged, supervised
from .script.loading import check_compiles, check_shape, load_target, source_of
from .script.process import (
    Presses,
    ctrl_c_ignored,
    end_on_ctrl_c,
    exit_now,
    forgiving_stderr,
    ignore_ctrl_c,
    presses_counted,
    safe_output,
    show,
)
from .script.releases import show as show_releases
from .statuses import (
    CANNOT_WRITE,
    ENDED_WELL,
    INTERRUPTED,
    MEASURED,
    PARTIAL,
    RAISED,
    STARTING,
    USAGE,
)
from .stderr_progress import drawing, progress_for

DEMO_HTML = "jitmagic-demo.html"

EXIT_CODES = f"""\
exit status:
  {MEASURED}  measured (and every report written)
  {RAISED}  your code raised (or called sys.exit) before or while it was measured, or
     ended the process before it had finished (os._exit, whatever its status); with
     --processes also a process that fell out of step, or ended before it measured
  {USAGE}  usage: bad options or JITMAGIC_* variables, reports naming one file, or a file
     that does not compile or is not a cell-shaped script
  {CANNOT_WRITE}  cannot write a report (--save, --html): checked before measuring
  {PARTIAL}  measured in part: stopped by Ctrl-C or --timeout (every report written, marked
     "stopped", with what was measured)
  {INTERRUPTED}  abandoned by Ctrl-C (a second one, or one while finding the helpers), or a
       report left unwritten by a Ctrl-C while it was written (the text still printed)
  128+N  killed by signal N (the line says which: a crash of native code, SIGKILL's
       out-of-memory killer, or another process's SIGTERM)
  with --processes, the status of the first process that failed (128+N: killed by
  signal N), the message naming that process

arguments after `--` go to your script as its sys.argv[1:], e.g.
  python -m jitmagic train.py -r 1 -- --steps 10

two saved reports compared, exit 1 on a regression (python -m jitmagic diff --help):
  python -m jitmagic diff OLD.json NEW.json [--fail-on-slower [RATIO]]
every compile a script causes, and why (python -m jitmagic watch --help):
  python -m jitmagic watch [--fail-after-warmup N] FILE.py [ARGS...]"""


def build_parser() -> argparse.ArgumentParser:
    """The command's parser: its file, then the comparison's options the command takes."""
    parser = _Parser(prog="python -m jitmagic", description=__doc__,
                                     epilog=EXIT_CODES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", metavar="FILE.py|demo",
                        help="a Python file whose last statement calls the function to "
                             "measure, or `demo` for the built-in example (its --html "
                             f"is {DEMO_HTML} in the current folder unless given)")
    for option in specs_for(COMPARE, COMMAND):
        parser.add_argument(*option.flags, **argument_keywords(option, COMPARE))
    return parser


class _Parser(argparse.ArgumentParser):
    """argparse, with ``Did you mean --vmap (not --vamp)?`` after an unknown option."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(USAGE, f"{self.prog}: error: {with_option_hint(message, self)}\n")


def _subcommand(name: str) -> Callable[[list[str]], int] | None:
    """The command's own command ``name`` (``watch FILE.py``), imported when asked for."""
    if name == "diff":  # python -m jitmagic diff OLD.json NEW.json
        from .diff_command import main as diff
        return diff
    if name == "watch":
        from .watch.command import main as watch
        return watch
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the command; return the exit status (:data:`EXIT_CODES`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    held_while_importing("jax")  # wherever the file imports it
    if argv and (sub := _subcommand(argv[0])):
        return sub(argv[1:])
    with presses_counted() as presses:
        try:
            return _measured_and_shown(argv, presses)
        except KeyboardInterrupt as exc:  # abandoned: one line, no traceback
            said = str(exc) or (ABANDONED if presses.twice() else NO_RESULT)
            with ctrl_c_ignored():
                print(f"jitmagic: {said}", file=sys.stderr)
            return INTERRUPTED


def _checked_outputs(args: argparse.Namespace) -> str | None:
    """Everything checked before measuring (and with ``--target``, JAX to start its CPU backend
    only unless ``JAX_PLATFORMS``: libtpu would print its warnings on a machine with no TPU); the
    script's absolute path (None: the demo)."""
    if ignored := launcher.check_environment():
        print(f"jitmagic: {ignored}", file=sys.stderr)
    given = {"--save": args.save, "--html": args.html, "--trace": args.trace}
    if args.target and args.processes is not None:
        raise InputError("--target compiles for the TPU in this one process and runs "
                         "nothing, so it cannot take --processes (several processes in "
                         "lockstep): leave it out")
    if args.target and "JAX_PLATFORMS" not in os.environ:
        os.environ["JAX_PLATFORMS"] = "cpu"
    script = None if args.file == "demo" else os.path.abspath(args.file)
    checked_reports(args, script)
    check_endings(given)  # as the watch's (after a device, a folder, one file twice)
    return script


def _measured_and_shown(argv: list[str], presses: Presses) -> int:
    args, script_args = _parsed(argv)
    if args.file == "demo" and args.html is None and not (args.jax or args.bisect):
        args.html = DEMO_HTML
    try:
        if args.jax or args.bisect:  # the cell under each release, each in a child
            return show_releases(args, argv, Entry(__name__, measure_in_child.__name__))
        script = _checked_outputs(args)
        if args.processes is not None and not launcher.is_child() \
                and launcher.check_count(args.processes) > 1:
            source = source_of(script)
            launcher.refuse(args, source)
            if source is not None and script is not None:  # said once, as for one process
                check_shape(source, script)
            return launcher.launch(args.processes, argv)
        result = run_isolated(args, script_args)
        launcher.note_measured()
    except (InputError, UserCodeError, CannotWriteError, LockstepError) as exc:
        print(f"jitmagic: {exc}", file=sys.stderr)  # Lockstep: another process died or hangs
        return CANNOT_WRITE if isinstance(exc, CannotWriteError) else \
            USAGE if isinstance(exc, InputError) else RAISED
    if presses.twice():  # two presses the measurement's handler ran once (mid-compile)
        raise KeyboardInterrupt(ABANDONED)
    status = present(result, args, pressed=presses.last())
    if status != INTERRUPTED and presses.twice():  # likewise while the result was shown
        with ctrl_c_ignored():
            print(f"jitmagic: {ABANDONED_SHOWING}", file=sys.stderr)
        return INTERRUPTED
    return status


def present(result: Comparison | Sweep, args: argparse.Namespace,
            pressed: float | None = None) -> int:
    """Write the reports, then print the text, under :class:`~.saving.Showing`'s stop rule; the
    exit status."""
    if not current().leader:
        return MEASURED
    showing = Showing(check=Checkpoint(abandon_message=ABANDONED_SHOWING, pressed_at=pressed))
    printed = [False]
    try:
        with showing.active():
            written, failures = write_outputs(result, args, showing)  # before any printing
            # between parts Ctrl-C is only noted: the text takes no time
            notes = [stopped_note(showing.stopped)] if showing.stopped else []
            printed[0] = True
            shown, written = _shown(result, args, written)
            show(["\n\n".join([shown, *notes]), *written])  # `| head` still: 0
            for failure in failures:
                print(f"jitmagic: {failure}", file=sys.stderr)
    except KeyboardInterrupt as exc:  # a second Ctrl-C: the text (once), and one line
        with ctrl_c_ignored():  # a third one changes nothing now
            if not printed[0]:
                show([_shown(result, args)[0]])
            print(f"jitmagic: {exc}", file=sys.stderr)
        return INTERRUPTED
    if any(part in REPORTS for part in showing.stopped):
        return INTERRUPTED
    if failures:
        return CANNOT_WRITE
    if _a_variant_raised(result):
        return RAISED
    return PARTIAL if result.stopped_anywhere else MEASURED


def _a_variant_raised(result: Comparison | Sweep) -> bool:
    """Whether a variant's code raised, or its fresh process died, while it was measured
    (the report shows it; the status says so, as for a raise before it)."""
    points = result.points if isinstance(result, Sweep) else (result,)
    return any(not v.ok for c in points for v in c.variants.values())


def _shown(result: Comparison | Sweep, args: argparse.Namespace,
           written: list[str] | None = None) -> tuple[str, list[str]]:
    """The text printed, and the lines of ``written`` not already in it."""
    left, page = list(written or []), wrote("--html", args.html) if args.html else None
    html_path = None
    if page in left:
        html_path = args.html if os.path.relpath(args.html).startswith(os.pardir) \
            else os.path.relpath(args.html)
        if at_a_glance(result, args.verbose):
            left.remove(page)
    return text(result, verbose=args.verbose, width=shutil.get_terminal_size().columns,
                html_path=html_path), left


def entry() -> None:
    """The command as a process: exit with :func:`main`'s status, at once where XLA may still
    compile in a thread, never by a signal."""
    forgiving_stderr()  # a crash in native code: Python's traceback, at least
    try:
        watched = supervised(sys.argv[1:], _fresh_after_crash)  # measured in a child
    except KeyboardInterrupt:  # before the child took Ctrl-C over
        exit_now(INTERRUPTED, STARTING)
    if watched is not None:
        raise SystemExit(watched)
    atexit.register(ignore_ctrl_c)  # registered first, so run last of the exit functions
    safe_output()
    try:
        status = main()
        if status == INTERRUPTED or (status not in ENDED_WELL and with_others()):
            exit_now(status)
        end_on_ctrl_c()
    except KeyboardInterrupt:  # pressed again as main() said why it ended
        exit_now(INTERRUPTED)
    raise SystemExit(status)


def run_isolated(args: argparse.Namespace, script_args: list[str]) -> Comparison | Sweep:
    """:func:`run` under the script's ``sys.argv``; its ``sys.exit`` a ``UserCodeError``."""
    path, argv = list(sys.path), sys.argv
    sys.argv = [args.file, *script_args]
    try:
        return run(args)
    except SystemExit as exc:
        raise UserCodeError(exit_after_measuring(exc.code)) from None
    finally:
        sys.path[:], sys.argv = path, argv


def run(args: argparse.Namespace) -> Comparison | Sweep:
    """Measure the file (or the demo) as the magic measures a cell."""
    start = clocks.wall()
    options = Options.from_namespace(args)
    source, namespace = load_target(args.file)
    filename = None if args.file == "demo" else os.path.abspath(args.file)
    if filename:
        check_compiles(source, filename)
    swept = options.sweep[0] if options.sweep else None
    script_args = sys.argv[1:]  # the script's own: run_isolated set sys.argv
    spawn = None if args.processes else fresh.for_command(
        Entry(__name__, measure_in_child.__name__), args.file, script_args, options)
    prelude = run_prelude(source, filename or "<demo>", namespace, swept)
    # jax not imported by the file's lines: nothing can have started its backend
    started = prelude.backend_started and prelude.imported_by != "jitmagic"
    if prelude.imported_by == "jitmagic":
        prelude.imported("jitmagic")  # the import below
    if launcher.join(started):  # --processes: before the file's arrays
        start = clocks.wall()  # the time the processes took to meet is not measured
    # imports jax, if the file did not
    from ..cell.prepare import measure_source, parse

    cell = parse(source, filename)
    if prelude.ran:
        cell = dataclasses.replace(cell, setup=ast.Module(body=prelude.rest(cell.setup.body),
                                                          type_ignores=[]))
    spawn = None if prelude.backend_started else spawn  # the device is this process's
    with drawing(staged(progress_for(options))) as progress, fresh.in_children(spawn), \
            fresh.device_closed(spawn):
        result = measure_source(cell, namespace, options, progress, start,
                                written=_options_said(options, args, script_args),
                                baseline=args.baseline)
    late = late_settings(prelude, filename) if filename else None
    result = dataclasses.replace(result, file="demo") if args.file == "demo" else result
    return dataclasses.replace(result, warned=(*result.warned, late)) if late else result


def measure_in_child(inputs: dict[str, Any]) -> dict[str, Any]:
    """A child's entry (``--jax``): measure as ``python -m jitmagic *argv`` does, returning the
    report's dict."""
    args, script_args = _parsed(list(inputs["argv"]))
    args.save = args.html = args.jax = args.bisect = args.trace = None
    args.quiet = True
    if args.sweep:
        raise InputError("a child measures one comparison: leave --sweep out")
    with fresh.only(inputs.get("sample", "")):  # one variant's cold sample, or all here
        try:
            return run_isolated(args, script_args).to_dict()
        except RaisedElsewhere as exc:  # the variant's code raised: the parent shows it
            return {"raised": {"function": exc.function, "shown": exc.shown}}


def _fresh_after_crash(argv: list[str]) -> bool:
    """Whether the comparison ``argv`` asks for can take its cold samples in fresh processes
    (as :func:`run` decides: no ``--processes``, nothing of :func:`fresh.in_one_process`),
    as the command measures again after native code crashed it in a variant."""
    args, _ = _parsed(argv)
    return not args.processes and not fresh.in_one_process(args)


def _parsed(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """The command's options, and the script's own arguments (after ``--``)."""
    cut = argv.index("--") if "--" in argv else len(argv)
    return build_parser().parse_args(argv[:cut]), argv[cut + 1:]


def _options_said(options: Options, args: argparse.Namespace, script_args: list[str]) -> str:
    """The options as the report's ``made … with`` line says them (``--processes N`` first,
    the script's own arguments after ``--`` last: they make its program)."""
    said = spell(options, baseline=args.baseline)
    found = launcher.place()
    said = f"--processes {found[1]} {said}".rstrip() if found and found[1] > 1 else said
    return f"{said} -- {shlex.join(script_args)}".lstrip() if script_args else said


#: The parts of :func:`present` that write a report (a Ctrl-C there: exit status 130).
REPORTS = ("--save", "--html", "--trace")



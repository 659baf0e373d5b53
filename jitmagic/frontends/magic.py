"""The ``%jitcompare`` / ``%%jitcompare`` magic: parse → measure → present (only this module knows
IPython's magic machinery)."""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from ..cell import source as cellmod
from ..cell.prepare import measure_source, parse
from ..errors import CannotWriteError, InputError, UserCodeError
from ..interrupts import CtrlCHeld
from ..measure.children import Entry
from ..measure.sampling import clocks
from ..measure.sampling.stops import ABANDON_S, NO_RESULT
from ..model.comparison import Comparison
from ..model.ledger import Ledger
from ..model.progress import Progress
from ..model.reports.releases import Bisection, Releases
from ..model.sweep import Sweep
from ..options import Options, argument_keywords
from ..options.hints import with_option_hint
from ..options.table import COMPARE, MAGIC, specs_for
from ..render.bundle import bundle, stopped_note, text, with_note
from . import command
from .cell_names import with_cell_names
from .saving import (
    ABANDONED_SHOWING,
    Showing,
    checked_reports,
    not_written,
    unquoted,
    write_outputs,
    wrote,
)
from .script.releases import LINE_FORM, of_cell
from .script.releases import present as present_releases
from .stderr_progress import drawing

#: The options that name a file (IPython leaves the quotes on them).
PATHS = ("save", "html", "trace", "baseline")


def options_of(tool: str) -> Callable[[Any], Any]:
    """Decorate ``tool``'s magic with every option it takes, as its ``--help`` lists them."""
    def decorate(func: Any) -> Any:
        for option in reversed(specs_for(tool, MAGIC)):
            func = argument(*option.flags, **argument_keywords(option, tool))(func)
        return magic_arguments()(func)
    return decorate


def _no_call(line: str) -> str:
    """Why the line form found no call to measure in ``line``."""
    last = line.split()[-1] if line.split() else ""
    if last.isidentifier():
        return (f"`{last}` is not a call: the line form measures one call, e.g. "
                f"`%jitcompare {line[: len(line) - len(last)]}{last}(x)`.")
    found = re.search(r"(?:^|\s)([^\s-]\S*\(.*)$", line)
    call = found[1] if found else "None"
    try:
        compile(call, "<jitcompare-line>", "eval")
    except SyntaxError as exc:  # a call that does not parse (``g(x``)
        return (f"syntax error in the call `{call}`: {exc.msg} (the line form measures "
                "one call, e.g. `%jitcompare model(x)`)")
    return ("%jitcompare measures the call written after it, e.g. `%jitcompare model(x)`; to "
            "measure the code of a cell, put `%%jitcompare` (two %) on its first line.")


@magics_class
class JitCompareMagics(Magics):
    """Magics that measure a JAX function flat and with nested jit on its helpers."""

    @options_of(COMPARE)
    @line_cell_magic
    def jitcompare(self, line: str = "", cell: str | None = None
                   ) -> Comparison | Sweep | Releases | Bisection | None:
        """Time trace, lower, XLA compile, first call and steady-state execution of a
        function with and without nested jax.jit on the helpers it calls.

        Cell form: the cell's last statement calls the entry, e.g. `model(x)`.
        Line form: `%jitcompare [options] model(x)` on functions defined earlier.
        """
        start = clocks.wall()
        assert self.shell is not None  # register() gives the magics their shell
        if {"--jax", "--bisect"} & set(line.replace("=", " ").split()):  # a child a release
            return self._releases(line, cell)
        # Ctrl-C held from the measurement's end until the result is shown
        held = CtrlCHeld()
        try:
            held.install()  # as usual until the measurement ends: measure_source holds it
            result, args, progress = self._measured(line, cell, start)
            present(result, args, lambda plot: bundle(result, plot=plot, verbose=args.verbose,
                                                      width=columns()),
                    lambda r: text(r, verbose=args.verbose, width=columns()), held,
                    progress=progress)
        except CellInterrupted:
            raise
        except KeyboardInterrupt as exc:  # before there was a result: said, in one line
            raise CellInterrupted(str(exc) or NO_RESULT) from None
        finally:
            held.release()
        if not args.output:
            return None
        shown_in_this_cell(result)  # so that IPython's display of it does not repeat it
        return result

    def _measured(self, line: str, cell: str | None, start: float,
                  ) -> tuple[Comparison | Sweep, argparse.Namespace, Any]:
        assert self.shell is not None
        if cell is None:
            line, call = cellmod.split_line(line)
            if not call:
                raise UsageError(_no_call(line))
            source = call
        else:
            source = cellmod.as_numbered(cell, self.shell.transform_cell(cell))
        try:
            args = parsed_line(self.jitcompare, line, PATHS)
            options = Options.from_namespace(args)
            checked_reports(args)  # before measuring: the cell may chdir
            notebook = getattr(self.shell, "kernel", None) is not None  # else on stderr
            with drawing(not options.quiet and (NotebookProgress() if notebook else True)
                         ) as progress:
                result = measure_source(parse(source), self.shell.user_ns, options, progress,
                                        start, written=line.strip(), baseline=args.baseline)
        except (InputError, UserCodeError, CannotWriteError) as exc:
            raise UsageError(str(exc)) from None
        except KeyboardInterrupt as exc:  # abandoned: say why, without jitmagic's frames
            raise CellInterrupted(str(exc) or NO_RESULT) from None
        return with_cell_names(result, self.shell), args, progress

    def _releases(self, line: str, cell: str | None) -> Releases | Bisection | None:
        """``--jax``/``--bisect``: the cell under each release, the report printed; the line
        form is refused."""
        if cell is None:
            raise UsageError(LINE_FORM)
        args = parsed_line(self.jitcompare, line, PATHS)
        try:
            found = of_cell(cell, line, args, Entry(command.__name__,
                                                    command.measure_in_child.__name__))
            present_releases(found, args)
        except (InputError, CannotWriteError) as exc:
            raise UsageError(str(exc)) from None
        return found if args.output else None


def parsed_line(magic: Any, line: str, paths: tuple[str, ...]) -> argparse.Namespace:
    """The options of ``line`` for ``magic``; those naming ``paths`` keep no quotes (IPython leaves
    them on)."""
    try:
        args = parse_argstring(magic, line)
    except ValueError as exc:  # e.g. an unclosed quote
        raise UsageError(f"cannot read the options {line!r}: {exc}") from None
    except UsageError as exc:  # an unknown option: what it may have meant
        raise UsageError(with_option_hint(str(exc), magic.parser)) from None
    for name in paths:
        setattr(args, name, unquoted(getattr(args, name)))
    return args


def present(result: Comparison | Sweep | Ledger, args: argparse.Namespace,
            make: Callable[[bool], dict[str, str]], text_of: Callable[[Any], str],
            held: CtrlCHeld | None = None, said: Callable[[str, str], str] = wrote,
            progress: Any = None) -> None:
    """Show ``result`` (``make(plot)``: its bundle, in ``progress``'s display where there is one:
    a saved notebook keeps the result alone), then save it, under :class:`~.saving.Showing`'s
    stop rule: a second Ctrl-C shows at least its text, saves what had not begun, then raises
    one line."""
    showing, shown = Showing.after(held.last if held else None), False
    begun: list[str] = []  # the reports whose writing began
    try:
        with showing.active():
            if held is not None and held.twice(ABANDON_S):  # two since it ended: a second
                raise KeyboardInterrupt(ABANDONED_SHOWING)
            # the charts optional; a Ctrl-C between parts is only noted: this takes no time
            data = make(False) if args.no_plot else showing.part(
                "the charts", lambda: make(True), lambda: make(False), optional=True)
            data = with_note(data, stopped_note(showing.stopped)) if showing.stopped else data
            if not (isinstance(progress, NotebookProgress) and progress.show(data)):
                display(data, raw=True)
            shown = True
            # paths checked before measuring; a late failure keeps the result
            _said(*write_outputs(result, args, showing, begun, said=said))
    except KeyboardInterrupt as exc:  # held again from here (``held``): nothing below is cut
        if not shown:  # abandoned before anything was shown: the text at least
            print(text_of(result))
        if args.save and "--save" not in begun:
            _said(*write_outputs(result, argparse.Namespace(save=args.save, html=None),
                                 said=said))
        elif begun[-1:] == ["--save"]:  # abandoned while it was written
            _said([], [not_written("--save", args.save)])
        if args.html:  # the page takes its charts' time: a second Ctrl-C leaves it out
            _said([], [not_written("--html", args.html)])
        raise CellInterrupted(str(exc) or ABANDONED_SHOWING) from None


def columns() -> int:
    """The columns of the terminal (a kernel has none: ``COLUMNS``, else 80)."""
    return shutil.get_terminal_size().columns


class NotebookProgress:
    """Progress in a notebook: one display, created on the first event, updated in place after,
    then turned into the result (or emptied), so a saved notebook keeps the result and no
    progress."""

    def __init__(self) -> None:
        self.handle: Any = None

    def __call__(self, p: Progress) -> None:
        self.line(p.line())

    def line(self, text: str) -> None:
        """Show ``text``: in the display made at the first call (``%%jitwatch``'s live line)."""
        data = {"text/plain": text}
        if self.handle is None:
            self.handle = display(data, raw=True, display_id=True)
        else:
            self.handle.update(data, raw=True)

    def close(self, finished: bool = True) -> None:
        """Empty the display (until the result takes it): the progress is not kept."""
        if self.handle is not None:
            self.handle.update({"text/plain": ""}, raw=True)

    def show(self, data: dict[str, str]) -> bool:
        if self.handle is None:
            return False
        self.handle.update(data, raw=True)
        return True


class CellInterrupted(KeyboardInterrupt):
    """The magic's ``KeyboardInterrupt``, shown by IPython as one line."""

    def _render_traceback_(self) -> list[str]:
        return [f"KeyboardInterrupt: {self}"]


def _said(written: list[str], failures: list[str]) -> None:
    """Say where each report was written, and on stderr why each other one was not."""
    for line in written:
        print(line)
    for failure in failures:
        print(f"jitmagic: {failure}", file=sys.stderr)


#: The ids of the results shown in the running cell (``-o`` returns them to IPython).
_just_shown: set[int] = set()


def shown_in_this_cell(result: Comparison | Sweep | Ledger) -> None:
    """Note that a magic showed ``result``: its display as the cell value adds nothing."""
    _just_shown.add(id(result))

#: The records the magics return (``%%jitwatch -o`` a ledger).
RESULTS = (Comparison, Sweep, Ledger)


def display_comparison(result: Comparison | Sweep | Ledger) -> None:
    """How IPython displays a result: its bundle, unless the magic showed it in this cell."""
    if id(result) in _just_shown:
        _just_shown.discard(id(result))
        return
    shown = result._repr_mimebundle_() if isinstance(result, Ledger) else \
        bundle(result, width=columns())  # as the magic showed it
    display(shown, raw=True)


def _forget_shown(*_: Any) -> None:
    _just_shown.clear()


def register(ipython: Any) -> None:
    ipython.register_magics(JitCompareMagics)
    for record in RESULTS:
        ipython.display_formatter.ipython_display_formatter.for_type(record, display_comparison)
    ipython.events.register("post_run_cell", _forget_shown)


def unregister(ipython: Any) -> None:
    for kind in ("line", "cell"):
        ipython.magics_manager.magics[kind].pop("jitcompare", None)
    for record in RESULTS:
        ipython.display_formatter.ipython_display_formatter.type_printers.pop(record, None)
    if _forget_shown in ipython.events.callbacks["post_run_cell"]:
        ipython.events.unregister("post_run_cell", _forget_shown)

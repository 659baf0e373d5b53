"""The ``%%jitwatch`` / ``%jitwatch`` magic: run the cell as written, in the user's
namespace, and show every compile it caused, why, and what it cost.

Unlike ``%%jitcompare`` the cell runs once, in place: its definitions and effects stay,
and its last expression is its value (as with ``%%time``; ``-o`` returns the ledger
instead). The cell is compiled under IPython's own cell file name, its lines numbered as the
notebook numbers them (the ``%%jitwatch`` line is line 1), so tracebacks and the ledger's
lines read as the cell's. An error in the cell shows the ledger of what ran
before it, then the error with the cell's own traceback; Ctrl-C shows the ledger so far.
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics
from IPython.core.magic import line_cell_magic
from IPython.core.magic import magics_class
from IPython.core.magic_arguments import argument
from IPython.core.magic_arguments import magic_arguments
from IPython.core.magic_arguments import parse_argstring
from IPython.display import display

from ...cell.source import as_numbered
from ...errors import CannotWriteError
from ...errors import InputError
from ...errors import RecompiledError
from ...model.ledger import Ledger
from ...render.ledger import bundle
from ..magic import CellInterrupted
from ..magic import output_arguments
from ..magic import shown_in_this_cell
from ..output import checked_path
from ..output import distinct
from ..output import unquoted
from .api import check_endings
from .api import check_gate
from .api import gate_of
from .api import named_compile
from .api import watched
from .api import with_cell_names
from .api import write_ledger
from .live import Live

#: What a Ctrl-C in the watched cell says, in its one line.
STOPPED = "the cell was stopped; the ledger above holds what ran before it"


@magics_class
class JitWatchMagics(Magics):
    """``%%jitwatch``: why does it compile again?"""

    @magic_arguments()
    @output_arguments("the ledger instead of the cell's value",
                      html="write the ledger as a self-contained HTML page (opens offline)")
    @argument("--fail-after-warmup", metavar="N", type=int, default=None,
              help="fail the cell when any function compiles more than N times (its "
                   "warm-up): the 'no retrace after step 1' check")
    @argument("--max-compiles", metavar="N", type=int, default=None,
              help="fail the cell when it compiles more than N times in all")
    @argument("--save", metavar="PATH", default=None,
              help="write the ledger as JSON (jitmagic.load reads it back; jitmagic diff "
                   "compares two)")
    @line_cell_magic
    def jitwatch(self, line: str = "", cell: str | None = None) -> Any:
        """Run the cell (or the statement after %jitwatch) as written, and show every
        trace and compile it caused: per jitted function, how often, JAX's reason
        (a weak type, a new shape, a static value, a function made anew, ...), the line
        that made the call, the seconds each cost and what to do about it.
        """
        assert self.shell is not None
        options, code = self._parsed(line, cell)
        raw = cell if cell is not None else code
        filename = self.shell.compile.cache(code, self._cell_number(raw), raw_code=raw)
        try:  # nothing would run: the error alone, no ledger of nothing
            ast.parse(code, filename)
        except SyntaxError as exc:
            raise exc.with_traceback(None) from None
        source = "the cell" if cell is not None else "the statement"
        value: Any = None
        made: list[Ledger] = []
        live = Live(NotebookLine(), filename,
                    lambda c: named_compile(c, self.shell, filename))
        try:
            with watched(options.gate, source, filename, on_again=live) as made:
                value = self._run(code, filename)
        except KeyboardInterrupt:
            if not made:
                raise
            self._show(made[0], options)
            raise CellInterrupted(STOPPED) from None
        except BaseException as exc:
            if not made:  # the watch itself did not start
                raise
            self._show(made[0], options)
            raise _as_the_cell_raised(exc, self.shell)  # noqa: B904 (the user's own, as raised)
        ledger = with_cell_names(made[0], self.shell)  # as shown, as returned by -o
        self._show(ledger, options)
        try:
            check_gate(ledger)
        except RecompiledError as exc:
            raise _one_paragraph(exc) from None
        if not options.output:
            return value
        shown_in_this_cell(ledger)
        return ledger

    def _cell_number(self, raw: str) -> int:
        """The number the notebook shows for the cell running this magic (``In [4]``).

        IPython counts a cell it stores in its history before running it, so while it
        runs ``execution_count`` is already the next cell's (its functions read ``Cell
        In[5]`` for cell 4); the cell just stored is the one running where its text holds
        this magic's. Elsewhere (``run_cell_magic`` called directly, nothing stored) the
        count as it stands."""
        assert self.shell is not None
        count = self.shell.execution_count
        stored = getattr(self.shell.history_manager, "input_hist_raw", None) or []
        if len(stored) == count and count > 1 and raw.strip() in stored[-1]:
            return count - 1
        return count

    def _parsed(self, line: str, cell: str | None) -> tuple[Any, str]:
        """(the options, the code to run) of the magic's ``line`` and ``cell``."""
        assert self.shell is not None
        args_line, statement = line, ""
        if cell is None:
            args_line, statement = _split_statement(line)
            if not statement.strip():
                raise UsageError("%jitwatch runs the statement written after it, e.g. "
                                 "`%jitwatch train(state, data)`; to watch a whole cell, "
                                 "put `%%jitwatch` (two %) on its first line.")
        try:
            args = parse_argstring(self.jitwatch, args_line)
            args.gate = gate_of(args.fail_after_warmup, args.max_compiles)
            args.save, args.html = unquoted(args.save), unquoted(args.html)
            args.save = checked_path(args.save, "--save")
            args.html = checked_path(args.html, "--html")
            distinct({"--save": args.save, "--html": args.html})
            check_endings({"--save": args.save, "--html": args.html})
        except (InputError, CannotWriteError) as exc:
            raise UsageError(str(exc)) from None
        except ValueError as exc:
            raise UsageError(f"cannot read the options {args_line!r}: {exc}") from None
        if cell is None:
            return args, statement + "\n"
        return args, as_numbered(cell, self.shell.transform_cell(cell))

    def _run(self, code: str, filename: str) -> Any:
        """Run ``code`` in the user's namespace as IPython would, its last expression's
        value returned."""
        assert self.shell is not None
        ns = self.shell.user_ns
        tree = ast.parse(code, filename)
        last = tree.body[-1] if tree.body else None
        if isinstance(last, ast.Expr):
            tree.body.pop()
        flags = self.shell.compile.flags
        exec(compile(tree, filename, "exec", flags=flags, dont_inherit=True), ns)
        if not isinstance(last, ast.Expr):
            return None
        expr = ast.Expression(last.value)
        return eval(compile(expr, filename, "eval", flags=flags, dont_inherit=True), ns)

    def _show(self, ledger: Ledger, options: Any) -> None:
        ledger = with_cell_names(ledger, self.shell)
        display(bundle(ledger, plot=not options.no_plot), raw=True)
        written, failed = write_ledger(ledger, {"--save": options.save, "--html": options.html})
        for line in written:
            print(line)
        for line in failed:
            print(f"jitmagic: {line}", file=sys.stderr)


class NotebookLine:
    """The cell's live line (:mod:`.live`): shown at the first recompile, then updated in
    place with each one said, above the ledger the cell shows when it ends."""

    def __init__(self) -> None:
        self.handle: Any = None

    def __call__(self, line: str) -> None:
        data = {"text/plain": line}
        if self.handle is None:
            self.handle = display(data, raw=True, display_id=True)
        else:
            self.handle.update(data, raw=True)


def _split_statement(line: str) -> tuple[str, str]:
    """(the options, the statement) of a line magic: the options are the leading words
    that start with ``-`` and, for those that take one, their value."""
    words = line.split(" ")
    takes = {"--fail-after-warmup", "--max-compiles", "--save", "--html"}
    i = 0
    while i < len(words) and (not words[i] or words[i].startswith("-")):
        i += 2 if words[i] in takes else 1
    return " ".join(words[:i]), " ".join(words[i:])


def _as_the_cell_raised(exc: BaseException, shell: Any) -> BaseException:
    """``exc``, shown by IPython with the cell's own traceback (from its first line, with
    none of the magic's frames): its type and message are the user's own."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    try:
        lines = shell.InteractiveTB.structured_traceback(type(exc), exc, tb)
        exc._render_traceback_ = lambda: lines  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 (an exception that takes no attribute: as it is)
        pass
    return exc


class ShownRecompiledError(RecompiledError):
    """The gate's failure as IPython shows it, below the ledger: its sentences, no
    traceback; named ``RecompiledError`` in a notebook's error output too."""

    def _render_traceback_(self) -> list[str]:
        return [f"RecompiledError: {self.sentences}"]


ShownRecompiledError.__name__ = ShownRecompiledError.__qualname__ = "RecompiledError"


def _one_paragraph(exc: RecompiledError) -> ShownRecompiledError:
    return ShownRecompiledError(exc.sentences)  # escaped already (render.ledger)


def register(ipython: Any) -> None:
    ipython.register_magics(JitWatchMagics)


def unregister(ipython: Any) -> None:
    for kind in ("line", "cell"):
        ipython.magics_manager.magics[kind].pop("jitwatch", None)

"""``%%jitwatch`` / ``%jitwatch``: run the cell once, as written, in the user's namespace
(its last expression is its value; ``-o``: the ledger), numbered as the notebook numbers
it, and show every compile it caused; after an error or Ctrl-C, the ledger so far."""

from __future__ import annotations

import ast
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from ...cell.source import as_numbered
from ...errors import CannotWriteError, InputError, RecompiledError
from ...model.ledger import Ledger
from ...options.table import MAGIC, WATCH, specs_for
from ...render.ledger import bundle, text
from ..magic import (
    CellInterrupted,
    NotebookProgress,
    options_of,
    parsed_line,
    present,
    shown_in_this_cell,
)
from .api import check_gate, checked, named_compile, watched, with_cell_names, wrote
from .live import Live

#: What a Ctrl-C in the watched cell says, in its one line.
STOPPED = "the cell was stopped; the ledger above holds what ran before it"


@magics_class
class JitWatchMagics(Magics):
    """``%%jitwatch``: why does it compile again?"""

    @options_of(WATCH)
    @line_cell_magic
    def jitwatch(self, line: str = "", cell: str | None = None) -> Any:
        """Run the cell (or the statement after %jitwatch) as written, and show every
        trace and compile it caused: per jitted function, how often, JAX's reason
        (a weak type, a new shape, a static value, a function made anew, ...), the line
        that made the call, the seconds each cost and what to do about it."""
        assert self.shell is not None
        options, code = self._parsed(line, cell)
        filename = self._compiled(code, cell if cell is not None else code)
        source = "the cell" if cell is not None else "the statement"
        value: Any = None
        made: list[Ledger] = []
        live = Live(NotebookProgress().line, filename,
                    lambda c: named_compile(c, self.shell, filename))
        try:
            with watched(options.gate, source, filename, on_again=live) as made:
                value = self._run(code, filename)
        except BaseException as exc:
            if not made:  # the watch itself did not start
                raise
            self._show(made[0], options)
            if isinstance(exc, KeyboardInterrupt):
                raise CellInterrupted(STOPPED) from None
            raise _as_the_cell_raised(exc, self.shell)  # noqa: B904 (the user's own, as raised)
        ledger = with_cell_names(made[0], self.shell)  # as shown, as returned by -o
        self._show(ledger, options)
        try:
            check_gate(ledger)
        except RecompiledError as exc:
            raise ShownRecompiledError(exc.sentences) from None  # escaped already
        if not options.output:
            return value
        shown_in_this_cell(ledger)
        return ledger

    def _compiled(self, code: str, raw: str) -> str:
        """The file name ``code`` runs under; its syntax error alone, where it has one."""
        assert self.shell is not None
        running = getattr(self.shell.displayhook, "exec_result", None)  # numbered as shown:
        number = getattr(running, "execution_count", None)  # In [4]
        filename: str = self.shell.compile.cache(
            code, number if isinstance(number, int) else self.shell.execution_count, raw_code=raw)
        try:
            ast.parse(code, filename)
        except SyntaxError as exc:
            raise exc.with_traceback(None) from None
        return filename

    def _parsed(self, line: str, cell: str | None) -> tuple[Any, str]:
        """(the options, the code to run) of the magic's ``line`` and ``cell``."""
        assert self.shell is not None
        args_line, statement = line, ""
        if cell is None:
            words = line.split(" ")  # the options: the leading `-` words and their values
            takes = {flag for spec in specs_for(WATCH, MAGIC) if spec.type is not None
                     for flag in spec.flags}
            i = 0
            while i < len(words) and (not words[i] or words[i].startswith("-")):
                i += 2 if words[i] in takes else 1
            args_line, statement = " ".join(words[:i]), " ".join(words[i:])
            if not statement.strip():
                raise UsageError("%jitwatch runs the statement written after it, e.g. "
                                 "`%jitwatch train(state, data)`; to watch a whole cell, "
                                 "put `%%jitwatch` (two %) on its first line.")
        args = parsed_line(self.jitwatch, args_line, ("save", "html"))
        try:
            args.gate, paths = checked(args.fail_after_warmup, args.max_compiles,
                                       {"--save": args.save, "--html": args.html})
        except (InputError, CannotWriteError) as exc:
            raise UsageError(str(exc)) from None
        args.save, args.html = paths["--save"], paths["--html"]
        if cell is None:
            return args, statement + "\n"
        return args, as_numbered(cell, self.shell.transform_cell(cell))

    def _run(self, code: str, filename: str) -> Any:
        """Run ``code`` as IPython runs a cell; the last expression's value returned."""
        assert self.shell is not None
        shell = self.shell
        tree = shell.transform_ast(shell.compile.ast_parse(code, filename))
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        flags = shell.compile.flags
        with shell.builtin_trap:
            exec(compile(tree, filename, "exec", flags=flags, dont_inherit=True),
                 shell.user_global_ns, shell.user_ns)
            if last is None:
                return None
            expression = ast.Expression(last.value)
            return eval(compile(expression, filename, "eval", flags=flags, dont_inherit=True),
                        shell.user_global_ns, shell.user_ns)

    def _show(self, ledger: Ledger, options: Any) -> None:
        """Show the ledger, then write its reports, as ``%%jitcompare`` shows a result."""
        ledger = with_cell_names(ledger, self.shell)
        present(ledger, options, lambda plot: bundle(ledger, plot, options.verbose),
                lambda r: text(r, options.verbose), said=wrote)


def _as_the_cell_raised(exc: BaseException, shell: Any) -> BaseException:
    """``exc`` as IPython shows it with the cell's own traceback."""
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
    """The gate's failure shown below the ledger without a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"RecompiledError: {self.sentences}"]


ShownRecompiledError.__name__ = ShownRecompiledError.__qualname__ = "RecompiledError"


def register(ipython: Any) -> None:
    ipython.register_magics(JitWatchMagics)


def unregister(ipython: Any) -> None:
    for kind in ("line", "cell"):
        ipython.magics_manager.magics[kind].pop("jitwatch", None)

"""Cell or file source → the variants ready to measure, the one path behind the magic and the
command: :func:`measure_source` (provenance, baseline) → :func:`measure_guarded` (the kernel's
state guarded) → :func:`measure_cell` → :func:`variants_of_cell` (setup, discovery trace). No
IPython here."""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import linecache
import sys
import traceback
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy
import numpy as np

from ..errors import InputError, UserCodeError, exit_while_measured
from ..interrupts import CtrlCHeld
from ..measure.pipeline import Prepared, checkpoint, measure_prepared, variants_of
from ..measure.sampling import clocks
from ..measure.sampling.stops import Checkpoint, Stop
from ..measure.sweep import run_sweep, unchanged_warning
from ..model.comparison import Comparison
from ..model.notes import Note, Noted, Ran
from ..model.progress import Draw
from ..model.sweep import Sweep, unchanged
from ..options import Options
from ..usercode import mine
from . import source as cellmod
from .effects import Watch, effects_undone
from .prelude import user_raised
from .provenance import read_baseline, spell, stamp, with_baseline

#: The warning of a result whose side effects were put back as Ctrl-C came.
HELD = Ran("put_back_held")


def parse(source: str, filename: str | None = None) -> cellmod.ParsedCell:
    """Parse cell text, or a file's; a syntax error becomes an ``InputError``."""
    try:
        return cellmod.parse_cell(source, filename)
    except SyntaxError as exc:
        raise InputError(f"syntax error in the {'cell' if filename is None else 'file'}:\n"
                         + "".join(traceback.format_exception_only(exc))) from None


def variants_of_cell(cell: cellmod.ParsedCell, namespace: dict[str, Any], options: Options,
                     bindings: dict[str, Any] | None, check: Checkpoint | None,
                     ) -> dict[str, Prepared]:
    """Run the setup in a scratch copy of ``namespace``, trace once, build both variants."""
    scratch = {**namespace, **(bindings or {})}
    with uncounted():  # it runs once, as the user expects: its prints are not repeats
        with user_raised(f"the {cell.kind} raised before its final call", cell.kind == "file"):
            exec(compile(cell.setup, cell.filename, "exec"), scratch)
        with user_raised("evaluating the function and arguments of the final call raised "
                         "(nothing was traced yet)", cell.kind == "file"):
            fn, call_args, call_kwargs = cellmod.resolve_call(cell, scratch)
    # an earlier cell's function reads the kernel's namespace: a swept value is set there too
    with check.finding_helpers() if check is not None else contextlib.nullcontext():
        return variants_of(fn, call_args, call_kwargs, name=cellmod.entry_label(cell, fn),
                           nest=options.nest, bindings=bindings, in_axes=options.in_axes)


def measure_cell(cell: cellmod.ParsedCell, namespace: dict[str, Any], options: Options, *,
                 bindings: dict[str, Any] | None = None, start: float | None = None,
                 check: Checkpoint | None = None, watch: Watch | None = None) -> Comparison:
    """Prepare both variants of a parsed source and measure them side by side."""
    start = clocks.wall() if start is None else start
    if watch is not None:  # the cell's code runs from here (a sweep's next value's setup)
        watch.mark(cells=True)
    try:
        with mine(options.mine):
            prepared = variants_of_cell(cell, namespace, options, bindings, check)
            result = measure_prepared(prepared, options, start=start, check=check)
    except SystemExit as exc:  # in a helper, or the entry, while traced or run
        raise UserCodeError(exit_while_measured(exc)) from None
    note = x64_note(prepared["flat"].args, prepared["flat"].kwargs)
    return dataclasses.replace(result, warned=(*result.warned, note)) if note else result


def x64_note(args: tuple, kwargs: dict[str, Any]) -> Ran | None:
    """With x64 on, a note where every floating argument is 32-bit or narrower."""
    if not jax.config.values.get("jax_enable_x64"):
        return None
    floats = [np.dtype(x.dtype) for x in jax.tree_util.tree_leaves((args, kwargs))
              if hasattr(x, "shape") and hasattr(x, "dtype")
              and jax.numpy.issubdtype(x.dtype, jax.numpy.inexact)]
    if not floats or any(d.itemsize >= (16 if d.kind == "c" else 8) for d in floats):
        return None
    return Ran("x64_narrow")


def measure_source(cell: cellmod.ParsedCell, namespace: dict[str, Any], options: Options,
                   progress: Draw | None = None, start: float | None = None, *,
                   written: str | None = None, baseline: str | None = None,
                   ) -> Comparison | Sweep:
    """:func:`measure_guarded`, with provenance and the diff against ``baseline``."""
    old = read_baseline(baseline)
    try:
        result = measure_guarded(cell, namespace, options, progress, start)
    finally:
        if cell.kind == "cell" and cell.filename.startswith("<jitcompare-"):
            linecache.cache.pop(cell.filename, None)
    file = cell.filename if cell.kind == "file" else None
    # a cell's code as written: without the empty lines that number it as the notebook does
    shown = cell.source if file else cell.source.lstrip("\n")
    result = stamp(result, source=shown, file=file,
                   options=spell(options, baseline=baseline) if written is None else written)
    return with_baseline(result, old)


def measure_guarded(cell: cellmod.ParsedCell, namespace: dict[str, Any], options: Options,
                    progress: Draw | None = None, start: float | None = None,
                    ) -> Comparison | Sweep:
    """One comparison or a sweep, with what the cell's code changed put back after (Ctrl-C held
    meanwhile) and said."""
    start = clocks.wall() if start is None else start
    check = checkpoint("", options, start, progress)  # measure names the entry
    watch = Watch()
    check.report.draw = watch.drawing(check.report.draw)  # marks stages even with --quiet
    given = CtrlCHeld.current()
    hold = given or CtrlCHeld()
    # prints counted inside: the effects see sys.stdout as the user set it
    with _released(hold, given is None), \
            effects_undone(namespace, watch, process=cell.kind != "file") as undone, \
            prints_counted() as printed, _measured(hold, watch):
        result = _cell_or_sweep(cell, namespace, options, start, check, watch)
    notes: list[Noted] = [*undone, *watch.left(), *([HELD] if hold.pressed else []),
                          *([Ran("printed", printed.count, traces(result))] if printed.count
                            else []),
                          # the cell's code ran once per value (a line form's: nothing but the call)
                          *([Ran("cell_ran", cell.kind, len(result.values))]
                            if isinstance(result, Sweep) and len(result.values) > 1
                            and cell.setup.body else [])]
    if isinstance(result, Sweep) and unchanged(result) and (  # one program built: the source's
            why := sweep_name_warnings(cell, result.name)):  # reasons replace the general warning
        general = unchanged_warning(result)
        result = dataclasses.replace(result, warned=(*(w for w in result.warned if w != general),
                                                     *why))
    return dataclasses.replace(result, warned=(*result.warned, *notes))


def _cell_or_sweep(cell: cellmod.ParsedCell, namespace: dict[str, Any], options: Options,
                   start: float, check: Checkpoint, watch: Watch) -> Comparison | Sweep:
    """One comparison, or one per swept value; a stop while finding helpers is a Ctrl-C."""
    if options.sweep is None:
        try:
            return measure_cell(cell, namespace, options, start=start, check=check,
                                watch=watch)
        except Stop as stop:  # in the discovery trace: there is nothing to show
            raise KeyboardInterrupt(stop.reason) from None
    name, values = options.sweep
    return run_sweep(name, values, lambda v, ck: measure_cell(
        cell, namespace, options, bindings={name: v}, check=ck, watch=watch), check)


@contextlib.contextmanager
def _measured(held: CtrlCHeld, watch: Watch) -> Iterator[None]:
    """Innermost: as the measurement ends, Ctrl-C held and the last window watched."""
    try:
        yield
    finally:
        held.hold()
        watch.mark(cells=False)


@contextlib.contextmanager
def _released(held: CtrlCHeld, release: bool) -> Iterator[None]:
    """Outermost: ``held``'s handler set first, and put back last where ``release``."""
    held.install()
    try:
        yield
    finally:
        if release:
            held.release()


def traces(result: Comparison | Sweep) -> int:
    """How many times the entry was traced at least: once to find helpers, once per cold run."""
    points = result.points if isinstance(result, Sweep) else (result,)
    return sum(1 + sum(len(v.samples.get("trace_s", ())) for v in p.variants.values())
               for p in points)


def sweep_name_warnings(cell: cellmod.ParsedCell, name: str) -> list[Note]:
    """Why a swept ``name`` may not reach the code: never read, or assigned first."""
    tree = ast.Module(body=[*cell.setup.body, ast.Expr(cell.call)], type_ignores=[])
    # On one line a read comes first: `n = n * 2` reads the swept value, then replaces it.
    uses = sorted(_top_level_uses(tree, name), key=lambda u: (u[0][0], u[1] == "store"))
    if not any(kind == "load" for _, kind in uses) and not any(
            isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
            for n in ast.walk(tree)):
        return [Ran("sweep_name_unread", name)]
    if uses and uses[0][1] == "store":
        return [Ran("sweep_name_assigned", name, uses[0][0][0])]
    return []


def _top_level_uses(tree: ast.Module, name: str) -> list[tuple[tuple[int, int], str]]:
    uses: list[tuple[tuple[int, int], str]] = []
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        where = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            uses += [(where, "store")] if node.name == name else []
            todo += node.decorator_list  # decorators run at top level; bodies do not
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and node.id == name:
            uses.append((where, "load" if isinstance(node.ctx, ast.Load) else "store"))
        if isinstance(node, ast.alias) and (node.asname or node.name) == name:
            uses.append((where, "store"))
        todo += ast.iter_child_nodes(node)
    return uses


# --- the lines the measured code prints, counted while it runs (the setup, which runs once, left
# out), for the note that says why its output repeats ------------------------------------------


class _Counting:
    """A stream that counts the lines written through it (unless paused)."""

    def __init__(self, stream: Any) -> None:
        self._stream, self.lines, self.partial, self.paused = stream, 0, False, 0

    def write(self, text: str) -> int:
        if not self.paused and text:
            self.lines += text.count("\n")
            self.partial = not text.endswith("\n")
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    @property
    def count(self) -> int:
        return self.lines + (1 if self.partial else 0)


@contextlib.contextmanager
def prints_counted() -> Iterator[_Counting]:
    """``sys.stdout`` wrapped to count the lines printed in the block; put back after."""
    stream = sys.stdout
    counting = _Counting(stream)
    if stream is not None:  # None (no console): print writes nothing, there is nothing to count
        sys.stdout = counting
    try:
        yield counting
    finally:
        if sys.stdout is counting:
            sys.stdout = stream


@contextlib.contextmanager
def uncounted() -> Iterator[None]:
    counting = sys.stdout if isinstance(sys.stdout, _Counting) else _Counting(None)
    counting.paused += 1
    try:
        yield
    finally:
        counting.paused -= 1


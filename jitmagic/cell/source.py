"""Cell text → setup code, entry function and call arguments (the user's namespace only read)."""

from __future__ import annotations

import ast
import builtins
import inspect
import itertools
import linecache
import re
import types
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, did_you_mean
from ..measure.variants.entry import check_callable, entry_name
from ..usercode import user_file
from .prelude import ends_in_call, unguarded

USAGE = """\
%%jitcompare [options]
<imports, helpers, data ...>
entry(arguments)          # the last statement calls the function to measure

or, on functions defined earlier:  %jitcompare [options] entry(arguments)"""

FILE_USAGE = """\
python -m jitmagic [options] FILE.py [-- script arguments]
FILE.py: <imports, helpers, data ...>
         entry(arguments)   # the last statement calls the function to measure"""

_counter = itertools.count(1)
_CAPTURE = "__jitmagic_capture__"


class CellError(InputError):
    """The cell does not have the shape ``%%jitcompare`` needs; the message says why."""


@dataclass(frozen=True)
class ParsedCell:
    """A parsed cell (or file): setup code to run, then a call of ``entry``."""

    source: str
    filename: str
    setup: ast.Module
    call: ast.Call
    kind: str = "cell"  # "file" for ``python -m jitmagic FILE.py``: how messages name it

    @property
    def entry(self) -> str:
        """The entry as written: ``model``, ``model.apply``, ``jax.grad(loss)``."""
        return ast.unparse(self.call.func)


def parse_cell(source: str, filename: str | None = None) -> ParsedCell:
    """Parse cell text, or a file's with its ``filename``; ``SyntaxError`` or ``CellError``."""
    kind, usage = ("cell", USAGE) if filename is None else ("file", FILE_USAGE)
    if not any(ln.strip() and not ln.strip().startswith("#") for ln in source.splitlines()):
        raise CellError(f"the {kind} is empty: write code ending in a call of your function."
                        f"\n\n{usage}")
    if filename is None:
        filename = f"<jitcompare-cell-{next(_counter)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        tree = ast.parse(source, filename=filename)
    except ValueError as exc:  # e.g. a null byte: not a SyntaxError, same meaning to the user
        raise CellError(f"the {kind} cannot be parsed as Python: {exc}") from None
    _check_no_top_level_return(tree, kind)
    body = unguarded(tree.body)
    if body is not tree.body and not ends_in_call(body):
        raise CellError(f"the {kind}'s last statement must call the function to measure: "
                        "move the call out of the `if __name__ == \"__main__\":` block "
                        f"(or end that block with it), e.g. `model(x)`.")
    last = body[-1]
    magic = _magic_name(last)
    if magic:
        raise CellError(f"the last line is a magic ({magic}): write the call itself, e.g. "
                        f"`model(x)`, and let %%jitcompare time it.\n\n{usage}")
    if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)):
        raise CellError(
            f"the {kind}'s last statement (line {last.lineno}, {_statement_kind(last)}) "
            f"is not a call: end the {kind} with a call of the function to measure, e.g. "
            f"`model(x)`.\n\n{usage}")
    return ParsedCell(source, filename, ast.Module(body=body[:-1], type_ignores=[]), last.value,
                    kind)


def as_numbered(cell: str, code: str) -> str:
    """``code`` below as many empty lines as the notebook shows above it, so lines are numbered as
    there."""
    blank = cell[:len(cell) - len(cell.lstrip())]
    return "\n" * (1 + blank.count("\n")) + code


def split_line(line: str) -> tuple[str, str]:
    """A line magic's text → (options, the first suffix that parses as a call)."""
    for start in (0, *(m.end() for m in re.finditer(r"\s+", line))):
        rest = line[start:].strip()
        try:
            if rest and isinstance(ast.parse(rest, mode="eval").body, ast.Call):
                return line[:start].strip(), rest
        except SyntaxError:
            continue
    return line.strip(), ""


def resolve_call(cell: ParsedCell, namespace: dict[str, Any]) -> tuple[Any, tuple, dict]:
    """Evaluate the entry and its arguments in ``namespace``: (fn, args, kwargs)."""
    name = cell.entry
    node = cell.call.func
    while isinstance(node, ast.Attribute | ast.Subscript):  # model.layers[0]: model
        node = node.value
    root = node.id if isinstance(node, ast.Name) else None
    if root is not None and root not in namespace and not hasattr(builtins, root):
        hint = did_you_mean(root, namespace)
        raise CellError(f"the entry `{name}` is not defined: "
                        f"{hint[0].upper() + hint[1:] + ' Or d' if hint else 'D'}efine "
                        f"`{root}` in this cell or an earlier one.")
    func = ast.fix_missing_locations(ast.copy_location(ast.Expression(cell.call.func),
                                                       cell.call))
    fn = eval(compile(func, cell.filename, "eval"), namespace)
    check_callable(fn, name)  # before the arguments are evaluated
    capture = ast.Call(func=ast.Name(_CAPTURE, ast.Load()), args=cell.call.args,
                       keywords=cell.call.keywords)
    expr = ast.fix_missing_locations(ast.copy_location(ast.Expression(capture), cell.call))
    namespace[_CAPTURE] = lambda *a, **k: (a, k)
    try:
        args, kwargs = eval(compile(expr, cell.filename, "eval"), namespace)
    finally:
        del namespace[_CAPTURE]
    return fn, args, kwargs


def entry_label(cell: ParsedCell, fn: Any) -> str:
    """How the report names the entry: as written, or ``grad(loss)``, ``model.__call__``."""
    written = cell.entry
    shown = entry_name(fn)
    if "(" in shown and "(" not in written:
        return shown
    user_call = None if isinstance(fn, types.FunctionType) else \
        inspect.getattr_static(type(fn), "__call__", None)
    if isinstance(cell.call.func, ast.Name) and isinstance(user_call, types.FunctionType) \
            and user_file(user_call.__code__.co_filename):  # not eqx.filter_jit's, nnx.jit's
        return f"{written}.__call__"
    return written


def _magic_name(stmt: ast.stmt) -> str | None:
    """``%time`` for a statement IPython made of ``%time model(x)``, else None."""
    call = stmt.value if isinstance(stmt, ast.Expr | ast.Assign) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr in ("run_line_magic", "run_cell_magic") and call.args
            and isinstance(call.args[0], ast.Constant)):
        return None
    prefix = "%" if call.func.attr == "run_line_magic" else "%%"
    return f"{prefix}{call.args[0].value!s}"


def _check_no_top_level_return(tree: ast.Module, kind: str = "cell") -> None:
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            raise CellError(f"line {node.lineno}: a {kind} cannot `return` at top level: "
                            "end it with the call to measure, e.g. `model(x)`.")
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
                          | ast.ClassDef):
            todo += ast.iter_child_nodes(node)


def _statement_kind(node: ast.stmt) -> str:
    names = {"Assign": "an assignment", "AugAssign": "an assignment", "AnnAssign":
             "an assignment", "For": "a for loop", "While": "a while loop", "If": "an if",
             "FunctionDef": "a function definition", "ClassDef": "a class definition",
             "Import": "an import", "ImportFrom": "an import", "With": "a with block",
             "Expr": "an expression", "Return": "a return", "Pass": "a pass"}
    return names.get(type(node).__name__, f"a {type(node).__name__.lower()} statement")

"""The ``%jitcompare`` line the ledger suggests for a function that compiled again."""

from __future__ import annotations

import ast
import copy
import linecache

from ...model.ledger.rows import FunctionRow


def jitcompare_line(row: FunctionRow, source_file: str | None) -> str | None:
    """The ``%jitcompare`` line that measures the function as the user called it, or None."""
    if not row.call_text or row.eager or not source_file:
        return None
    try:
        tree = ast.parse(row.call_text.strip().rstrip(":"), mode="exec")
    except SyntaxError:
        return None
    name = row.function.rsplit(".", 1)[-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node.func) == name:
            call = _first_pass(node, _loops_around(source_file, row.call_site))
            return f"%jitcompare {ast.unparse(call)}" if call is not None else None
    return None


def _called(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _loops_around(source_file: str, site: str | None) -> dict[str, ast.expr | None] | None:
    """The names the loops around ``site`` bind, each with its first value; None if no source."""
    file, _, line = (site or "").rpartition(":")
    source = "".join(linecache.getlines(source_file)) if file == source_file else ""
    if not source:
        return None
    try:
        tree, at = ast.parse(source), int(line)
    except (SyntaxError, ValueError):
        return None
    bound: dict[str, ast.expr | None] = {}
    for loop in ast.walk(tree):
        if isinstance(loop, ast.For | ast.AsyncFor) and \
                loop.lineno < at <= (loop.end_lineno or loop.lineno):
            first = _range_start(loop.iter) if isinstance(loop.target, ast.Name) else None
            for target in ast.walk(loop.target):
                if isinstance(target, ast.Name):
                    bound[target.id] = first
    return bound


def _range_start(iterable: ast.expr) -> ast.expr | None:
    """``range(a, b)``'s first value (``a``; ``0`` for ``range(b)``); None for any other."""
    if isinstance(iterable, ast.Call) and _called(iterable.func) == "range" and \
            isinstance(iterable.func, ast.Name) and 1 <= len(iterable.args) <= 3:
        return iterable.args[0] if len(iterable.args) > 1 else ast.Constant(0)
    return None


def _first_pass(call: ast.Call, loops: dict[str, ast.expr | None] | None) -> ast.Call | None:
    """``call`` with each loop variable put as its first value; None where one is not known."""
    if loops is None:
        return None
    read = {n.id for n in ast.walk(call) if isinstance(n, ast.Name)}
    if any(loops.get(n, ...) is None for n in read if n in loops):
        return None

    class _Put(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            value = loops.get(node.id) if loops is not None else None
            return copy.deepcopy(value) if value is not None else node

    put: ast.Call = _Put().visit(copy.deepcopy(call))
    return put

"""The Python loops in the user's source (``for``, ``while``, comprehensions), read with
``linecache`` (notebook cells too), never run: where ``--lines`` looks for an unrolled
loop when no line hook counted hits (Python 3.11)."""


from __future__ import annotations

import ast
import linecache
from collections.abc import Iterable

from ...model.lines import FunctionSpan
from ...model.lines import LoopSpan

_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp,
          ast.GeneratorExp)


def loops_of(spans: Iterable[FunctionSpan]) -> tuple[LoopSpan, ...]:
    """The loops of each file that lie inside one of the functions ``spans``."""
    by_file: dict[str, list[FunctionSpan]] = {}
    for span in spans:
        by_file.setdefault(span.file, []).append(span)
    out: list[LoopSpan] = []
    for file, held in by_file.items():
        for first, last in _file_loops(file):
            if any(s.first_line <= first and last <= s.last_line for s in held):
                out.append(LoopSpan(file, first, last))
    return tuple(dict.fromkeys(out))


def _file_loops(file: str) -> list[tuple[int, int]]:
    source = "".join(linecache.getlines(file))
    if not source:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):  # a cell with IPython syntax, a null byte
        return []
    return [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree)
            if isinstance(n, _LOOPS)]

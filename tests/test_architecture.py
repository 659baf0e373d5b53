"""The shape of the code itself: checks on jitmagic's source, no measuring."""

from __future__ import annotations

import ast
from pathlib import Path

import jitmagic

PACKAGE = Path(jitmagic.__file__).parent


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """Named parameters, positional and keyword, without ``self``/``cls``, *args, **kwargs."""
    a = fn.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def test_no_function_takes_more_than_seven_parameters():
    """Options travel as one object: no function spells out nine of them."""
    too_many = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names = _parameters(node)
                if len(names) > 7:
                    where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
                    too_many.append(f"{where} {node.name}({', '.join(names)})")
    assert not too_many, "functions with more than 7 parameters:\n" + "\n".join(too_many)

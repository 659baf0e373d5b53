"""The loops of the user's code: Python loops in the source (``for``, ``while``,
comprehensions, read with ``linecache``, never run: where ``--lines`` looks for an
unrolled loop when no line hook counted hits), and the JAX loops of a traced program
(``scan``, ``fori_loop``, ``while_loop``) by the user line that calls each, with a scan's
``unroll`` (in its parameters, not the jaxpr's size: XLA gets that many copies of the
body per step), so the causes can name it and never take a JAX loop for a Python one."""

from __future__ import annotations

import ast
import dataclasses
import linecache
from collections.abc import Iterable
from typing import Any

from ...model.lines import FunctionSpan
from ...model.lines import LoopCall
from ...model.lines import LoopSpan
from ..sampling.structure import count_equations
from .counts import UserCode
from .counts import owned_jaxprs

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


#: The loop primitives, and the jaxpr parameters that hold their bodies.
_BODIES = {"scan": ("jaxpr",), "while": ("cond_jaxpr", "body_jaxpr")}


def loop_calls(jaxpr: Any, user: UserCode) -> tuple[LoopCall, ...]:
    """The JAX loops of ``jaxpr``, one per user line and form (a library's loop at the
    user's call), with how many calls the line made and all their distinct bodies'
    equations (one call's body alone read 42% where the bodies built 85%)."""
    order, owner = owned_jaxprs(jaxpr, user)
    calls: dict[LoopCall, int] = {}
    bodies: dict[LoopCall, dict[int, int]] = {}
    for j in order:
        for eqn in j.eqns:
            names = _BODIES.get(eqn.primitive.name)
            if names is None:
                continue
            stack = user.stack(eqn.source_info.traceback)
            key = stack[0] if stack else owner[id(j)]
            if key is None:
                continue
            form = _loop_call(eqn, key)
            calls[form] = calls.get(form, 0) + 1
            bodies.setdefault(form, {}).update(
                (id(eqn.params[n]), count_equations(eqn.params[n])) for n in names
                if n in eqn.params)
    return tuple(dataclasses.replace(form, body_eqns=sum(bodies[form].values()),
                                     calls=n) for form, n in calls.items())


def _loop_call(eqn: Any, key: tuple[str, int]) -> LoopCall:
    """One loop equation as a :class:`LoopCall` (its bodies not yet counted), named as
    the user wrote it."""
    file, line = key
    scan = eqn.primitive.name == "scan"
    written = "fori_loop" if "fori_loop" in linecache.getline(file, line) else \
        "scan" if scan else "while_loop"
    unroll = eqn.params.get("unroll", 1) if scan else 1
    length = eqn.params.get("length") if scan else None
    return LoopCall(file, line, written, None if length is None else int(length),
                    max(1, int(unroll)), 0)

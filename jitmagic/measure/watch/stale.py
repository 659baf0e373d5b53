"""The Python values a jitted function read when it was traced, for the values jit hides:
``jax.jit`` bakes a module's global or a closed-over Python value into the program it
traces, and reuses that program after the value changed (a loop that halves a global
learning rate keeps training with the first one), which neither JAX nor a recompile says.

At each trace of a user's jitted function, :func:`reads` notes the plain Python values
(numbers, strings, ``None``, tuples of them) its code reads as globals or from its closure
(and the user's functions it calls by a global name read, two calls deep), each with a
way to read it again; when the run ends, :func:`stale` compares each function's last
trace with the values then. Nothing is read on a call JAX served from its cache.
"""

from __future__ import annotations

import dis
import functools
import types
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ...model.ledger import MAX_TEXT
from ...model.ledger import Stale
from ...usercode import user_file

#: Values jit bakes in as they are: a change of one is a stale program.
PLAIN = (int, float, complex, bool, str, type(None))
#: How deep into the user's functions a trace's reads are followed.
DEPTH = 2


@dataclass(frozen=True, slots=True)
class Read:
    """One value a traced function read: its name, ``global`` or ``closure``, where it is
    read (``file:line``), its value then, and how to read it now."""

    name: str
    scope: str
    line: str | None
    value: Any
    now: Callable[[], Any]


def reads(fun: Any, depth: int = DEPTH) -> tuple[Read, ...]:
    """The plain values ``fun`` (unwrapped) reads from its globals and closure now."""
    py = _unwrapped(fun)
    if not isinstance(py, types.FunctionType) or not user_file(py.__code__.co_filename):
        return ()
    return tuple({(r.scope, r.name): r for r in _reads(py, depth, set())}.values())


def _reads(py: types.FunctionType, depth: int, seen: set[int]) -> Iterator[Read]:
    if id(py) in seen:
        return
    seen.add(id(py))
    code, names = py.__code__, py.__globals__
    cells = dict(zip(code.co_freevars, py.__closure__ or (), strict=False))
    for name, scope, line in _loads(code):
        if scope == "global" and name in names:
            value, now = names[name], functools.partial(names.__getitem__, name)
        elif scope == "closure" and name in cells:
            try:
                value = cells[name].cell_contents
            except ValueError:  # an empty cell: not yet bound
                continue
            now = functools.partial(getattr, cells[name], "cell_contents")
        else:
            continue
        if _plain(value):
            yield Read(name, scope, line, value, now)
        elif depth > 0 and isinstance(value, types.FunctionType) \
                and user_file(value.__code__.co_filename):
            yield from _reads(value, depth - 1, seen)


def _loads(code: types.CodeType) -> Iterator[tuple[str, str, str | None]]:
    """(name, scope, ``file:line``) of each global and closure value ``code`` reads,
    with its nested functions' (a ``lambda`` inside the step)."""
    for instr in dis.get_instructions(code):
        scope = {"LOAD_GLOBAL": "global", "LOAD_DEREF": "closure"}.get(instr.opname)
        if scope is not None and isinstance(instr.argval, str):
            line = instr.positions.lineno if instr.positions else None
            yield instr.argval, scope, f"{code.co_filename}:{line}" if line else None
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from ((n, "global", line) for n, s, line in _loads(const) if s == "global")


def _plain(value: Any) -> bool:
    if type(value) in PLAIN:
        return True
    return type(value) is tuple and len(value) <= 64 and all(type(v) in PLAIN for v in value)


def _unwrapped(fun: Any) -> Any:
    for _ in range(32):
        inner = fun.func if isinstance(fun, functools.partial) else \
            getattr(fun, "__wrapped__", None) or getattr(fun, "__func__", None)
        if inner is None or inner is fun:
            break
        fun = inner
    return fun


def stale(function: str, defined_at: str | None, traced: tuple[Read, ...]) -> list[Stale]:
    """Each value of ``traced`` (a function's last trace) that differs now."""
    found = []
    for r in traced:
        try:
            now = r.now()
        except (KeyError, ValueError):  # deleted since: nothing to compare
            continue
        if _differs(r.value, now):
            found.append(Stale(function, r.name, r.scope, _shown(r.value), _shown(now),
                               r.line, defined_at))
    return found


def _differs(before: Any, now: Any) -> bool:
    if before is now:  # a NaN is the same object, not a changed value
        return False
    try:
        return type(before) is not type(now) or bool(before != now)
    except Exception:  # noqa: BLE001 (an __eq__ that raises: it changed, to something else)
        return True


def _shown(value: Any) -> str:
    try:
        return repr(value)[:MAX_TEXT]
    except Exception:  # noqa: BLE001 (a __repr__ that raises)
        return f"<a {type(value).__name__} that could not be shown>"

"""Stale programs: jit bakes a closed-over Python value into its program and reuses it after the
value changed; :func:`reads` notes those values at each trace, :func:`stale` compares them."""

from __future__ import annotations

import dis
import functools
import types
import weakref
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ...model.ledger import Stale
from ...model.ledger.compiles import MAX_TEXT
from ...usercode import user_file
from ..discovery.found import innermost
from .channel import same, shown

#: Values jit bakes in as they are: a change of one is a stale program.
PLAIN = (int, float, complex, bool, str, type(None))
#: How deep into the user's functions a trace's reads are followed.
DEPTH = 2


@dataclass(frozen=True, slots=True)
class Read:
    """One value a traced function read, how to read it now, and the helper reading it."""

    name: str
    scope: str
    line: str | None
    value: Any
    now: Callable[[], Any]
    helper: str | None = None


@dataclass(frozen=True, slots=True)
class Traced:
    """One trace's reads, with its function's name, place, weak reference and inputs."""

    function: str
    defined_at: str | None
    ref: Callable[[], Any]
    reads: tuple[Read, ...]
    inputs: str | None = None


def alive(fun: Any) -> Callable[[], Any]:
    """A weak reference to ``fun`` (a bound method's); one that takes none, never dead."""
    try:
        return weakref.WeakMethod(fun) if isinstance(fun, types.MethodType) \
            else weakref.ref(fun)
    except TypeError:
        return lambda: True


def traced(fun: Any, args: tuple[Any, ...] = ()) -> types.FunctionType | None:
    """The user's function a jit of ``fun`` with ``args`` traces (None: neither)."""
    level: list[Any] = [fun]
    for depth in range(5):
        for value in level:
            py = innermost(value)
            if isinstance(py, types.FunctionType) and user_file(py.__code__.co_filename):
                return py
        level = list(args) if depth == 0 else \
            [v for c in level if type(c) in (tuple, list) for v in c][:256]
    return None


def place(fun: Any) -> str | None:
    """``file:line`` where the function ``fun`` wraps begins; None where it has no code."""
    code = getattr(innermost(fun), "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else None


def reads(py: types.FunctionType, depth: int = DEPTH) -> tuple[Read, ...]:
    """The plain values the user's function ``py`` reads from its globals and closure now."""
    return tuple({(r.scope, r.name): r for r in _reads(py, depth, set())}.values())


def inputs(args: tuple[Any, ...], most: int = 4) -> str | None:
    """The array types in a jit's arguments (``f32[8,4], f32[4]``): which compiled version."""
    import jax

    leaves = [x for x in jax.tree_util.tree_leaves(args) if hasattr(x, "shape")]
    try:
        said = [jax.typeof(x).str_short(short_dtypes=True) for x in leaves[:most]]
    except Exception:  # noqa: BLE001 (a leaf JAX cannot type: no version to name)
        return None
    return ", ".join(said) + (", …" if len(leaves) > most else "") if said else None


def _reads(py: types.FunctionType, depth: int, seen: set[int],
           helper: str | None = None) -> Iterator[Read]:
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
        if type(value) in PLAIN or type(value) is tuple and len(value) <= 64 \
                and all(type(v) in PLAIN for v in value):
            yield Read(name, scope, line, value, now, helper)
        elif depth > 0 and isinstance(value, types.FunctionType) \
                and user_file(value.__code__.co_filename):
            yield from _reads(value, depth - 1, seen, value.__qualname__)


def _loads(code: types.CodeType) -> Iterator[tuple[str, str, str | None]]:
    """(name, scope, ``file:line``) of each global and closure value ``code`` reads."""
    for instr in dis.get_instructions(code):
        scope = {"LOAD_GLOBAL": "global", "LOAD_DEREF": "closure"}.get(instr.opname)
        if scope is not None and isinstance(instr.argval, str):
            line = instr.positions.lineno if instr.positions else None
            yield instr.argval, scope, f"{code.co_filename}:{line}" if line else None
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from ((n, "global", line) for n, s, line in _loads(const) if s == "global")


def stale(traces: list[Traced]) -> Iterator[Stale]:
    """Each value a trace read that differs now, once, in order."""
    later: dict[tuple[str, str | None], set[int]] = {}  # the objects traced after each
    superseded = []
    for t in reversed(traces):
        objects = later.setdefault((t.function, t.defined_at), set())
        superseded.append(bool(objects - {id(t.ref)}))
        objects.add(id(t.ref))
    versions = Counter(id(t.ref) for t in traces)
    said = set()
    for t, made_anew in zip(traces, reversed(superseded), strict=True):
        if made_anew and t.ref() is None:
            continue
        for r in t.reads:
            try:
                now = r.now()
            except (KeyError, ValueError):  # deleted since: nothing to compare
                continue
            if not same(r.value, now):
                v = Stale(t.function, r.name, r.scope, *_shown(r.value, now), r.line,
                          t.defined_at, r.helper,
                          t.inputs if versions[id(t.ref)] > 1 else None)
                if v not in said:
                    said.add(v)
                    yield v


def _shown(before: Any, now: Any) -> tuple[str, str]:
    """Both values' reprs, each at most :data:`MAX_TEXT` long, from near their first difference."""
    a, b = (shown(v) for v in (before, now))
    first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                 min(len(a), len(b)))
    lo = max(0, first - MAX_TEXT // 2) if first >= MAX_TEXT - 100 else 0
    a, b = (("…" if lo else "") + v[lo:lo + MAX_TEXT - 1] for v in (a, b))
    return a, b

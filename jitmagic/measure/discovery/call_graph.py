"""Which user function called which, read from a traced program's equations' frames, counted
by call site; a jaxpr JAX inlines leaves its outermost user function (a *root*) uncalled."""

from __future__ import annotations

import functools
import os
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..sampling.structure import distinct_jaxprs, sub_jaxprs, traceback_codes
from .found import held_values, user_frames


@dataclass
class Calls:
    """One user function as the program shows it called: from where, and by whom."""

    call_sites: int = 0  # not its Python calls
    callers: dict[types.CodeType, None] = field(default_factory=dict)  # in order of first call


@dataclass
class CallGraph:
    """Every user function seen in the program, in order of first call (outer first)."""

    functions: dict[types.CodeType, Calls] = field(default_factory=dict)
    #: The top-level equations' roots: the entry, and functions whose caller was lost.
    roots: dict[types.CodeType, None] = field(default_factory=dict)

    def adopt(self, entry: types.CodeType) -> None:
        """Make ``entry`` the caller of every other top-level root without one."""
        for code in self.roots:
            calls = self.functions[code]
            if code is not entry and not calls.callers:
                calls.callers[entry] = None
                calls.call_sites = max(calls.call_sites, 1)


def read_calls(jaxpr: Any, is_user: Callable[[types.CodeType], bool],
               stop: types.CodeType | None = None) -> CallGraph:
    """The user calls in ``jaxpr`` and its sub-jaxprs; frames from ``stop`` out are not its."""
    reader = _Reader(is_user, stop)
    reader.graph.roots = reader.visit(getattr(jaxpr, "jaxpr", jaxpr), ())
    return reader.graph


#: A user frame: its code and source position (line, column), as a call site names it.
Site = tuple[types.CodeType, Any]


class _Reader:
    def __init__(self, is_user: Callable[[types.CodeType], bool], stop: types.CodeType | None):
        self.is_user, self.stop = is_user, stop
        self.graph = CallGraph()
        #: Distinct jaxpr → its roots, once read.
        self.roots: dict[int, dict[types.CodeType, None]] = {}
        self.chains: dict[Any, tuple[tuple[Site, ...], bool]] = {}
        self.sites: set[tuple[types.CodeType, tuple[Site, ...]]] = set()

    def visit(self, jaxpr: Any, context: tuple[Site, ...]) -> dict[types.CodeType, None]:
        """Read ``jaxpr``, whose function was called under the user frames ``context``."""
        roots: dict[types.CodeType, None] = {}
        self.roots[id(jaxpr)] = roots
        known: set[Any] = set()  # tracebacks read
        for eqn in jaxpr.eqns:
            tb = eqn.source_info.traceback
            if tb not in known:
                known.add(tb)
                self._read(tb, context, roots)
            subs = list(sub_jaxprs(eqn))
            if subs:
                chain, complete = self._chain(tb)
                inner = chain if complete else \
                    chain[:len(chain) - _overlap(chain, context)] + context
                for sub in subs:
                    self._enter(sub, inner, roots)
        return roots

    def _enter(self, sub: Any, context: tuple[Site, ...],
               roots: dict[types.CodeType, None]) -> None:
        """A sub-jaxpr held by an equation with the user frames ``context``."""
        seen = self.roots.get(id(sub))
        inner = self.visit(sub, context) if seen is None else seen
        if not context:  # no user frame holds it here: its callers are further out
            roots.update(inner)
        elif seen is not None:  # a cached trace, called again from here
            for code in inner:
                self._call(code, context)

    def _read(self, tb: Any, context: tuple[Site, ...],
              roots: dict[types.CodeType, None]) -> None:
        """Note the calls on a traceback, outer first."""
        chain, complete = self._chain(tb)
        if not complete:  # frames the holder's own are the holder's, not called by it
            chain = chain[:len(chain) - _overlap(chain, context)]
        full = chain if complete else chain + context
        for i in range(len(chain) - 1, -1, -1):
            self._call(chain[i][0], full[i + 1:])
        if chain and not complete:
            roots.setdefault(chain[-1][0])

    def _call(self, code: types.CodeType, site: tuple[Site, ...]) -> None:
        """``code`` called under ``site`` (its caller first)."""
        calls = self.graph.functions.setdefault(code, Calls())
        if site:  # no site: the entry, or a function whose frames lost their caller
            calls.callers.setdefault(site[0][0])
            if (code, site) not in self.sites:
                self.sites.add((code, site))
                calls.call_sites += 1

    def _chain(self, tb: Any) -> tuple[tuple[Site, ...], bool]:
        """The user frames on a traceback, innermost first, and whether it reached ``stop``."""
        known = self.chains.get(tb)
        if known is None:
            frames, complete = user_frames(tb, self.is_user, self.stop)
            known = self.chains[tb] = (tuple((c, _position(c, o)) for c, o in frames), complete)
        return known


def _overlap(chain: tuple[Site, ...], context: tuple[Site, ...]) -> int:
    """How many outer frames of ``chain`` are the innermost of ``context``."""
    for k in range(min(len(chain), len(context)), 0, -1):
        if chain[-k:] == context[:k]:
            return k
    return 0


#: Primitives whose body is a kernel the primitive runs itself (no ``jax.jit`` can take it).
KERNEL_PRIMITIVES = frozenset({"pallas_call"})


def kernel_bodies(jaxpr: Any, is_user: Callable[[types.CodeType], bool]
                  ) -> frozenset[types.CodeType]:
    """The user functions whose every equation is inside a kernel body (Pallas)."""
    if not any(eqn.primitive.name in KERNEL_PRIMITIVES
               for current in distinct_jaxprs(jaxpr) for eqn in current.eqns):
        return frozenset()
    inside: set[types.CodeType] = set()
    outside: set[types.CodeType] = set()
    seen: set[tuple[int, bool]] = set()
    todo: list[tuple[Any, bool]] = [(jaxpr, False)]
    while todo:
        current, in_kernel = todo.pop()
        if (id(current), in_kernel) in seen:
            continue
        seen.add((id(current), in_kernel))
        for eqn in current.eqns:
            codes = traceback_codes(eqn.source_info.traceback)
            (inside if in_kernel else outside).update(c for c in codes if is_user(c))
            kernel = in_kernel or eqn.primitive.name in KERNEL_PRIMITIVES
            todo += [(sub, kernel) for sub in sub_jaxprs(eqn)]
    return frozenset(inside - outside)


@dataclass
class Held:
    """A user function a library primitive holds and runs itself (lineax's ``matvec``)."""

    caller: types.CodeType | None  # the innermost user function on the holding equations
    equations: int
    primitive: str


#: The primitives whose parameters are JAX's own (bodies and rules, not user functions).
_JAX_OWN = frozenset({"jit", "custom_jvp_call", "custom_vjp_call", "scan", "while",
                      "cond", "checkpoint", "remat", "closed_call", "core_call"})
#: How deep into a parameter the search looks, and how many values it reads at most.
_HELD_DEPTH, _HELD_VALUES = 4, 2000


def held_functions(jaxpr: Any, is_user: Callable[[types.CodeType], bool]
                   ) -> dict[types.CodeType, Held]:
    """The user functions library primitives in the program hold, by code."""
    out: dict[types.CodeType, Held] = {}
    seen: set[int] = set()
    todo: list[tuple[Any, types.CodeType | None]] = [(jaxpr, None)]
    while todo:
        current, outer = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for eqn in current.eqns:
            subs = list(sub_jaxprs(eqn))
            held_here = [] if eqn.primitive.name in _JAX_OWN else \
                _functions_in(eqn.params.values(), is_user)
            if not (subs or held_here):
                continue  # most equations: no traceback read
            caller = _caller(eqn, is_user) or outer  # inside a jit: the frames stop there
            todo += [(sub, caller) for sub in subs]
            for fn in held_here:  # the first holder's caller and primitive kept
                out.setdefault(fn.__code__, Held(caller, 0, _primitive(eqn))).equations += 1
    return out


def _functions_in(values: Any, is_user: Callable[[types.CodeType], bool]
                  ) -> list[types.FunctionType]:
    """The user functions among ``values``, their containers and attributes, bounded."""
    found: dict[types.CodeType, types.FunctionType] = {}
    todo: list[tuple[Any, int]] = [(v, 0) for v in values]
    seen: set[int] = set()
    while todo and len(seen) < _HELD_VALUES:
        value, depth = todo.pop()
        if id(value) in seen or depth > _HELD_DEPTH or hasattr(value, "eqns") \
                or isinstance(value, type | types.ModuleType | str | bytes | int | float):
            continue
        seen.add(id(value))
        if isinstance(value, types.FunctionType):
            if is_user(value.__code__):
                found.setdefault(value.__code__, value)
            continue
        todo += [(v, depth + 1) for v in held_values(value)]
    return list(found.values())


def _caller(eqn: Any, is_user: Callable[[types.CodeType], bool]) -> types.CodeType | None:
    return next((c for c in traceback_codes(eqn.source_info.traceback) if is_user(c)), None)


def _primitive(eqn: Any) -> str:
    """``lineax's `linear_solve```: the primitive and the innermost library (not a toolkit)."""
    codes = traceback_codes(eqn.source_info.traceback)
    packages = [p for c in codes if (p := _package(c.co_filename)) is not None]
    own = [p for p in packages if p not in _TOOLKITS] or packages
    package = own[0] if own else type(eqn.primitive).__module__.split(".")[0]
    return f"{package}'s `{eqn.primitive.name}`"


#: Libraries that other libraries make their primitives with.
_TOOLKITS = frozenset({"equinox"})


def _package(filename: str) -> str | None:
    """The installed package a file belongs to (None: JAX's own, or not installed)."""
    _, found, rest = filename.rpartition("-packages" + os.sep)
    name = rest.split(os.sep)[0] if found else ""
    return name if name and name not in ("jax", "jaxlib") else None


def _position(code: types.CodeType, offset: int) -> Any:
    """The source position (line, column) of the instruction at ``offset``."""
    positions = _positions(code)
    return positions[offset // 2] if 0 <= offset // 2 < len(positions) else offset


@functools.lru_cache(maxsize=4096)
def _positions(code: types.CodeType) -> tuple:
    return tuple(code.co_positions())

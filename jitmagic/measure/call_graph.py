"""Which user function called which, read from a traced program's equations.

Every jaxpr equation keeps the Python frames it was traced under
(``source_info.traceback``: code objects and instruction offsets, innermost
first). A function that built an equation is on that list, and so is every
function that called it, so the user frames of one equation are a chain of
calls. A sub-jaxpr (a loop or cond body, a ``jax.checkpoint``, a custom rule,
a nested jit) was traced on its own: its equations' frames stop at the
function traced, and the equation holding it says who called that function.
Each distinct sub-jaxpr (one trace; JAX hands back the same object for a
cached one) is read once, after the equation holding it, as the trace built
them.

Calls are told apart by call site (the user frames above a function, with
their offsets) in each distinct jaxpr, and within one site by the function's
own offset starting over: in a function without a backward jump, the offset
only grows during one call, so a smaller one is the next call.
"""

from __future__ import annotations

import dis
import functools
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .structure import sub_jaxprs

Frame = tuple[types.CodeType, int]


@dataclass
class Calls:
    """One user function as the program shows it called: how often, and by whom."""

    calls: int = 0
    #: The user functions that call it, in order of first call (empty: only the entry
    #: and functions that library code calls from outside the user's code).
    callers: dict[types.CodeType, None] = field(default_factory=dict)


@dataclass
class CallGraph:
    """Every user function seen in the program, in order of first call (outer first)."""

    functions: dict[types.CodeType, Calls] = field(default_factory=dict)
    #: The outermost user function of the first equation (the entry, as a rule).
    entry: types.CodeType | None = None


def read_calls(jaxpr: Any, is_user: Callable[[types.CodeType], bool],
               stop: types.CodeType | None = None) -> CallGraph:
    """The user calls in ``jaxpr`` and its sub-jaxprs; frames from ``stop`` out (the
    caller of the trace, where JAX keeps them) are not the program's."""
    reader = _Reader(is_user, stop)
    reader.visit(getattr(jaxpr, "jaxpr", jaxpr), ())
    return reader.graph


class _Reader:
    def __init__(self, is_user: Callable[[types.CodeType], bool], stop: types.CodeType | None):
        self.is_user, self.stop = is_user, stop
        self.graph = CallGraph()
        #: Distinct jaxpr → the user functions its equations' frames start at.
        self.roots: dict[int, dict[types.CodeType, None]] = {}
        self.chains: dict[Any, tuple[tuple[Frame, ...], bool]] = {}
        #: A slot is one function at one call site in one jaxpr: its code, and the
        #: offset its latest equation there was built at.
        self.slots: dict[tuple, int] = {}
        self.slot_codes: list[types.CodeType] = []
        self.last: list[int] = []

    def visit(self, jaxpr: Any, context: tuple[Frame, ...]) -> dict[types.CodeType, None]:
        """Read ``jaxpr``, whose function was called under the user frames ``context``."""
        roots: dict[types.CodeType, None] = {}
        self.roots[id(jaxpr)] = roots
        edges: dict[Any, list[tuple[int, int, bool]]] = {}  # traceback → slots it counts
        last = self.last
        for eqn in jaxpr.eqns:
            tb = eqn.source_info.traceback
            counted = edges.get(tb)
            if counted is None:
                counted = edges[tb] = self._edges(tb, context, roots, id(jaxpr))
            for slot, offset, restarts in counted:
                if restarts and offset < last[slot]:
                    self._function(self.slot_codes[slot]).calls += 1
                last[slot] = offset
            subs = list(sub_jaxprs(eqn))
            if subs:
                chain, complete = self._chain(tb)
                inner = chain if complete else chain + context
                for sub in subs:
                    self._enter(sub, inner, roots)
        return roots

    def _enter(self, sub: Any, context: tuple[Frame, ...],
               roots: dict[types.CodeType, None]) -> None:
        """A sub-jaxpr held by an equation with the user frames ``context``."""
        seen = self.roots.get(id(sub))
        inner_roots = self.visit(sub, context) if seen is None else seen
        if not context:  # no user frame holds it here: its callers are further out
            roots.update(inner_roots)
        elif seen is not None:  # a cached trace, called again: a caller, not a call
            for code in inner_roots:
                self._function(code).callers.setdefault(context[0][0])

    def _edges(self, tb: Any, context: tuple[Frame, ...], roots: dict[types.CodeType, None],
               jaxpr_id: int) -> list[tuple[int, int, bool]]:
        """Record the functions on a traceback seen first; the call slots it counts."""
        chain, complete = self._chain(tb)
        full = chain if complete else chain + context
        if chain and not complete:
            roots.setdefault(chain[-1][0])
        if self.graph.entry is None and full:
            self.graph.entry = full[-1][0]
        counted = []
        for i in range(len(chain) - 1, -1, -1):  # outer first: the order of the calls
            code, offset = chain[i]
            calls = self._function(code)
            if i + 1 < len(full):
                calls.callers.setdefault(full[i + 1][0])
            key = (code, full[i + 1:], jaxpr_id)
            slot = self.slots.get(key)
            if slot is None:
                slot = self.slots[key] = len(self.slot_codes)
                self.slot_codes.append(code)
                self.last.append(-1)
                calls.calls += 1
            counted.append((slot, offset, not _loops(code)))
        return counted

    def _function(self, code: types.CodeType) -> Calls:
        calls = self.graph.functions.get(code)
        if calls is None:
            calls = self.graph.functions[code] = Calls()
        return calls

    def _chain(self, tb: Any) -> tuple[tuple[Frame, ...], bool]:
        """The user frames on a traceback, innermost first, and whether it reached ``stop``
        (then it holds its callers' frames itself)."""
        known = self.chains.get(tb)
        if known is None:
            frames, complete = [], False
            codes, offsets = tb.raw_frames() if tb is not None else ([], [])
            for code, offset in zip(codes, offsets, strict=True):
                if code is self.stop:
                    complete = True
                    break
                if self.is_user(code):
                    frames.append((code, offset))
            known = self.chains[tb] = (tuple(frames), complete)
        return known


@functools.lru_cache(maxsize=4096)
def _loops(code: types.CodeType) -> bool:
    """Whether ``code`` jumps backward (a loop): then its offset can fall within a call."""
    return any("BACKWARD" in ins.opname for ins in dis.get_instructions(code))

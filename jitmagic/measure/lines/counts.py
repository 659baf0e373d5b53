"""Which frames are the user's, and jaxpr equations counted per user source line
(own and inclusive, each distinct sub-jaxpr once), with the constants each line's
equations read: the counts ``--lines`` shows."""

from __future__ import annotations

import gc
import types
from collections import Counter
from typing import Any
from typing import NamedTuple

from ..._compat import frame_line
from ...model.lines import FunctionSpan
from ...usercode import sourceless
from ...usercode import user_file
from ...usercode import users_namespace
from ..sampling.structure import constants_of
from ..sampling.structure import constants_read
from ..sampling.structure import sub_jaxprs

Key = tuple[str, int]


class UserCode:
    """Which frames are the user's, and the source line each one points at (cached)."""

    def __init__(self, entry_code: types.CodeType | None,
                 entry_namespace: dict[str, Any] | None = None):
        self.entry_code = entry_code
        self.entry_namespace = entry_namespace  # where the entry has no file of its own
        self.codes: dict[types.CodeType, bool] = {}
        self._frames: dict[tuple[types.CodeType, int], Key | None] = {}
        self._stacks: dict[Any, tuple[tuple[Key, ...], types.CodeType | None]] = {}

    def is_user(self, code: types.CodeType, namespace: dict[str, Any] | None = None) -> bool:
        """Whether ``code`` is the user's, decided once per code object.

        Code without a source file (``<string>``: ``exec``, NamedTuple and dataclass
        methods) is the user's where its globals (``namespace``, where the frame is at
        hand, else those of a function holding the code) are
        (:func:`~jitmagic.usercode.users_namespace`, as discovery decides).
        """
        known = self.codes.get(code)
        if known is None:
            name = code.co_filename
            known = user_file(name)
            if not known and sourceless(name):
                namespace = _globals_of(code) if namespace is None else namespace
                known = code is self.entry_code or (
                    namespace is not None and users_namespace(namespace, self.entry_namespace))
            self.codes[code] = known
        return known

    def stack(self, traceback: Any) -> tuple[Key, ...]:
        """The user lines on a traceback, innermost first, cut at the entry's frame."""
        return self._read(traceback)[0]

    def cut_at(self, traceback: Any) -> types.CodeType | None:
        """The outermost user function on a traceback that JAX cut short of the entry
        (``jax.checkpoint`` traces its function under a traceback of its own); None for
        one that reaches the entry, or holds no user frame."""
        return self._read(traceback)[1]

    def _read(self, traceback: Any) -> tuple[tuple[Key, ...], types.CodeType | None]:
        """(:meth:`stack`, :meth:`cut_at`) of a traceback, from one walk of its frames
        (cached: equations share tracebacks)."""
        if traceback is None:
            return (), None
        cached = self._stacks.get(traceback)
        if cached is None:
            cached = self._stacks[traceback] = self._walk(*traceback.raw_frames())
        return cached

    def _walk(self, codes: list, lastis: list) -> tuple[tuple[Key, ...], types.CodeType | None]:
        keys: list[Key] = []
        outermost = None
        for code, lasti in zip(codes, lastis, strict=True):
            if self.is_user(code):
                key = self._frames.get((code, lasti))
                if key is None:
                    line = frame_line(code, lasti)
                    key = self._frames[(code, lasti)] = (code.co_filename, line)
                keys.append(key)
                outermost = code
            if code is self.entry_code:
                return tuple(keys), None
        return tuple(keys), outermost

    def spans(self, calls: Counter | None = None) -> tuple[FunctionSpan, ...]:
        """The user functions seen, with their line ranges and fresh calls (None
        without ``calls``: no hook counted them)."""
        out = []
        for code, user in self.codes.items():
            if user:
                last = max((ln for _, _, ln in code.co_lines() if ln), default=code.co_firstlineno)
                out.append(FunctionSpan(code.co_qualname, code.co_filename, code.co_firstlineno,
                                        last, None if calls is None else calls[code]))
        return tuple(out)


def _globals_of(code: types.CodeType) -> dict[str, Any] | None:
    """The globals of a function whose code is ``code`` (only asked for code without a
    source file, seen on a traceback rather than in a running frame)."""
    for holder in gc.get_referrers(code):
        if isinstance(holder, types.FunctionType) and holder.__code__ is code:
            return holder.__globals__
    return None


class LineCounts(NamedTuple):
    """:func:`count_equations`' counts per user line: equations owned, equations
    inclusive, and the constants read (inclusive: by the line's equations or by those
    of what it calls), each as ``{id: bytes}`` so that one read twice counts once; and
    every constant the program reads, a user line's or not."""

    own: Counter
    inclusive: Counter
    constants: dict[Key, dict[int, int]]
    every_constant: dict[int, int]
    #: the constants each line's own equations read (not its callees')
    own_constants: dict[Key, dict[int, int]]
    #: of ``inclusive``, the equations inside a JAX loop's body (a scan's, a while
    #: loop's): in the program once however often a Python loop around it runs
    in_loops: Counter


def count_equations(jaxpr: Any, user: UserCode) -> LineCounts:
    """Equations (own, inclusive) and constants per user line (:class:`LineCounts`),
    each distinct sub-jaxpr once; ``jaxpr`` closed, for its constants to be counted.

    A sub-jaxpr's *context* is the user lines of every equation that calls it
    (and their own context): inside a nested jit, equations carry only the
    helper's frames, so its callers' lines are added for the inclusive count.
    An equation with no user frame of its own (a ``fori_loop``'s counter, a
    library's internals) is owned by the user line that called the library:
    that of the equation holding its jaxpr, so the own counts add up to
    every equation.
    """
    values = constants_of(jaxpr)
    order, callers, owner = _sub_jaxprs(jaxpr.jaxpr if hasattr(jaxpr, "consts") else jaxpr,
                                        user)
    context = _contexts(order, callers)
    callers_of = _callers_of_cut_functions(order, user, context)
    counts = LineCounts(own=Counter(), inclusive=Counter(), constants={}, every_constant={},
                        own_constants={}, in_loops=Counter())
    looped = _loop_bodies(order, user, context)
    for j in order:
        for eqn in j.eqns:
            line, lines = _lines_of(eqn, user, owner[id(j)], context[id(j)], callers_of)
            if line is not None:
                counts.own[line] += 1
            counts.inclusive.update(lines)
            if id(j) in looped:
                counts.in_loops.update(lines & looped[id(j)])
            _count_constants(counts, constants_read(eqn, values), line, lines)
    return counts


def _contexts(order: list[Any], callers: dict[int, list[tuple[frozenset[Key], int]]],
              ) -> dict[int, frozenset[Key]]:
    """Each jaxpr's context (:func:`_context`), by id: the user lines of every equation
    that calls it, however indirectly."""
    context: dict[int, frozenset[Key]] = {}
    for j in order:
        _context(id(j), callers, context)
    return context


def _lines_of(eqn: Any, user: UserCode, owner: Key | None, context: frozenset[Key],
              callers_of: dict[types.CodeType, frozenset[Key]]) -> tuple[Key | None, set[Key]]:
    """The user line that owns ``eqn`` (its innermost user frame, else ``owner``: that of
    its jaxpr), and the lines it counts for inclusively: those on its traceback, its
    jaxpr's ``context``, the callers of a function whose traceback JAX cut short, and
    the owner."""
    stack = user.stack(eqn.source_info.traceback)
    line = stack[0] if stack else owner
    cut = user.cut_at(eqn.source_info.traceback)
    outer = callers_of.get(cut, frozenset()) if cut is not None else frozenset()
    lines: set[Key] = set(stack) | context | outer
    lines |= {line} if line is not None else set()
    return line, lines


def _count_constants(counts: LineCounts, read: dict[int, int], line: Key | None,
                     lines: set[Key]) -> None:
    """Add the constants one equation reads (``read``, ``{id: bytes}``) to the program's,
    to the inclusive ones of each of ``lines`` and to the own ones of its owner ``line``:
    keyed by id, so that a constant read twice counts once."""
    counts.every_constant.update(read)
    for key in lines if read else ():
        counts.constants.setdefault(key, {}).update(read)
    if read and line is not None:
        counts.own_constants.setdefault(line, {}).update(read)


#: The loop primitives, whose bodies are in the program once however often they run.
LOOPS = ("scan", "while")


def _loop_bodies(order: list[Any], user: UserCode, context: dict[int, frozenset[Key]]
                 ) -> dict[int, frozenset[Key]]:
    """For each jaxpr of ``order`` (parents first) that lies inside a JAX loop's body (a
    loop equation's sub-jaxprs and everything under them), the user lines outside that
    loop: the loop equation's own lines and those that call it. A body's equations are
    in the program once for them, however often a Python loop among them runs; for the
    lines inside the body (a Python loop in a scan's step) they are not."""
    outside: dict[int, frozenset[Key]] = {}
    for j in order:
        for eqn in j.eqns:
            above = outside.get(id(j))
            if above is None and eqn.primitive.name not in LOOPS:
                continue
            lines = frozenset(user.stack(eqn.source_info.traceback)) | context[id(j)]
            lines = (above or frozenset()) | (lines if eqn.primitive.name in LOOPS else
                                              frozenset())
            for sub in sub_jaxprs(eqn):
                outside[id(sub)] = outside.get(id(sub), frozenset()) | lines
    return outside


def _sub_jaxprs(jaxpr: Any, user: UserCode) -> tuple[
        list[Any], dict[int, list[tuple[frozenset[Key], int]]], dict[int, Key | None]]:
    """Every distinct jaxpr under ``jaxpr`` (itself first), once each: (them in the order
    found, the (user lines, calling jaxpr's id) of each equation that calls each, the
    user line that owns each: that of the equation holding it, or its holder's owner)."""
    callers: dict[int, list[tuple[frozenset[Key], int]]] = {id(jaxpr): []}
    owner: dict[int, Key | None] = {id(jaxpr): None}
    order = [jaxpr]
    for j in order:
        for eqn in j.eqns:
            stack = user.stack(eqn.source_info.traceback)
            for sub in sub_jaxprs(eqn):
                if id(sub) not in callers:
                    callers[id(sub)] = []
                    owner[id(sub)] = stack[0] if stack else owner[id(j)]
                    order.append(sub)
                callers[id(sub)].append((frozenset(stack), id(j)))
    return order, callers, owner


def _callers_of_cut_functions(order: list[Any], user: UserCode,
                              context: dict[int, frozenset[Key]]
                              ) -> dict[types.CodeType, frozenset[Key]]:
    """For a function whose equations' tracebacks JAX cut short (a checkpointed block
    traces under a traceback of its own), the user lines that called it: the context of
    the sub-jaxprs holding such equations (the ``remat`` that calls it). Equations of
    it outside any such sub-jaxpr (the forward pass's copy) count for those lines too,
    so that a caller's inclusive count holds its callee's."""
    out: dict[types.CodeType, frozenset[Key]] = {}
    for j in order:
        if context[id(j)]:
            for eqn in j.eqns:
                cut = user.cut_at(eqn.source_info.traceback)
                if cut is not None:
                    out[cut] = out.get(cut, frozenset()) | context[id(j)]
    return out


def _context(jid: int, callers: dict[int, list[tuple[frozenset[Key], int]]],
             memo: dict[int, frozenset[Key]]) -> frozenset[Key]:
    """The user lines of every equation that (transitively) calls jaxpr ``jid``."""
    if jid not in memo:
        memo[jid] = frozenset().union(*(here | _context(parent, callers, memo)
                                        for here, parent in callers[jid]))
    return memo[jid]


def owned_jaxprs(jaxpr: Any, user: UserCode) -> tuple[list[Any], dict[int, Key | None]]:
    """Every distinct jaxpr under ``jaxpr`` (itself first), once each, and the user line
    that owns each (that of the equation holding it, or its holder's owner)."""
    order, _, owner = _sub_jaxprs(getattr(jaxpr, "jaxpr", jaxpr), user)
    return order, owner

"""What ``--lines`` counts per user source line: jaxpr equations with the constants they read,
StableHLO ops, and Python's loops (read) and JAX's (with a scan's ``unroll``)."""

from __future__ import annotations

import ast
import dataclasses
import linecache
import re
import types
from collections import Counter
from collections.abc import Iterable
from typing import Any, NamedTuple

from ..._compat import frame_line
from ...model.lines import FunctionSpan, LoopCall, LoopSpan
from ...usercode import sourceless, user_file, users_namespace
from ..discovery.found import functions_of, user_frames
from ..sampling import structure

Key = tuple[str, int]


class UserCode:
    """Which frames are the user's, and the source line each one points at (cached)."""

    def __init__(self, entry_code: types.CodeType | None,
                 entry_namespace: dict[str, Any] | None = None):
        self.entry_code = entry_code
        self.entry_namespace = entry_namespace  # where the entry has no file of its own
        self.codes: dict[types.CodeType, bool] = {}
        self._frames: dict[tuple[types.CodeType, int], Key] = {}
        self._stacks: dict[Any, tuple[tuple[Key, ...], types.CodeType | None]] = {}

    def is_user(self, code: types.CodeType, namespace: dict[str, Any] | None = None) -> bool:
        """Whether ``code`` is the user's, decided once per code object, as discovery decides."""
        known = self.codes.get(code)
        if known is None:
            name = code.co_filename
            known = user_file(name)
            if not known and sourceless(name):
                namespace = next((f.__globals__ for f in functions_of(code)), None) \
                    if namespace is None else namespace
                known = code is self.entry_code or (
                    namespace is not None and users_namespace(namespace, self.entry_namespace))
            self.codes[code] = known
        return known

    def stack(self, traceback: Any) -> tuple[Key, ...]:
        """The user lines on a traceback, innermost first, cut at the entry's frame."""
        return self._read(traceback)[0]

    def cut_at(self, traceback: Any) -> types.CodeType | None:
        """The outermost user function on a traceback JAX cut short of the entry (else None)."""
        return self._read(traceback)[1]

    def _read(self, traceback: Any) -> tuple[tuple[Key, ...], types.CodeType | None]:
        if traceback not in self._stacks:
            frames, complete = user_frames(traceback, self.is_user, self.entry_code)
            keys = tuple(self._frames.get(f) or self._frames.setdefault(
                f, (f[0].co_filename, frame_line(*f))) for f in frames)
            self._stacks[traceback] = keys, None if complete or not frames else frames[-1][0]
        return self._stacks[traceback]

    def spans(self, calls: Counter | None = None) -> tuple[FunctionSpan, ...]:
        """The user functions seen, with their line ranges and fresh calls."""
        return tuple(
            FunctionSpan(code.co_qualname, code.co_filename, code.co_firstlineno,
                         max((ln for _, _, ln in code.co_lines() if ln),
                             default=code.co_firstlineno),
                         None if calls is None else calls[code])
            for code, user in self.codes.items() if user)


class LineCounts(NamedTuple):
    """:func:`count_equations`' counts per user line; constants as ``{id: bytes}``."""

    own: Counter
    inclusive: Counter
    constants: dict[Key, dict[int, int]]
    every_constant: dict[int, int]
    #: the constants each line's own equations read (not its callees')
    own_constants: dict[Key, dict[int, int]]
    #: of ``inclusive``, the equations inside a JAX loop's body
    in_loops: Counter


def count_equations(jaxpr: Any, user: UserCode) -> LineCounts:
    """Equations (own, inclusive) and constants per user line, each distinct sub-jaxpr once."""
    values = structure.constants_of(jaxpr)
    order, callers, owner = _sub_jaxprs(jaxpr.jaxpr if hasattr(jaxpr, "consts") else jaxpr,
                                        user)
    context: dict[int, frozenset[Key]] = {}
    for j in order:
        _context(id(j), callers, context)
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
            read = structure.constants_read(eqn, values)
            counts.every_constant.update(read)
            for key in lines if read else ():
                counts.constants.setdefault(key, {}).update(read)
            if read and line is not None:
                counts.own_constants.setdefault(line, {}).update(read)
    return counts


def _lines_of(eqn: Any, user: UserCode, owner: Key | None, context: frozenset[Key],
              callers_of: dict[types.CodeType | None, frozenset[Key]],
              ) -> tuple[Key | None, set[Key]]:
    """The user line owning ``eqn`` (else ``owner``), and the lines it counts for inclusively."""
    stack = user.stack(eqn.source_info.traceback)
    line = stack[0] if stack else owner
    cut = user.cut_at(eqn.source_info.traceback)
    lines: set[Key] = set(stack) | context | callers_of.get(cut, frozenset())
    return line, lines | ({line} if line is not None else set())


#: The loop primitives, and the jaxpr parameters that hold their bodies.
_BODIES = {"scan": ("jaxpr",), "while": ("cond_jaxpr", "body_jaxpr")}


def _loop_bodies(order: list[Any], user: UserCode, context: dict[int, frozenset[Key]]
                 ) -> dict[int, frozenset[Key]]:
    """For each jaxpr in a JAX loop's body, the user lines outside that loop."""
    outside: dict[int, frozenset[Key]] = {}
    for j in order:
        for eqn in j.eqns:
            above = outside.get(id(j))
            loop = eqn.primitive.name in _BODIES
            if above is None and not loop:
                continue
            lines = frozenset(user.stack(eqn.source_info.traceback)) | context[id(j)]
            lines = (above or frozenset()) | (lines if loop else frozenset())
            for sub in structure.sub_jaxprs(eqn):
                outside[id(sub)] = outside.get(id(sub), frozenset()) | lines
    return outside


def _sub_jaxprs(jaxpr: Any, user: UserCode) -> tuple[
        list[Any], dict[int, list[tuple[frozenset[Key], int]]], dict[int, Key | None]]:
    """Every distinct jaxpr under ``jaxpr``, itself first, with their callers' lines and owners."""
    callers: dict[int, list[tuple[frozenset[Key], int]]] = {id(jaxpr): []}
    owner: dict[int, Key | None] = {id(jaxpr): None}
    order = [jaxpr]
    for j in order:
        for eqn in j.eqns:
            stack = user.stack(eqn.source_info.traceback)
            for sub in structure.sub_jaxprs(eqn):
                if id(sub) not in callers:
                    callers[id(sub)] = []
                    owner[id(sub)] = stack[0] if stack else owner[id(j)]
                    order.append(sub)
                callers[id(sub)].append((frozenset(stack), id(j)))
    return order, callers, owner


def _callers_of_cut_functions(order: list[Any], user: UserCode,
                              context: dict[int, frozenset[Key]]
                              ) -> dict[types.CodeType | None, frozenset[Key]]:
    """The user lines calling each function whose tracebacks JAX cut short (checkpointed)."""
    out: dict[types.CodeType | None, frozenset[Key]] = {}
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


_LOC_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$")
_OP_LOC = re.compile(r" loc\((.*)\)\s*$")
_FILE_LOC = re.compile(r'^"((?:[^"\\]|\\.)*)":(\d+)')
_NOT_OPS = ("func.func", "module", "return ", "stablehlo.return", "func.return")


def count_hlo_ops(text: str, user: UserCode) -> Counter:
    """StableHLO ops per user line, from ``as_text(debug_info=True)`` locations."""
    aliases = {m[1]: m[2] for m in map(_LOC_DEF.match, text.splitlines()) if m}
    ranges: dict[str, list[tuple[int, int]]] = {}
    for span in user.spans():
        ranges.setdefault(span.file, []).append((span.first_line, span.last_line))
    resolved: dict[str, Key | None] = {}
    ops: Counter = Counter()
    for raw in text.splitlines():
        m = _OP_LOC.search(raw)
        stripped = raw.lstrip()
        if not m or stripped.startswith(_NOT_OPS) or raw.startswith("#"):
            continue
        if stripped.startswith("}") and len(raw) - len(stripped) <= 2:
            continue  # the end of a function or the module
        loc = m.group(1)
        if loc not in resolved:
            resolved[loc] = next(((f, n) for f, n in _frames(loc, aliases)
                                  if any(a <= n <= b for a, b in ranges.get(f, ()))), None)
        if resolved[loc] is not None:
            ops[resolved[loc]] += 1
    return ops


def _frames(loc: str, aliases: dict[str, str], depth: int = 0) -> list[Key]:
    """The (file, line) frames of an MLIR location, innermost first."""
    loc = loc.strip()
    if depth > 200 or loc == "unknown":
        return []
    if loc.startswith("#loc"):
        return _frames(aliases.get(loc, "unknown"), aliases, depth + 1)
    if loc.startswith("callsite("):
        callee, caller = _split_callsite(loc[len("callsite("):-1])
        return _frames(callee, aliases, depth + 1) + _frames(caller, aliases, depth + 1)
    m = _FILE_LOC.match(loc)
    if m:
        name = m.group(1)
        if "\\" in name:  # MLIR escapes quotes and backslashes in file names
            name = name.replace('\\"', '"').replace("\\\\", "\\")
        return [(name, int(m.group(2)))]
    if loc.startswith('"') and loc.endswith(")"):  # a named location: "name"(child)
        return _frames(loc[loc.index('"(', 1) + 2:-1], aliases, depth + 1)
    return []


def _split_callsite(body: str) -> tuple[str, str]:
    """``A at B`` of a ``callsite(A at B)``, splitting at the top-level ``at``."""
    level, quoted = 0, False
    for i, ch in enumerate(body):
        if ch == '"' and (i == 0 or body[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and ch == "(":
            level += 1
        elif not quoted and ch == ")":
            level -= 1
        elif not quoted and level == 0 and body.startswith(" at ", i):
            return body[:i], body[i + 4:]
    return body, "unknown"


_PYTHON_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp,
                 ast.GeneratorExp)


def loops_of(spans: Iterable[FunctionSpan]) -> tuple[LoopSpan, ...]:
    """The Python loops of each file that lie inside one of the functions ``spans``."""
    by_file: dict[str, list[FunctionSpan]] = {}
    for span in spans:
        by_file.setdefault(span.file, []).append(span)
    out: list[LoopSpan] = []
    for file, held in by_file.items():
        try:
            tree = ast.parse("".join(linecache.getlines(file)))
        except (SyntaxError, ValueError):  # a cell with IPython syntax, a null byte
            continue
        for first, last in ((n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree)
                            if isinstance(n, _PYTHON_LOOPS)):
            if any(s.first_line <= first and last <= s.last_line for s in held):
                out.append(LoopSpan(file, first, last))
    return tuple(dict.fromkeys(out))


def loop_calls(jaxpr: Any, user: UserCode) -> tuple[LoopCall, ...]:
    """The JAX loops of ``jaxpr``, one per user line and form, with their calls and equations."""
    order, _, owner = _sub_jaxprs(getattr(jaxpr, "jaxpr", jaxpr), user)
    calls: dict[LoopCall, int] = {}
    bodies: dict[LoopCall, dict[int, int]] = {}
    for j in order:
        for eqn in j.eqns:
            names = _BODIES.get(eqn.primitive.name)
            stack = user.stack(eqn.source_info.traceback) if names else ()
            key = stack[0] if stack else owner[id(j)]
            if names is None or key is None:
                continue
            form = _loop_call(eqn, key)
            calls[form] = calls.get(form, 0) + 1
            bodies.setdefault(form, {}).update(
                (id(eqn.params[n]), structure.count_equations(eqn.params[n])) for n in names
                if n in eqn.params)
    return tuple(dataclasses.replace(form, body_eqns=sum(bodies[form].values()),
                                     calls=n) for form, n in calls.items())


def _loop_call(eqn: Any, key: Key) -> LoopCall:
    """One loop equation as a :class:`LoopCall`, named as the user wrote it."""
    file, line = key
    scan = eqn.primitive.name == "scan"
    written = "fori_loop" if "fori_loop" in linecache.getline(file, line) else \
        "scan" if scan else "while_loop"
    length = eqn.params.get("length") if scan else None
    return LoopCall(file, line, written, None if length is None else int(length),
                    max(1, int(eqn.params.get("unroll", 1) if scan else 1)), 0)

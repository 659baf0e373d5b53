"""Count, per source line of the user's code, what one cold trace and lowering built.

For each variant (flat: ``jax.jit(f)`` with helpers inline; nested: each helper
under its own jit) after ``jax.clear_caches()``:

* every jaxpr equation (recursively through sub-jaxprs, each distinct sub-jaxpr
  once) goes to its innermost *user* frame (``eqns_own``) and to every user
  frame on its stack (``eqns_inclusive``); equations inside a nested jit carry
  only the helper's frames, so the frames of the jit equations that call them
  are added;
* every StableHLO op goes to the innermost user frame of its ``loc(...)``;
* a second, separate trace under a ``sys.settrace`` line hook counts how often
  each line ran and the Python time spent on it (the hook slows tracing, so it
  never touches the counted trace).

A frame is the user's when its code is not JAX's, the standard library's, an
installed package's (site-packages) or jitmagic's, and it runs inside the
entry: library equations go to the user line that called the library.
"""

from __future__ import annotations

import dataclasses
import inspect
import linecache
import re
import sys
import time
import types
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import jax
from jax._src import source_info_util

from ..errors import InputError, UserCodeError, user_traceback
from ..model.comparison import VARIANTS, Comparison
from ..model.lines import SOURCE_UNAVAILABLE, FunctionSpan, LineRow, Lines, LineTable
from ..usercode import sourceless, user_file
from .conditions import paused_gc
from .discovery import code_of
from .entry import plan_entry
from .plan import Plan
from .runner import Prepared
from .structure import sub_jaxprs
from .variants import build_variant

Key = tuple[str, int]


def lines(fn: Callable, /, *args: Any, **kwargs: Any) -> Lines:
    """Which lines of ``fn`` and its helpers build the program, flat and nested.

    One cold trace and lowering per variant count equations and StableHLO ops
    per line; one more trace under a line hook counts hits and Python time.
    """
    plan = plan_entry(fn, args, kwargs)
    tables = {}
    for v in VARIANTS:
        variant = build_variant(v, plan)
        tables[v] = line_table(variant.entry, plan.args, plan.kwargs, v, variant.jit_options)
    return Lines(plan.name, helper_names(tables, plan))


def add_lines(result: Comparison, prepared: dict[str, Prepared]) -> Comparison:
    """``result`` carrying the per-line table of its prepared variants (``--lines``)
    (saved with the report)."""
    tables = {name: line_table(p.variant.entry, p.args, p.kwargs, name, p.variant.jit_options)
              for name, p in prepared.items()}
    plan = next(iter(prepared.values())).variant.plan
    return dataclasses.replace(result, lines=Lines(result.entry, helper_names(tables, plan)))


def helper_names(tables: dict[str, LineTable], plan: Plan | None) -> dict[str, LineTable]:
    """Each table with its functions named as ``--nest`` takes them (the plan's helper
    names), so that a hint's ``--nest`` name is one the option accepts."""
    if plan is None:
        return tables
    names = {(h.code.co_filename, h.code.co_firstlineno): n
             for n, h in plan.helpers.items() if h.code is not None}
    return {v: dataclasses.replace(t, functions=tuple(
        dataclasses.replace(f, helper=names.get((f.file, f.first_line), ""))
        for f in t.functions)) for v, t in tables.items()}


def line_table(entry: Callable, args: tuple, kwargs: dict[str, Any],
               variant: str = "flat", opts: dict[str, Any] | None = None) -> LineTable:
    """The per-line table of one variant's entry function.

    The hooked trace runs first, so that the frames it sees (with their
    globals) settle which source-less code is the user's.
    """
    user = UserCode(_user_code(entry))
    jitted = jax.jit(entry, **(opts or {}))
    hook = LineHook(user)
    with _user_errors(variant):
        jax.clear_caches()
        hook.run(lambda: jitted.trace(*args, **kwargs))
        jax.clear_caches()
        traced = jitted.trace(*args, **kwargs)
        lowered = traced.lower()
    own, inclusive = count_equations(traced.jaxpr.jaxpr, user)
    hlo = count_hlo_ops(lowered.as_text(debug_info=True), user)
    return LineTable(variant, build_rows(user, own, inclusive, hlo, hook),
                     user.spans(hook.calls), getattr(entry, "__qualname__", variant))


def _user_code(entry: Callable) -> types.CodeType | None:
    """The code of the user's function behind a variant's entry (a jitmagic wrapper, a
    partial, a callable instance), where the stacks of its lines are cut."""
    inner: Any = entry
    while getattr(inner, "__wrapped__", None) is not None:
        inner = inner.__wrapped__
    call = inspect.getattr_static(type(inner), "__call__", None)
    for candidate in (inner, getattr(inner, "func", None), call):
        code = code_of(candidate)
        if code is not None:
            return code
    return None


class UserCode:
    """Which frames are the user's, and the source line each one points at (cached)."""

    def __init__(self, entry_code: types.CodeType):
        self.entry_code = entry_code
        self.codes: dict[types.CodeType, bool] = {}
        self._frames: dict[tuple[types.CodeType, int], Key | None] = {}
        self._stacks: dict[Any, tuple[Key, ...]] = {}

    def is_user(self, code: types.CodeType, namespace: dict[str, Any] | None = None) -> bool:
        """Whether ``code`` is the user's, decided once per code object.

        Code without a source file (``<string>``: ``exec``, NamedTuple and
        dataclass methods) is the user's when its globals (``namespace``, where
        the frame is at hand) are not a library module's.
        """
        known = self.codes.get(code)
        if known is None:
            name = code.co_filename
            known = user_file(name) or (sourceless(name) and (
                namespace is None or _user_namespace(namespace)))
            self.codes[code] = known
        return known

    def stack(self, traceback: Any) -> tuple[Key, ...]:
        """The user lines on a traceback, innermost first, cut at the entry's frame."""
        if traceback is None:
            return ()
        cached = self._stacks.get(traceback)
        if cached is None:
            cached = self._stacks[traceback] = tuple(self._walk(*traceback.raw_frames()))
        return cached

    def _walk(self, codes: list, lastis: list) -> Iterator[Key]:
        for code, lasti in zip(codes, lastis, strict=True):
            if self.is_user(code):
                key = self._frames.get((code, lasti))
                if key is None:
                    line = source_info_util.raw_frame_to_frame(code, lasti).start_line
                    key = self._frames[(code, lasti)] = (code.co_filename, line)
                yield key
            if code is self.entry_code:
                return

    def spans(self, calls: Counter | None = None) -> tuple[FunctionSpan, ...]:
        """The user functions seen, with their line ranges and fresh calls."""
        calls = calls or Counter()
        out = []
        for code, user in self.codes.items():
            if user:
                last = max((ln for _, _, ln in code.co_lines() if ln), default=code.co_firstlineno)
                out.append(FunctionSpan(code.co_qualname, code.co_filename,
                                        code.co_firstlineno, last, calls[code]))
        return tuple(out)


def _user_namespace(namespace: dict[str, Any]) -> bool:
    """Whether globals belong to the user: not a library module's, not a namedtuple's.

    A notebook's namespace is called ``__main__`` but is not the dict of
    ``sys.modules["__main__"]`` (the kernel's launcher): it is the user's.
    """
    label = str(namespace.get("__name__"))
    module = sys.modules.get(label)
    if module is None or getattr(module, "__dict__", None) is not namespace:
        return not label.startswith("namedtuple_")
    return user_file(getattr(module, "__file__", None) or "<")


def count_equations(jaxpr: Any, user: UserCode) -> tuple[Counter, Counter]:
    """(own, inclusive) equation counts per user line, each distinct sub-jaxpr once.

    A sub-jaxpr's *context* is the user lines of every equation that calls it
    (and their own context): inside a nested jit, equations carry only the
    helper's frames, so its callers' lines are added for the inclusive count.
    An equation with no user frame of its own (a ``fori_loop``'s counter, a
    library's internals) is owned by the user line that called the library:
    that of the equation holding its jaxpr, so the own counts add up to
    every equation.
    """
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
    context: dict[int, frozenset[Key]] = {}
    for j in order:
        _context(id(j), callers, context)
    own: Counter = Counter()
    inclusive: Counter = Counter()
    for j in order:
        for eqn in j.eqns:
            stack = user.stack(eqn.source_info.traceback)
            line = stack[0] if stack else owner[id(j)]
            if line is not None:
                own[line] += 1
            inclusive.update(set(stack) | context[id(j)] | ({line} - {None}))
    return own, inclusive


def _context(jid: int, callers: dict[int, list[tuple[frozenset[Key], int]]],
             memo: dict[int, frozenset[Key]]) -> frozenset[Key]:
    """The user lines of every equation that (transitively) calls jaxpr ``jid``."""
    if jid not in memo:
        memo[jid] = frozenset().union(*(here | _context(parent, callers, memo)
                                        for here, parent in callers[jid]))
    return memo[jid]


class LineHook:
    """A ``sys.settrace`` hook that counts line events and Python time per user line.

    Time runs from one line event to the next in the same frame (callees'
    time included, as in ``%lprun``), and includes the hook's own overhead.
    """

    def __init__(self, user: UserCode):
        self.user = user
        self.hits: Counter = Counter()
        self.seconds: Counter = Counter()
        self.calls: Counter = Counter()
        self.held: Counter = Counter()  # frames now on each line: time is counted once

    def run(self, fn: Callable[[], Any]) -> Any:
        """Call ``fn`` under the hook; whatever hook was there before is put back."""
        previous = sys.gettrace()
        sys.settrace(self._on_call)
        try:
            with paused_gc():
                return fn()
        finally:
            sys.settrace(previous)

    def _on_call(self, frame: types.FrameType, event: str, arg: Any) -> Callable | None:
        if frame.f_trace is not None:  # a generator resumed: keep its tracer and state
            return frame.f_trace
        if not self.user.is_user(frame.f_code, frame.f_globals):
            return None
        self.calls[frame.f_code] += 1
        return self._frame_tracer(frame.f_code.co_filename)

    def _frame_tracer(self, file: str) -> Callable:
        hits, seconds, held, clock = self.hits, self.seconds, self.held, time.perf_counter
        # [line key, when it started, whether an outer frame already holds that line]
        state: list[Any] = [None, 0.0, False]

        def tracer(frame: types.FrameType, event: str, arg: Any) -> Callable:
            now = clock()
            if state[0] is not None and event in ("line", "return"):
                if not state[2]:  # a generator on its caller's line: counted once
                    seconds[state[0]] += now - state[1]
                held[state[0]] -= 1
                state[0] = None  # after a return (or a yield) no line runs here
            if event == "line":
                key = state[0] = (file, frame.f_lineno)
                hits[key] += 1
                state[2] = held[key] > 0
                held[key] += 1
            state[1] = now
            return tracer

        return tracer


_LOC_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$")
_OP_LOC = re.compile(r" loc\((.*)\)\s*$")
_FILE_LOC = re.compile(r'^"((?:[^"\\]|\\.)*)":(\d+)')
_NOT_OPS = ("func.func", "module", "return ", "stablehlo.return", "func.return")


def count_hlo_ops(text: str, user: UserCode) -> Counter:
    """StableHLO ops per user line, from ``as_text(debug_info=True)`` locations.

    An op with regions (while, case) carries its location on its closing line;
    a location goes to the innermost frame that lies inside a user function.
    """
    aliases = dict(m.groups() for m in map(_LOC_DEF.match, text.splitlines()) if m)
    ranges = _line_ranges(user)
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
            resolved[loc] = _user_frame(_frames(loc, aliases), ranges)
        if resolved[loc] is not None:
            ops[resolved[loc]] += 1
    return ops


def _line_ranges(user: UserCode) -> dict[str, list[tuple[int, int]]]:
    ranges: dict[str, list[tuple[int, int]]] = {}
    for span in user.spans():
        ranges.setdefault(span.file, []).append((span.first_line, span.last_line))
    return ranges


def _user_frame(frames: list[Key], ranges: dict[str, list[tuple[int, int]]]) -> Key | None:
    for file, line in frames:
        if any(a <= line <= b for a, b in ranges.get(file, ())):
            return file, line
    return None


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


def build_rows(user: UserCode, own: Counter, inclusive: Counter, hlo: Counter,
               hook: LineHook) -> tuple[LineRow, ...]:
    """A row per line of every user function seen (zero rows too, for the listing),
    plus any counted line outside them; files in order of first sight."""
    keys: set[Key] = set(own) | set(inclusive) | set(hlo) | set(hook.hits)
    for span in user.spans():
        if linecache.getline(span.file, span.first_line):
            keys.update((span.file, n) for n in range(span.first_line, span.last_line + 1))
    files = {f: i for i, f in enumerate(dict.fromkeys(c.co_filename for c in user.codes))}
    rows = [LineRow(file, line, _source(file, line), hook.hits[(file, line)],
                    own[(file, line)], inclusive[(file, line)], hlo[(file, line)],
                    hook.seconds[(file, line)])
            for file, line in sorted(keys, key=lambda k: (files.get(k[0], len(files)), k))]
    return tuple(rows)


def _source(file: str, line: int) -> str:
    text = linecache.getline(file, line)
    return text.rstrip("\n") if text else SOURCE_UNAVAILABLE


@contextmanager
def _user_errors(variant: str) -> Iterator[None]:
    """Turn an exception of the user's code during a lines trace into :class:`UserCodeError`."""
    try:
        yield
    except (KeyboardInterrupt, UserCodeError, InputError):
        raise
    except Exception as exc:
        raise UserCodeError(f"the {variant} variant failed while counting lines:\n"
                            + user_traceback(exc)) from exc

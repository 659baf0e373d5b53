"""Per source line of the user's code, what one cold trace and lowering per variant built
(:mod:`.counts`) and, with a line hook, hits and Python time (:mod:`.hook`)."""

from __future__ import annotations

import dataclasses
import inspect
import linecache
import types
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import jax

from ...errors import InputError, UserCodeError, user_traceback
from ...model.comparison import Comparison
from ...model.lines import FunctionSpan, LineRow, Lines, LineTable
from ...model.rows import VARIANTS
from ...options.keywords import options_of
from ..calls.arguments import check_arguments, static_split
from ..discovery.bindings import installing, one_measurement
from ..discovery.found import code_of, entry_namespace
from ..discovery.live_objects import user_entry
from ..sampling.conditions import paused_gc
from ..sampling.stops import Checkpoint, StageInterrupted, Stop
from ..variants.build import build_variant
from ..variants.entry import _holds_module, plan_entry, resolve_entry, user_globals
from ..variants.plan import Plan
from ..variants.rows import Prepared, Staged, verified_calls
from .counts import Key, LineCounts, UserCode, count_equations, count_hlo_ops, loop_calls, loops_of
from .hook import Hook, Tally, make_hook, why_no_hook

#: The text of a line whose source cannot be found (``exec`` of a string, C code).
SOURCE_UNAVAILABLE = "(source not available)"
#: Code that runs inside its own function's frame but is no helper of its own.
_NOT_HELPERS = ("<genexpr>", "<listcomp>", "<dictcomp>", "<setcomp>")


def lines(fn: Callable, /, *args: Any, **kwargs: Any) -> Lines:
    """Which lines of ``fn`` and its helpers build the program, flat and nested."""
    _, kwargs = options_of("lines", kwargs, takes=())
    with one_measurement():  # it swaps the process's own helpers, as compare does
        return lines_of(fn, args, kwargs)


def lines_of(fn: Callable, args: tuple, kwargs: dict[str, Any], *,
             hook: str = "auto") -> Lines:
    """:func:`lines` with the line hook chosen; helpers found only where the entry has any."""
    quick, flat = helperless_plan(fn, args, kwargs), None
    if quick is not None:
        try:
            flat = line_table(quick.fn, quick.args, quick.kwargs, "flat", quick.jit_options,
                              hook=hook)
        except UserCodeError:
            flat = None  # plan_entry knows more ways to take the arguments: let it try
        if flat is not None and not runs_other_functions(flat, _user_code(quick.fn)):
            return Lines(quick.name, {"flat": flat,
                                      "nested": dataclasses.replace(flat, variant="nested")})
    plan = plan_entry(fn, args, kwargs)
    tables: dict[str, LineTable] = {}
    if flat is not None and not any(h.user_jitted for h in plan.helpers.values()):
        tables["flat"] = flat  # the flat variant only takes the user's own jits off
    calls: dict[str, int] = {}
    for v in VARIANTS:
        if v in tables:
            continue
        if tables and not plan.helpers:  # nothing to nest: the same program again
            tables[v] = dataclasses.replace(next(iter(tables.values())), variant=v)
            continue
        variant = build_variant(v, plan)
        tables[v] = line_table(variant.fn, plan.args, plan.kwargs, v, variant.jit_options,
                               hook=hook)
        if v == "nested":  # each helper's jit calls (its caches warm: no cold trace)
            traced = jax.jit(variant.fn, **variant.jit_options).trace(*plan.args, **plan.kwargs)
            calls = verified_calls(variant, traced.jaxpr) or {}
    return Lines(plan.name, helper_names(tables, plan, calls))


def add_lines(result: Comparison, prepared: dict[str, Prepared],
              staged: Mapping[str, Staged] | None = None, *,
              check: Checkpoint | None = None) -> Comparison:
    """``result`` with the per-line tables of its variants, counting ``staged``."""
    staged = staged or {}
    check = check or Checkpoint()
    tables: dict[str, LineTable] = {}
    stopped = None
    check.report.at("lines")
    try:
        for name, p in prepared.items():
            if tables:  # a stop is said to come after the table just made
                check(f"the {list(tables)[-1]} variant's per-line table")
            check.begin(f"counting lines ({name})")
            with check.mode(python=True):  # the user's code is traced again here
                tables[name] = line_table(p.variant.fn, p.args, p.kwargs, name,
                                          p.variant.jit_options, staged.get(name))
    except Stop as stop:
        stopped = f"{stop.reason}; {_not_counted(prepared, tables)}"
    except StageInterrupted:
        stopped = ("interrupted by the user while counting the "
                   f"{next(n for n in prepared if n not in tables)} variant's lines; "
                   + _not_counted(prepared, tables))
    plan = next(iter(prepared.values())).variant.plan
    return dataclasses.replace(result, lines=Lines(result.entry, helper_names(
        tables, plan, result.nested.helper_calls), stopped=stopped))


def _not_counted(prepared: Mapping[str, Prepared], tables: Mapping[str, LineTable]) -> str:
    """Which variants' per-line tables a stop left out, as a stop reason says it."""
    left = [n for n in prepared if n not in tables]
    return f"no per-line table of the {' and '.join(left)} variant{'s' * (len(left) > 1)}"


def helper_names(tables: dict[str, LineTable], plan: Plan,
                 jit_calls: Mapping[str, int] | None = None) -> dict[str, LineTable]:
    """Each table's functions named as ``--nest`` takes them, with their calls."""
    found = {(h.code.co_filename, h.code.co_firstlineno): h for h in plan.helpers.values()}
    jit_calls = jit_calls or {}

    def named(f: FunctionSpan, variant: str) -> FunctionSpan:
        h = found.get((f.file, f.first_line))
        calls, in_program = f.calls, False
        if calls is None and variant == "flat" and h is not None and not h.user_jitted:
            calls = jit_calls.get(h.name)
            in_program = calls is not None
        return dataclasses.replace(f, helper=h.name if h is not None else "", calls=calls,
                                   in_program=in_program)

    return {v: dataclasses.replace(t, functions=tuple(named(f, v) for f in t.functions))
            for v, t in tables.items()}


def line_table(entry: Callable, args: tuple, kwargs: dict[str, Any],
               variant: str = "flat", opts: dict[str, Any] | None = None,
               staged: Staged | None = None, *, hook: str = "auto") -> LineTable:
    """One variant's per-line table, traced and lowered unless ``staged`` holds them."""
    user = user_code(entry)
    hooked = make_hook(user.is_user, hook)
    # no collection during the trace (scanning the millions of objects a big trace makes
    # costs a fifth of it), and none first: nothing here is timed
    with _user_errors(variant), paused_gc(collect=False):
        traced = None
        if staged is None or hooked is not None:
            jitted = jax.jit(entry, **(opts or {}))
            jax.clear_caches()  # or the nested helpers are not traced again
            run = lambda: jitted.trace(*args, **kwargs)  # noqa: E731
            traced = hooked.run(run) if hooked is not None else run()
        jaxpr: Any = traced if staged is None else staged.jaxpr
        while not (hasattr(jaxpr, "consts") or hasattr(jaxpr, "eqns")):  # a Traced's,
            jaxpr = jaxpr.jaxpr  # closed (its constants with it) where there is one
        lowered = staged.lowered if staged is not None and staged.lowered is not None \
            else (traced if traced is not None else _traced(staged)).lower()
        text = lowered if isinstance(lowered, str) else lowered.as_text(debug_info=True)
    counts = count_equations(jaxpr, user)
    hlo = count_hlo_ops(text, user)
    tally = hooked.tally if hooked is not None else None
    spans = user.spans(tally.calls if tally is not None else None)
    notes = () if tally is not None else (why_no_hook(hook),)
    loops = loops_of(spans)  # the loops' own lines name them, hits or not
    every = counts.every_constant
    return LineTable(variant, build_rows(user, counts, hlo, tally), spans,
                     getattr(entry, "__qualname__", variant), notes, loops,
                     constants=(len(every), sum(every.values())),
                     loop_calls=loop_calls(jaxpr, user))


def user_code(entry: Callable) -> UserCode:
    """Which frames are the user's, for a variant's entry function."""
    return UserCode(_user_code(entry), entry_namespace(user_entry(entry)))


def _traced(staged: Staged | None) -> Any:
    if staged is None or not hasattr(staged.jaxpr, "lower"):
        raise ValueError("Staged: give the lowered module, or a jax.stages.Traced to lower")
    return staged.jaxpr


def _user_code(entry: Callable) -> types.CodeType | None:
    """The code of the user's function behind a variant's entry."""
    inner: Any = entry
    while getattr(inner, "__wrapped__", None) is not None:
        inner = inner.__wrapped__
    call = inspect.getattr_static(type(inner), "__call__", None)
    return next((c for c in map(code_of, (inner, getattr(inner, "func", None), call))
                 if c is not None), None)


def build_rows(user: UserCode, counts: LineCounts, hlo: Counter,
               tally: Tally | Hook | None) -> tuple[LineRow, ...]:
    """A row per line of every user function seen and any counted line outside them."""
    own, inclusive, constants = counts.own, counts.inclusive, counts.constants
    ticks = tally if tally is None or isinstance(tally, Tally) else tally.tally
    hits = ticks.hits if ticks is not None else {}
    keys: set[Key] = set(own) | set(inclusive) | set(hlo) | set(hits)
    for span in user.spans():
        if linecache.getline(span.file, span.first_line):
            keys.update((span.file, n) for n in range(span.first_line, span.last_line + 1))
    files = {f: i for i, f in enumerate(dict.fromkeys(c.co_filename for c in user.codes))}
    rows = [LineRow(file, line, _source(file, line),
                    None if ticks is None else ticks.hits[(file, line)],
                    own[(file, line)], inclusive[(file, line)], hlo[(file, line)],
                    None if ticks is None else ticks.seconds[(file, line)],
                    len(constants.get((file, line), ())),
                    sum(constants.get((file, line), {}).values()),
                    sum(counts.own_constants.get((file, line), {}).values()),
                    counts.in_loops[(file, line)])
            for file, line in sorted(keys, key=lambda k: (files.get(k[0], len(files)), k))]
    return tuple(rows)


def _source(file: str, line: int) -> str:
    text = linecache.getline(file, line)
    return text.rstrip("\n") if text else SOURCE_UNAVAILABLE


@contextmanager
def _user_errors(variant: str) -> Iterator[None]:
    """An exception of the user's code while counting lines as :class:`UserCodeError`."""
    try:
        yield
    except (KeyboardInterrupt, UserCodeError, InputError):
        raise
    except Exception as exc:
        raise UserCodeError(f"the {variant} variant failed while counting lines:\n"
                            + user_traceback(exc)) from exc


def helperless_plan(fn: Callable, args: tuple, kwargs: dict[str, Any]) -> Plan | None:
    """``plan_entry``'s plan for an entry without helpers, untraced (None: can't)."""
    resolved = resolve_entry(fn)
    if resolved.filtered or _holds_module("flax.nnx", (resolved.fn, args, kwargs)) or (
            resolved.jit_options is None and _holds_module("equinox", (args, kwargs))):
        return None
    check_arguments(resolved.name, args, kwargs)
    opts = resolved.jit_options or static_split(args, kwargs)
    return Plan(installing(resolved.fn, []), resolved.name, {}, opts, [], args, kwargs,
                user_globals(resolved.fn) or {})


def runs_other_functions(table: LineTable, entry: types.CodeType | None) -> bool:
    """Whether the program ran a user function besides ``entry``."""
    where = (entry.co_filename, entry.co_firstlineno) if entry is not None else None
    return any((f.file, f.first_line) != where for f in table.functions
               if f.name.rsplit(".", 1)[-1] not in _NOT_HELPERS)

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

The counting is in :mod:`~jitmagic.measure.line_counts`, the hook in
:mod:`~jitmagic.measure.line_hook`, the StableHLO locations in
:mod:`~jitmagic.measure.mlir_locations`. A frame is the user's by
:mod:`jitmagic.usercode`'s rule and when it runs inside the entry: library
equations go to the user line that called the library.
"""

from __future__ import annotations

import dataclasses
import inspect
import linecache
import types
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import jax

from ..errors import InputError, UserCodeError, user_traceback
from ..model.comparison import VARIANTS, Comparison
from ..model.lines import SOURCE_UNAVAILABLE, LineRow, Lines, LineTable
from .discovery import code_of
from .entry import plan_entry
from .line_counts import Key, UserCode, count_equations
from .line_hook import LineHook
from .mlir_locations import count_hlo_ops
from .plan import Plan
from .runner import Prepared
from .variants import build_variant


def lines(fn: Callable, /, *args: Any, **kwargs: Any) -> Lines:
    """Which lines of ``fn`` and its helpers build the program, flat and nested.

    One cold trace and lowering per variant count equations and StableHLO ops
    per line; one more trace under a line hook counts hits and Python time.
    """
    plan = plan_entry(fn, args, kwargs)
    tables = {}
    for v in VARIANTS:
        variant = build_variant(v, plan)
        tables[v] = line_table(variant.fn, plan.args, plan.kwargs, v, variant.jit_options)
    return Lines(plan.name, helper_names(tables, plan))


def add_lines(result: Comparison, prepared: dict[str, Prepared]) -> Comparison:
    """``result`` carrying the per-line table of its prepared variants (``--lines``)
    (saved with the report)."""
    tables = {name: line_table(p.variant.fn, p.args, p.kwargs, name, p.variant.jit_options)
              for name, p in prepared.items()}
    plan = next(iter(prepared.values())).variant.plan
    return dataclasses.replace(result, lines=Lines(result.entry, helper_names(tables, plan)))


def helper_names(tables: dict[str, LineTable], plan: Plan) -> dict[str, LineTable]:
    """Each table with its functions named as ``--nest`` takes them (the plan's helper
    names), so that a hint's ``--nest`` name is one the option accepts."""
    names = {(h.code.co_filename, h.code.co_firstlineno): n for n, h in plan.helpers.items()}
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

"""Helpers behind a decorator of the user's: one helper per function the user wrote.

A decorator's wrapper is a user function too, and the program shows both it and the
function it wraps. A wrapper of one function found stands for it, named after it (as
does one a user's ``jax.jit`` holds). A wrapper whose code several functions share (one
decorator on ``attention`` and ``ffn``) would put them all under one jit, since nesting
is by code object: there each function the user wrote is the helper, bound where its
wrapper is (the entry's own function excepted).
"""

from __future__ import annotations

import gc
import types
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any

from ..._compat import jit_info
from .bindings import Binding
from .found import Found
from .found import closure_values
from .found import function_of


def without_decorated(found: list[Found], live_function: Callable[[types.CodeType], Any],
                      entry_codes: Iterable[types.CodeType]) -> list[Found]:
    """``found`` with each decorator's wrapper and the function it wraps made one helper;
    ``live_function``: a live function of a code object, or None."""
    by_code = {f.code: f for f in found}
    entry = set(entry_codes)
    dropped: set[types.CodeType] = set()
    for f in found:
        if f.code in dropped:
            continue
        wrapped = _wrapped_by(f, by_code, live_function(f.code))
        inners = [c for c in wrapped if c not in dropped]
        if len(inners) == 1 or (inners and any(jit_info(b.original) is not None
                                               for b in f.bindings)):  # the user's jit
            dropped.add(inners[0])
            f.name = by_code[inners[0]].name
        elif len(inners) > 1:  # a shared wrapper: each function it wraps is a helper
            dropped.add(f.code)
            for code in inners:
                if code in entry:
                    dropped.add(code)
                    continue
                inner = by_code[code]
                inner.bindings += [b for b in wrapped[code] if b not in inner.bindings]
    return [f for f in found if f.code not in dropped]


def _wrapped_by(f: Found, by_code: dict[types.CodeType, Found], live: Any,
                ) -> dict[types.CodeType, list[Binding]]:
    """The functions found that ``f``'s function objects wrap, by code, each with the
    bindings of ``f`` holding its wrapper: a bound wrapper's and ``live``'s, then (where
    one wraps a function found) every other function object of ``f``'s code."""
    out: dict[types.CodeType, list[Binding]] = {}
    held = [(b, function_of(b.original)) for b in f.bindings]
    for binding, fn in [*held, (None, live)]:
        code = _inner_of(fn, f.code, by_code, binding.key if binding else None)
        if code is not None:
            bindings = out.setdefault(code, [])
            if binding is not None and binding not in bindings:
                bindings.append(binding)
    if out:
        for fn in gc.get_referrers(f.code):  # the live functions of its code
            code = _inner_of(fn, f.code, by_code, closure=True)
            if code is not None:
                out.setdefault(code, [])
    return out


def _inner_of(fn: Any, wrapper: types.CodeType, by_code: dict[types.CodeType, Found],
              key: str | None = None, closure: bool = False) -> types.CodeType | None:
    """The code of the function found that ``fn`` (of code ``wrapper``) runs: its
    ``__wrapped__``, else (with ``closure``, or bound under ``key``, that function's
    name) the one its closure holds."""
    if not isinstance(fn, types.FunctionType) or fn.__code__ is not wrapper:
        return None
    inner: Any = getattr(fn, "__wrapped__", None)
    for _ in range(8):
        if not isinstance(inner, types.FunctionType):
            break
        if inner.__code__ in by_code and inner.__code__ is not wrapper:
            return inner.__code__
        inner = getattr(inner, "__wrapped__", None)
    held = {v.__code__ for v in closure_values(fn) if isinstance(v, types.FunctionType)
            and v.__code__ in by_code and v.__code__ is not wrapper}
    if len(held) != 1:
        return None
    code = held.pop()
    return code if closure or key == code.co_name else None



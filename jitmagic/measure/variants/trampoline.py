"""Nesting a helper at its function object, so that every reference reaches the jit.

A name can be rebound, but a helper is also reached through a dict
(``ops["f"](x)``), a default argument, a closure cell, a ``functools.partial``, a
``jax.named_call`` or ``jax.vmap`` wrapper, or a jitted twin (``jf = jax.jit(f)``).
All of these hold the same function object, so the nested variant changes the
object itself, for as long as the entry's Python code runs:

* a copy of the function (same code, globals, defaults, closure) goes under the
  helper's jit;
* the function's ``__code__`` becomes a *trampoline*: a code object with the same
  free variables whose body calls that jit (held as one of its constants).

The original ``__code__`` is put back in ``finally`` (the swap goes through
:func:`~jitmagic.measure.discovery.bindings.swapped` like a binding's); nothing else of the
function changes.
"""

from __future__ import annotations

import gc
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...usercode import OWN_SOURCE

#: The trampoline's file name: no source line of the user's (nor a frame of theirs in a
#: traceback or a ``--lines`` table) is ever attributed to it.
TRAMPOLINE_FILE = OWN_SOURCE + "trampoline>"

#: The constant in the trampoline's source that its target replaces.
_TARGET = "__jitmagic_trampoline_target__"


def functions_of(code: types.CodeType) -> list[types.FunctionType]:
    """The live function objects whose code is ``code`` (one per ``def`` run, usually one)."""
    return [f for f in gc.get_referrers(code)
            if isinstance(f, types.FunctionType) and f.__code__ is code]


def copy_function(fn: types.FunctionType) -> types.FunctionType:
    """A new function object with ``fn``'s code, globals, name, defaults and closure."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    copy.__module__ = fn.__module__
    copy.__doc__ = fn.__doc__
    return copy


def trampoline(code: types.CodeType, target: Callable) -> types.CodeType:
    """Code that calls ``target(*args, **kwargs)``, with the free variables of ``code``
    (so that it can be assigned to the function ``code`` belongs to)."""
    free = code.co_freevars
    lines = ["def outer():"]
    lines += [f"    {name} = None" for name in free]
    lines.append("    def inner(*args, **kwargs):")
    if free:  # referenced (never run), so that they are free variables of ``inner``
        lines.append("        if False:")
        lines.append(f"            ({', '.join(free)},)")
    lines.append(f"        return {_TARGET!r}(*args, **kwargs)")
    lines.append("    return inner")
    namespace: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # "'str' object is not callable"
        exec(compile("\n".join(lines), TRAMPOLINE_FILE, "exec"), namespace)
    inner = namespace["outer"]().__code__
    assert inner.co_freevars == free, (inner.co_freevars, free)
    consts = tuple(target if c == _TARGET else c for c in inner.co_consts)
    return inner.replace(co_consts=consts, co_name=code.co_name, co_qualname=code.co_qualname)


@dataclass(frozen=True, eq=False)
class CodeOf:
    """The ``__code__`` of a function, as a place a variant swaps (like a binding)."""

    fn: types.FunctionType

    def set(self, code: types.CodeType) -> None:
        self.fn.__code__ = code


def route(fn: types.FunctionType, target: Callable) -> tuple[CodeOf, types.CodeType,
                                                             types.CodeType]:
    """The swap that sends every call of ``fn`` to ``target`` (restored after)."""
    return CodeOf(fn), fn.__code__, trampoline(fn.__code__, target)

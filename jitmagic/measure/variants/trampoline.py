"""Nesting a helper at its function object, so that every reference reaches the jit.

A name can be rebound, but a helper is also reached through a dict
(``ops["f"](x)``), a default argument, a closure cell, a ``functools.partial``, a
``jax.named_call`` or ``jax.vmap`` wrapper, or a jitted twin (``jf = jax.jit(f)``).
All of these hold the same function object, so the nested variant changes the
object itself, for as long as the entry's Python code runs:

* a copy of the function (same code, globals, defaults, closure) goes under the
  helper's jit;
* the function's ``__code__`` becomes a *trampoline*: a code object with the same
  free variables and the same arguments (names, kinds, order: ``inspect.signature``
  and ``co_argcount`` read as before) whose body calls that jit (held, through its
  :class:`Router`, as one of its constants).

Only the thread that put the trampoline in place (the measuring one) reaches the jit:
a call from any other thread runs the original code (another copy of the function), so
a thread calling the helper during a measurement gets what it always gets.

The original ``__code__`` is put back in ``finally`` (the swap goes through
:func:`~jitmagic.measure.discovery.bindings.swapped` like a binding's, where a Ctrl-C
cannot cut the put-back short); nothing else of the function changes.
"""

from __future__ import annotations

import functools
import gc
import inspect
import keyword
import threading
import types
import warnings
import weakref
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...usercode import OWN_SOURCE

#: The trampoline's file name: no source line of the user's (nor a frame of theirs in a
#: traceback or a ``--lines`` table) is ever attributed to it.
TRAMPOLINE_FILE = OWN_SOURCE + "trampoline>"

#: The constants in the trampoline's source that its router, the original function and
#: ``threading.get_ident`` replace (no argument name can be spelt like them).
_ROUTER, _ORIGINAL, _IDENT = "<jitmagic router>", "<jitmagic original>", "<jitmagic ident>"

#: The copies jitmagic makes of a helper (the one its jit wraps, the one other threads
#: run): functions of the helper's code that are never the user's, so never routed.
_COPIES: weakref.WeakSet[types.FunctionType] = weakref.WeakSet()


def functions_of(code: types.CodeType) -> list[types.FunctionType]:
    """The live function objects whose code is ``code`` (one per ``def`` run, usually one),
    jitmagic's own copies of them left out."""
    return functions_of_all([code])[code]


def functions_of_all(codes: Iterable[types.CodeType]
                     ) -> dict[types.CodeType, list[types.FunctionType]]:
    """:func:`functions_of` each of ``codes``, from one scan of the heap (the garbage
    collector's referrers: a scan costs about 0.2 s with three million objects, so it is
    made once for every helper, not once each)."""
    wanted = list(dict.fromkeys(codes))
    out: dict[types.CodeType, list[types.FunctionType]] = {c: [] for c in wanted}
    if not wanted:
        return out
    for f in gc.get_referrers(*wanted):
        if isinstance(f, types.FunctionType) and f.__code__ in out and f not in _COPIES:
            out[f.__code__].append(f)
    return out


def copy_function(fn: types.FunctionType) -> types.FunctionType:
    """A new function object with ``fn``'s code, globals, name, defaults and closure."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    copy.__module__ = fn.__module__
    copy.__doc__ = fn.__doc__
    _COPIES.add(copy)
    return copy


class Router:
    """Where a routed function's calls go: the measuring thread's (``ident``, set while
    the trampoline is in place) to ``target``, every other thread's to the original."""

    __slots__ = ("fn", "code", "target", "ident", "exact")

    def __init__(self, fn: types.FunctionType, target: Callable) -> None:
        self.fn, self.code, self.target = fn, fn.__code__, target
        self.ident: int | None = None
        #: The trampoline has the original's parameters (else ``*args, **kwargs``).
        self.exact = _Layout.of(fn.__code__) is not None

    def call(self, positional: tuple, varargs: tuple, kwonly: dict[str, Any],
             varkw: dict[str, Any]) -> Any:
        """``target`` called with the arguments as the caller most likely passed them (the
        trampoline has them bound to its parameters): one that holds its own default is
        left out, so that the jit keeps a default as the Python value it is."""
        if not self.exact:
            return self.target(*varargs, **varkw)
        args, kwargs = as_called(self.code, self.fn, positional, varargs, kwonly)
        return self.target(*args, **kwargs, **varkw)


def as_called(code: types.CodeType, fn: types.FunctionType, positional: tuple,
              varargs: tuple, kwonly: dict[str, Any]) -> tuple[tuple, dict[str, Any]]:
    """(args, kwargs) that bind as ``positional`` (the values of the named positional
    parameters), ``varargs`` and ``kwonly`` (a dict of its own) do, without the
    parameters that hold their default (the very object): the positional part ends at
    the first of those past the last positional-only parameter that holds another
    value, the rest go by name."""
    kwdefaults = fn.__kwdefaults__
    if kwdefaults:
        for k in [k for k, v in kwonly.items() if k in kwdefaults and v is kwdefaults[k]]:
            del kwonly[k]
    defaults = fn.__defaults__
    if varargs or not defaults:
        return positional + varargs, kwonly
    n = len(positional)
    first = n - len(defaults)
    start = first
    for i in range(min(code.co_posonlyargcount, n) - 1, first - 1, -1):
        if positional[i] is not defaults[i - first]:
            start = i + 1
            break
    for cut in range(start, n):
        if positional[cut] is defaults[cut - first]:
            break
    else:
        return positional, kwonly
    names = code.co_varnames
    for i in range(cut + 1, n):
        if positional[i] is not defaults[i - first]:
            kwonly[names[i]] = positional[i]
    return positional[:cut], kwonly


@dataclass(frozen=True)
class _Layout:
    """A code object's arguments, as a ``def`` line and the calls that forward them."""

    names: tuple[str, ...]  # the named positional parameters
    posonly: int
    kwonly: tuple[str, ...]
    star: str | None
    dstar: str | None

    @classmethod
    def of(cls, code: types.CodeType) -> _Layout | None:
        """``code``'s arguments; None where a name cannot be written in a ``def``."""
        n, k = code.co_argcount, code.co_kwonlyargcount
        star = code.co_varnames[n + k] if code.co_flags & inspect.CO_VARARGS else None
        at = n + k + (star is not None)
        dstar = code.co_varnames[at] if code.co_flags & inspect.CO_VARKEYWORDS else None
        layout = cls(code.co_varnames[:n], code.co_posonlyargcount,
                     code.co_varnames[n:n + k], star, dstar)
        every = (*layout.names, *layout.kwonly, *(x for x in (star, dstar) if x))
        if any(not x.isidentifier() or keyword.iskeyword(x) for x in every):
            return None
        return layout

    def parameters(self) -> str:
        p = list(self.names[:self.posonly]) + (["/"] if self.posonly else [])
        p += self.names[self.posonly:]
        p += [f"*{self.star}"] if self.star else (["*"] if self.kwonly else [])
        p += self.kwonly
        return ", ".join(p + ([f"**{self.dstar}"] if self.dstar else []))

    def routed(self) -> str:
        """The call of the router: ``call(positional, varargs, kwonly, varkw)``."""
        positional = "".join(f"{x}, " for x in self.names)
        kwonly = ", ".join(f"{x!r}: {x}" for x in self.kwonly)
        return (f"{_ROUTER!r}.call(({positional}), {self.star or '()'}, {{{kwonly}}}, "
                f"{self.dstar or '{}'})")

    def forwarded(self) -> str:
        """The call of the original, every argument passed on as it was bound."""
        a = list(self.names) + ([f"*{self.star}"] if self.star else [])
        a += [f"{x}={x}" for x in self.kwonly] + ([f"**{self.dstar}"] if self.dstar else [])
        return f"{_ORIGINAL!r}({', '.join(a)})"


#: The layout of a code object whose argument names cannot be written (never seen).
_ANY = _Layout((), 0, (), "args", "kwargs")


def trampoline(code: types.CodeType, router: Router,
               original: types.FunctionType) -> types.CodeType:
    """Code with the arguments and free variables of ``code`` (so that it can be assigned
    to the function ``code`` belongs to, whose defaults and signature it then keeps) that
    sends the call to ``router`` on the thread ``router.ident`` names, else to
    ``original`` (a function running ``code``)."""
    layout = _Layout.of(code) or _ANY
    template = _template(layout, code.co_freevars)
    swap = {_ROUTER: router, _ORIGINAL: original, _IDENT: threading.get_ident}
    consts = tuple(swap.get(c, c) if isinstance(c, str) else c for c in template.co_consts)
    return template.replace(co_consts=consts, co_name=code.co_name,
                            co_qualname=code.co_qualname)


@functools.lru_cache(maxsize=256)
def _template(layout: _Layout, free: tuple[str, ...]) -> types.CodeType:
    """The trampoline's code for one layout, its three constants still placeholders
    (compiled once: 20,000 closures of one ``def`` share it)."""
    lines = ["def outer():"]
    lines += [f"    {name} = None" for name in free]
    lines.append(f"    def inner({layout.parameters()}):")
    if free:  # referenced (never run), so that they are free variables of ``inner``
        lines.append("        if False:")
        lines.append(f"            ({', '.join(free)},)")
    lines.append(f"        if {_IDENT!r}() == {_ROUTER!r}.ident:")
    lines.append(f"            return {layout.routed()}")
    lines.append(f"        return {layout.forwarded()}")
    lines.append("    return inner")
    namespace: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # "'str' object is not callable"
        exec(compile("\n".join(lines), TRAMPOLINE_FILE, "exec"), namespace)
    inner = namespace["outer"]().__code__
    assert inner.co_freevars == free, (inner.co_freevars, free)
    return inner


@dataclass(frozen=True, eq=False)
class CodeOf:
    """The ``__code__`` of a function, as a place a variant swaps (like a binding). Setting
    its trampoline routes the setting thread's calls; setting any other code, none."""

    fn: types.FunctionType
    router: Router | None = None

    def set(self, code: types.CodeType) -> None:
        if self.router is not None:
            self.router.ident = None if code is self.router.code else threading.get_ident()
        self.fn.__code__ = code


def route(fn: types.FunctionType, target: Callable) -> tuple[CodeOf, types.CodeType,
                                                             types.CodeType]:
    """The swap that sends the measuring thread's calls of ``fn`` to ``target`` (restored
    after); other threads' calls run ``fn``'s own code."""
    router = Router(fn, target)
    return CodeOf(fn, router), fn.__code__, trampoline(fn.__code__, router, copy_function(fn))

"""Nesting a helper at its function object: while the entry runs its ``__code__`` is a trampoline
calling a copy of it under the helper's jit on the measuring thread, put back in ``finally``."""

from __future__ import annotations

import functools
import inspect
import keyword
import threading
import types
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ...usercode import OWN_SOURCE
from ..discovery.found import COPIES

#: The trampoline's file name: no line of the user's is ever attributed to it.
TRAMPOLINE_FILE = OWN_SOURCE + "trampoline>"

#: Placeholders in the trampoline's source (no argument name can be spelt like them).
_ROUTER, _ORIGINAL, _IDENT = "<jitmagic router>", "<jitmagic original>", "<jitmagic ident>"


def copy_function(fn: types.FunctionType) -> types.FunctionType:
    """A new function object with ``fn``'s code, globals, name, defaults and closure."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    for name in ("__kwdefaults__", "__qualname__", "__module__", "__doc__"):
        setattr(copy, name, getattr(fn, name))
    COPIES.add(copy)
    return copy


def unwrapping(fn: Any) -> Iterator[Any]:
    """``fn`` and what it runs, up to 6 deep (a wrapper, partial, method, instance)."""
    inner = fn
    for _ in range(6):
        if inner is None:
            return
        yield inner
        nxt = getattr(inner, "__wrapped__", None) or getattr(inner, "func", None) \
            or getattr(inner, "__func__", None)
        if nxt is None and callable(inner) and not isinstance(inner, types.FunctionType):
            nxt = inspect.getattr_static(type(inner), "__call__", None)
        inner = nxt


class Router:
    """Routes a function's calls: the measuring thread's to ``target``, others' to the original."""

    __slots__ = ("fn", "code", "target", "ident", "exact")

    def __init__(self, fn: types.FunctionType, target: Callable) -> None:
        self.fn, self.code, self.target = fn, fn.__code__, target
        self.ident: int | None = None
        #: The trampoline has the original's parameters (else ``*args, **kwargs``).
        self.exact = _Layout.of(fn.__code__) is not None

    def call(self, positional: tuple, varargs: tuple, kwonly: dict[str, Any],
             varkw: dict[str, Any]) -> Any:
        """``target`` called with the arguments as the caller most likely passed them."""
        if not self.exact:
            return self.target(*varargs, **varkw)
        args, kwargs = as_called(self.code, self.fn, positional, varargs, kwonly)
        return self.target(*args, **kwargs, **varkw)


def as_called(code: types.CodeType, fn: types.FunctionType, positional: tuple,
              varargs: tuple, kwonly: dict[str, Any]) -> tuple[tuple, dict[str, Any]]:
    """(args, kwargs) that bind as given, without parameters holding their very default."""
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
    """Code with ``code``'s arguments calling ``router`` on its thread, else ``original``."""
    layout = _Layout.of(code) or _ANY
    template = _template(layout, code.co_freevars)
    swap = {_ROUTER: router, _ORIGINAL: original, _IDENT: threading.get_ident}
    consts = tuple(swap.get(c, c) if isinstance(c, str) else c for c in template.co_consts)
    return template.replace(co_consts=consts, co_name=code.co_name,
                            co_qualname=code.co_qualname)


@functools.lru_cache(maxsize=256)
def _template(layout: _Layout, free: tuple[str, ...]) -> types.CodeType:
    """The trampoline's code for one layout, constants as placeholders (compiled once)."""
    lines = ["def outer():"]
    lines += [f"    {name} = None" for name in free]
    lines.append(f"    def inner({layout.parameters()}):")
    if free:  # referenced (never run), so that they are free variables of ``inner``
        lines += ["        if False:", f"            ({', '.join(free)},)"]
    lines += [f"        if {_IDENT!r}() == {_ROUTER!r}.ident:",
              f"            return {layout.routed()}",
              f"        return {layout.forwarded()}", "    return inner"]
    namespace: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # "'str' object is not callable"
        exec(compile("\n".join(lines), TRAMPOLINE_FILE, "exec"), namespace)
    inner = namespace["outer"]().__code__
    assert inner.co_freevars == free, (inner.co_freevars, free)
    return inner


@dataclass(frozen=True, eq=False)
class CodeOf:
    """A function's ``__code__`` as a place a variant swaps (and routes)."""

    fn: types.FunctionType
    router: Router | None = None

    def set(self, code: types.CodeType) -> None:
        if self.router is not None:
            self.router.ident = None if code is self.router.code else threading.get_ident()
        self.fn.__code__ = code


def route(fn: types.FunctionType, target: Callable) -> tuple[CodeOf, types.CodeType,
                                                             types.CodeType]:
    """The swap that sends the measuring thread's calls of ``fn`` to ``target``."""
    router = Router(fn, target)
    return CodeOf(fn, router), fn.__code__, trampoline(fn.__code__, router, copy_function(fn))

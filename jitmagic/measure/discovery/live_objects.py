"""The functions, classes and instances behind code objects, found lazily from what the
entry reaches (namespaces, globals, instances walked breadth first and bounded)."""

from __future__ import annotations

import functools
import gc
import sys
import types
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from ...usercode import CELL_PREFIXES, sourceless, user_file
from ..calls.arguments import SCALARS, is_array
from .found import (
    closure_values,
    code_of,
    function_of,
    functions_of,
    held_values,
    innermost,
    names_written,
)

#: The most objects visited looking for instances, how deep, and items of one container.
MAX_OBJECTS = 20_000
MAX_DEPTH = 8
MAX_ITEMS = 1_000

_ATOMS = (*SCALARS, str, bytes, type(None), types.ModuleType)
_CONTAINERS = (types.FunctionType, types.MethodType, functools.partial, list, tuple, set,
               frozenset, dict)


class Live:
    """Answers about code objects from the objects ``roots`` reach (lazily, cached)."""

    def __init__(self, roots: Iterable[Any]):
        self.functions: dict[types.CodeType, types.FunctionType] = {}
        self.files: dict[str, dict[str, Any]] = {}
        #: The instances and user classes the walk reached, in order.
        self.reached: list[Any] = []
        self._spaces: deque[Mapping[str, Any]] = deque()
        self._queued: dict[int, Mapping[str, Any]] = {}  # kept: a class's is a new proxy
        self._index: dict[int, dict[types.CodeType, list[str]]] = {}
        self._queue: deque[tuple[Any, int]] = deque((r, 0) for r in roots)
        self._seen: set[int] = set()
        self._by_file: dict[str, dict[str, Any]] | None = None
        self._later: list[types.CodeType] = []

    def globals_of(self, code: types.CodeType, walk: bool = True) -> dict[str, Any] | None:
        """The globals ``code`` runs in (None: unknown); ``walk``: search reached objects too."""
        found = self._known_globals(code)
        if found is None and self._advance(lambda: self._known_globals(code) is not None,
                                           walk):
            found = self._known_globals(code)
        return found if found is not None else self._module_globals(code.co_filename)

    def _known_globals(self, code: types.CodeType) -> dict[str, Any] | None:
        fn = self.functions.get(code)
        if fn is not None:
            return fn.__globals__
        return self.files.get(code.co_filename) if _one_module(code.co_filename) else None

    def _module_globals(self, filename: str) -> dict[str, Any] | None:
        if self._by_file is None:
            files = ((getattr(m, "__file__", None), m) for m in list(sys.modules.values()))
            self._by_file = {f: vars(m) for f, m in files
                             if isinstance(f, str) and user_file(f)}
        return self._by_file.get(filename)

    def keys_holding(self, namespace: dict[str, Any], code: types.CodeType) -> list[str]:
        """The keys of ``namespace`` whose values run ``code``, in order."""
        index = self._index.get(id(namespace))
        if index is None:
            index = self._index[id(namespace)] = {}
            for key, value in list(namespace.items()):
                found = code_of(value)
                if found is not None:
                    index.setdefault(found, []).append(key)
        return index.get(code, [])

    def defining_class(self, code: types.CodeType) -> type | None:
        """The class whose ``__dict__`` holds the method ``code``, maybe wrapped."""
        if "." not in code.co_qualname.rsplit("<locals>.", 1)[-1]:
            return None
        owner = code.co_qualname.rsplit(".", 1)[0]
        defines = functools.partial(_defines, owner=owner, code=code)
        if "<locals>" not in owner:
            klass = _resolve(self.globals_of(code), owner.split("."))
            if klass is not None and defines(klass):
                return klass
        for obj in self._reach():
            mro = obj.__mro__ if isinstance(obj, type) else type(obj).__mro__
            klass = next((k for k in mro if defines(k)), None)
            if klass is not None:
                return klass
        return next((k for k in _classes_holding(code) if defines(k)), None)

    def instance(self, klass: type) -> Any:
        """The first object the roots reach that is a ``klass`` (None: none is)."""
        return next((obj for obj in self._reach() if isinstance(obj, klass)), None)

    def add_globals_of(self, codes: Iterable[types.CodeType]) -> None:
        """Walk also the globals ``codes`` look up, once the roots' objects are walked."""
        self._later.extend(codes)

    def _reach(self) -> Iterator[Any]:
        """The instances and user classes the roots reach: those found, then on walking."""
        i = 0
        while i < len(self.reached) or self._step():
            yield self.reached[i]
            i += 1

    def _advance(self, done: Any, walk: bool = True) -> bool:
        """Scan namespaces, then (``walk``) objects, until ``done()``; whether it came true."""
        while True:
            while self._spaces:
                self._scan(self._spaces.popleft())
                if done():
                    return True
            if not walk or not (self._step() or self._spaces):
                return False

    def _step(self) -> bool:
        """Walk on to the next instance or user class; False when the walk is over."""
        while True:
            while self._queue and len(self._seen) < MAX_OBJECTS:
                obj, depth = self._queue.popleft()
                if id(obj) in self._seen or is_array(obj) or isinstance(obj, _ATOMS):
                    continue
                self._seen.add(id(obj))
                children = self._children(obj)
                if depth < MAX_DEPTH:
                    self._queue.extend((c, depth + 1) for c in children)
                if type(obj) not in _CONTAINERS and (
                        not isinstance(obj, type) or _user_class(obj)):
                    self.reached.append(obj)
                    return True
            if not self._later or len(self._seen) >= MAX_OBJECTS:
                return False
            codes, self._later = self._later, []
            for code in codes:
                namespace = self.globals_of(code, walk=False) or {}
                self._queue.extend((namespace[k], 1) for k in sorted(names_written(code))
                                   if k in namespace)

    def _children(self, obj: Any) -> list[Any]:
        """What an object holds: closure and defaults, items, or attributes and ``__call__``."""
        if isinstance(obj, types.FunctionType):  # known, and its globals scanned when asked
            self._know(obj)
            self._queue_space(obj.__globals__)
        elif callable(obj) and not isinstance(obj, type | types.MethodType | functools.partial):
            wrapped = function_of(obj)  # a jit of a function
            call = getattr(type(obj), "__call__", None)  # noqa: B004 (the class's own)
            return [f for f in (wrapped, call) if isinstance(f, types.FunctionType)] \
                + held_values(obj)
        return held_values(obj, MAX_ITEMS)

    def _know(self, fn: types.FunctionType) -> None:
        self.functions.setdefault(fn.__code__, fn)
        if _one_module(fn.__code__.co_filename):
            self.files.setdefault(fn.__code__.co_filename, fn.__globals__)

    def _queue_space(self, namespace: Mapping[str, Any]) -> None:
        if id(namespace) not in self._queued:
            self._queued[id(namespace)] = namespace
            self._spaces.append(namespace)

    def _scan(self, namespace: Mapping[str, Any]) -> None:
        """Note the functions in a namespace; queue the user's classes and modules in it."""
        for value in list(namespace.values()):
            fn = function_of(value)
            if fn is not None:
                self._know(fn)
            elif _user_class(value) or isinstance(value, types.ModuleType) and user_file(
                    getattr(value, "__file__", None) or "<"):  # `import mylayers as L`
                self._queue_space(vars(value))


def _defines(klass: type, owner: str, code: types.CodeType) -> bool:
    inner = innermost(vars(klass).get(code.co_name))
    return klass.__qualname__ == owner and inner is not None and inner.__code__ is code


def _resolve(namespace: dict[str, Any] | None, path: list[str]) -> type | None:
    """``Outer.Inner`` looked up in ``namespace``."""
    value: Any = namespace.get(path[0]) if namespace else None
    for part in path[1:]:
        value = vars(value).get(part) if isinstance(value, type) else None
    return value if isinstance(value, type) else None


def _classes_holding(code: types.CodeType) -> Iterator[type]:
    """The classes holding a function of ``code`` (or its wrapper), asked of the gc."""
    found: list[Any] = functions_of(code)
    for _ in range(3):  # the function, or a wrapper of it (functools.wraps), in a class
        holders = [h for h in gc.get_referrers(*found) if isinstance(h, dict)] if found else []
        yield from (k for k in gc.get_referrers(*holders) if isinstance(k, type)) \
            if holders else ()
        found = [f for f in gc.get_referrers(*holders) if isinstance(f, types.FunctionType)] \
            if holders else []


def _user_class(value: Any) -> bool:
    """Whether ``value`` is a class with methods of the user's."""
    return isinstance(value, type) and any(
        (fn := innermost(v)) is not None and user_file(fn.__code__.co_filename)
        for v in list(vars(value).values()))


def _one_module(filename: str) -> bool:
    """Whether all code of this file runs in one namespace (not ``<string>``)."""
    return not filename.startswith("<") or filename.startswith(CELL_PREFIXES)


def user_entry(fn: Callable) -> types.FunctionType | None:
    """The user's function behind an entry: the first from a string, else in a user's file."""
    behind = list(functions_behind(fn))
    return next((f for f in behind if sourceless(f.__code__.co_filename)),
                next((f for f in behind if user_file(f.__code__.co_filename)), None))


def functions_behind(fn: Any, depth: int = 4) -> Iterator[types.FunctionType]:
    """The functions behind a callable, nearest first, through wrappers and closures."""
    queue: deque[tuple[Any, int]] = deque([(fn, 0)])
    seen: set[int] = set()
    while queue:
        obj, level = queue.popleft()
        if id(obj) in seen or level > depth:
            continue
        seen.add(id(obj))
        inner: list[Any]
        if isinstance(obj, types.FunctionType):
            yield obj
            inner = [getattr(obj, "__wrapped__", None), *closure_values(obj)]
        elif isinstance(obj, types.MethodType):
            inner = [obj.__func__]
        elif isinstance(obj, functools.partial):
            inner = [obj.func]
        else:
            inner = [getattr(obj, "__wrapped__", None),
                     getattr(type(obj), "__call__", None)]  # noqa: B004 (the class's own)
        queue.extend((i, level + 1) for i in inner
                     if callable(i) and not isinstance(i, type))

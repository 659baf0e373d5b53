"""Where a captured constant comes from: the user's source lines that read it (the
innermost user frame of the equations that read it), and the Python name that holds it.

The name is looked for among the globals and closure cells of the user's functions and
``self`` of the entry, and one step inside each. The jaxpr may hold a view (NumPy) or a
converted copy (float64 without x64) of the user's array, so a name is matched by
identity (or shared memory), else by the one candidate of equal shape and dtype, else of
equal shape and kind of number; with several candidates it is left unnamed.
"""

from __future__ import annotations

import functools
import gc
import itertools
import types
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from typing import Any
from typing import NamedTuple

import jax
import numpy as np

from ....usercode import user_file
from ...discovery.found import names_written
from ...discovery.live_objects import functions_behind
from ...lines.counts import Key
from ...lines.counts import UserCode
from .lifting import Constant

#: How a name was matched to a constant (``LiftedConstant.matched``).
SAME_OBJECT, SAME_SHAPE_DTYPE, SAME_SHAPE = "same object", "same shape and dtype", "same shape"
#: At most this many items of one container are looked at for arrays.
MOST_ITEMS = 100


class Named(NamedTuple):
    """An array the user's code reaches by ``name``."""

    name: str
    value: Any


def lines_of(constant: Constant, user: UserCode) -> tuple[Key, ...]:
    """The user lines that read ``constant`` (innermost user frame of each equation
    reading it; where that equation has none, of the one holding its jaxpr), in order."""
    keys = set()
    for traceback, outer in constant.reads:
        stack = user.stack(traceback) or user.stack(outer)
        if stack:
            keys.add(stack[0])
    return tuple(sorted(keys))


def reachable_arrays(entry: Any, functions: Iterable[Any],
                     codes: Iterable[types.CodeType]) -> list[Named]:
    """The arrays the user's code reaches by name (see the module's docstring), from the
    entry callable, the helpers' functions and the functions behind ``codes`` (those of
    the lines that read a constant), in that order."""
    found: list[Named] = []
    for name, value in itertools.chain(_selves(entry), _places(entry, functions, codes)):
        found.extend(_arrays_at(name, value))
    return found


def _places(entry: Any, functions: Iterable[Any],
            codes: Iterable[types.CodeType]) -> Iterator[tuple[str, Any]]:
    """(name, value) of the globals the user's functions look up and of their closures."""
    seen: set[types.CodeType] = set()
    for fn in _user_functions(entry, functions, codes):
        if fn.__code__ in seen:
            continue
        seen.add(fn.__code__)
        space = fn.__globals__
        yield from ((k, space[k]) for k in sorted(names_written(fn.__code__)) if k in space)
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
            try:
                yield name, cell.cell_contents
            except ValueError:  # an empty cell
                continue


def _user_functions(entry: Any, functions: Iterable[Any],
                    codes: Iterable[types.CodeType]) -> Iterator[types.FunctionType]:
    """The user's functions behind the entry and ``functions``, then those whose code is
    one of ``codes`` (asked of the garbage collector once, for them all)."""
    for fn in itertools.chain(functions_behind(entry), *(functions_behind(f) for f in functions)):
        if user_file(fn.__code__.co_filename):
            yield fn
    wanted = set(codes)
    if wanted:
        yield from (f for f in gc.get_referrers(*wanted)
                    if isinstance(f, types.FunctionType) and f.__code__ in wanted)


def _selves(entry: Any) -> Iterator[tuple[str, Any]]:
    """``("self", obj)`` for the object a bound-method entry is bound to, or a callable
    instance entry is, past wrappers and partials."""
    obj, depth = entry, 0
    while obj is not None and depth < 6:
        if isinstance(obj, types.MethodType):
            yield "self", obj.__self__
            return
        if isinstance(obj, functools.partial):
            obj = obj.func
        elif isinstance(obj, types.FunctionType):
            obj = getattr(obj, "__wrapped__", None)
        elif callable(obj) and hasattr(obj, "__dict__") and not isinstance(obj, type):
            inner = getattr(obj, "__wrapped__", None)
            if inner is None:
                yield "self", obj
                return
            obj = inner
        else:
            return
        depth += 1


def _arrays_at(name: str, value: Any) -> list[Named]:
    """The arrays at ``name``: the value itself, or one step inside it (an instance's
    attributes, a container's items, a user module's globals)."""
    if _is_array(value):
        return [Named(name, value)]
    if isinstance(value, dict):
        pairs = ((f"{name}[{k!r}]", v) for k, v in value.items())
    elif isinstance(value, list | tuple):
        pairs = ((f"{name}[{i}]", v) for i, v in enumerate(value))
    elif isinstance(value, types.ModuleType):
        if not user_file(getattr(value, "__file__", None) or "<"):
            return []
        pairs = ((f"{name}.{k}", v) for k, v in vars(value).items() if not k.startswith("_"))
    elif isinstance(value, type | types.FunctionType) or not hasattr(value, "__dict__"):
        return []
    else:
        try:
            attrs = dict(object.__getattribute__(value, "__dict__"))
        except Exception:  # noqa: BLE001 (an object that refuses its __dict__: nothing here)
            return []
        pairs = ((f"{name}.{k}", v) for k, v in attrs.items())
    return [Named(n, v) for n, v in itertools.islice(pairs, MOST_ITEMS) if _is_array(v)]


def _is_array(value: Any) -> bool:
    return isinstance(value, np.ndarray | jax.Array) and not isinstance(value, jax.core.Tracer)


def name_of(value: Any, named: Sequence[Named]) -> tuple[str | None, str | None]:
    """(the Python name of the constant ``value``, how it was matched), or (None, None)."""
    for how, same in ((SAME_OBJECT, _same_object), (SAME_SHAPE_DTYPE, _same_shape_dtype),
                      (SAME_SHAPE, _same_shape)):
        hits = [n for n in named if same(value, n.value)]
        objects = {id(n.value) for n in hits}
        if hits and (how == SAME_OBJECT or len(objects) == 1):
            return hits[0].name, how
        if hits:
            return None, None  # several arrays could be it: none is named
    return None, None


def _same_object(value: Any, candidate: Any) -> bool:
    if value is candidate:
        return True
    return (isinstance(value, np.ndarray) and isinstance(candidate, np.ndarray)
            and _same_shape_dtype(value, candidate) and np.may_share_memory(value, candidate))


def _same_shape_dtype(value: Any, candidate: Any) -> bool:
    return _same_shape(value, candidate) and np.dtype(value.dtype) == np.dtype(candidate.dtype)


def _same_shape(value: Any, candidate: Any) -> bool:
    """Whether ``value`` can be a converted copy of ``candidate``: the same shape, and a
    number of the same kind (float64 held as float32, say); never an object or string
    array, which JAX does not make a constant of."""
    kind, candidate_kind = np.dtype(value.dtype).kind, np.dtype(candidate.dtype).kind
    return (tuple(np.shape(value)) == tuple(np.shape(candidate)) and kind == candidate_kind
            and kind in NUMBER_KINDS)


#: NumPy's dtype kinds of numbers: booleans, signed and unsigned integers, floats, complex.
NUMBER_KINDS = "biufc"

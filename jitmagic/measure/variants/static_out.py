"""What in a nested helper's result carries its traced values where a jit cannot return
them: its static part (aux data, non-array leaves), fixed when traced. A ``distrax.Chain``
whose aux data holds ``partial(conditioner, params)``, ``params`` traced, hands the
caller a value of an ended trace, and the leak checker fails the helper's jit; the
result itself says which object holds it, so the reason is read, not guessed.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import jax

from ...model.notes import Leak
from ..calls.arrays import SCALARS
from ..discovery.found import closure_values

#: At most this many objects of a result's static part are looked at.
MAX_OBJECTS = 2_000


def static_holder(tree: Any, fixed: tuple) -> Leak | None:
    """Where a result flattened to ``tree`` with non-array leaves ``fixed`` holds a traced
    value (None: nowhere)."""
    seen: set[int] = set()
    result = _node_type(tree)
    for in_aux, values in ((True, _aux_data(tree)), (False, fixed)):
        for value in values:
            holder = _holder(value, seen)
            if holder is not None:
                return Leak("leak_static_held", result, in_aux, *holder)
    return None


def _node_type(tree: Any) -> str | None:
    """The class name of a result that is a registered pytree class (None: a container)."""
    data = tree.node_data()
    kind = data[0] if data is not None else None
    if kind is None or kind in (tuple, list, dict, type(None)):
        return None
    return kind.__name__


def _aux_data(tree: Any) -> list[Any]:
    """The aux data of every node of ``tree``, outermost first."""
    out, stack = [], [tree]
    while stack:
        node = stack.pop(0)
        data = node.node_data()
        if data is not None and data[1] is not None:
            out.append(data[1])
        stack += node.children()
    return out


def _holder(value: Any, seen: set[int]) -> tuple[str, str | None] | None:
    """The nearest function (or object) on the way from ``value`` to a traced value it
    holds, as :func:`_described` says it; None: it holds none."""
    stack: list[tuple[Any, Any]] = [(value, None)]
    while stack and len(seen) < MAX_OBJECTS:
        obj, owner = stack.pop()
        if isinstance(obj, jax.core.Tracer):
            return _described(owner) if owner is not None else ("traced", None)
        if id(obj) in seen or isinstance(obj, (*SCALARS, str, bytes, type, types.ModuleType)):
            continue
        seen.add(id(obj))
        owner = _nearer(obj, owner)
        stack += [(c, owner) for c in _children(obj)]
    return None


def _nearer(obj: Any, owner: Any) -> Any:
    """The object to name: the nearest function or partial on the way, else the nearest
    object that is not a container."""
    if isinstance(obj, functools.partial | types.FunctionType):
        return obj
    if isinstance(owner, functools.partial | types.FunctionType):
        return owner
    return owner if isinstance(obj, list | tuple | set | frozenset | dict) else obj


def _children(obj: Any) -> list[Any]:
    if isinstance(obj, jax.tree_util.PyTreeDef):  # distrax keeps its inner tree in aux data
        return _aux_data(obj)
    if isinstance(obj, functools.partial):
        return [obj.func, *obj.args, *obj.keywords.values()]
    if isinstance(obj, types.FunctionType):
        return [*closure_values(obj), *(obj.__defaults__ or ())]
    if isinstance(obj, list | tuple | set | frozenset):
        return list(obj)
    if isinstance(obj, dict):
        return list(obj.values())
    return list(getattr(obj, "__dict__", {}).values())



def _described(owner: Any) -> tuple[str, str]:
    """What holds a traced value nearest, and its name: ``("partial", "conditioner")``,
    ``("function", "f")`` or ``("object", "Holder")``."""
    if isinstance(owner, functools.partial):
        return "partial", getattr(owner.func, "__name__", type(owner.func).__name__)
    if isinstance(owner, types.FunctionType):
        return "function", owner.__name__
    return "object", type(owner).__name__

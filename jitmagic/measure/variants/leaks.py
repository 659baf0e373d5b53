"""How a helper's jit leaked traced values: from the chain of keepers JAX's leak checker names,
or from the result's static part (:func:`static_holder`)."""

from __future__ import annotations

import functools
import itertools
import re
import types
from typing import Any

import jax

from ...model.notes import Leak, Note
from ..calls.arguments import SCALARS
from ..discovery.found import held_values

#: One link of a leaked tracer's chain: the kept object's type, and what keeps it.
_LINK = re.compile(r"^<(\w+) \d+> is referred to by (.*)$")
#: What keeps an object: a module's global, a key of a function's globals, a closure.
_GLOBAL = re.compile(r"^[\w.]+$")
_NAMESPACE_KEY = re.compile(r"^<dict \d+>\['(\w+)'\]$")
_CLOSED_OVER = re.compile(r"\((\w+)\) closed-over variable (\w+)$")
#: Plain containers: the static part's own type is the first object outside them.
_CONTAINERS = {"list", "tuple", "dict", "OrderedDict", "DynamicJaxprTracer", "JitTracer"}
#: Libraries whose helpers use their caller's traced values unpassed, said in their terms.
_NOT_PASSED = ("haiku", "keras")


def library_of(helper: Any) -> str | None:
    """``haiku`` or ``keras`` where the helper is a method of a class of that library."""
    owners = [getattr(helper, "self_type", None),
              *(b.owner for b in getattr(helper, "bindings", ()))]
    for klass in (k for owner in owners for k in getattr(owner, "__mro__", ())):
        top = klass.__module__.split(".")[0]
        if top in _NOT_PASSED:
            return top
    return None


def leak_mechanism(error: BaseException, library: str | None = None) -> Note:
    """How the helper kept traced values, from the first leaked tracer's chain in JAX's message."""
    chain = _first_chain(str(error))
    holders = [keeper for _, keeper in chain]
    if any("separate_consts" in h for h in holders):
        return Leak("leak_not_passed", library if library in _NOT_PASSED else None)
    kept = [kind for kind, _ in chain]
    if "Holes" in kept:
        inside = [k for k in kept[: kept.index("Holes")] if k not in _CONTAINERS]
        return Leak("leak_static_output", inside[-1] if inside else None)
    for keeper, outer in itertools.pairwise([*holders, ""]):  # what keeps the keeper
        key = _NAMESPACE_KEY.match(keeper)
        if _GLOBAL.match(keeper) or (key and outer.startswith("<function ")):
            name = key.group(1) if key else keeper.removeprefix("__main__.")
            if "stack" in name.rsplit(".", 1)[-1].lower():
                return Leak("leak_handler_stack", name)
            return Leak("leak_global", name)
        closed = _CLOSED_OVER.search(keeper)
        if closed:
            return Leak("leak_closure", closed.group(1), closed.group(2))
    return Leak("leak_elsewhere")


def _first_chain(message: str) -> list[tuple[str, str]]:
    """The first leaked tracer's chain, (kept object's type, its keeper), outwards."""
    return next((links for block in message.split("\n\n")
                 if (links := [(m[1], m[2]) for m in map(_LINK.match, block.splitlines())
                               if m])), [])


#: At most this many objects of a result's static part are looked at.
MAX_OBJECTS = 2_000


def static_holder(tree: Any, fixed: tuple) -> Leak | None:
    """Where a result (``tree``, non-array leaves ``fixed``) holds a traced value."""
    seen: set[int] = set()
    kind = (tree.node_data() or (None,))[0]  # a registered pytree class's name, or None
    result = None if kind in (None, tuple, list, dict, type(None)) else kind.__name__
    for in_aux, values in ((True, _aux_data(tree)), (False, fixed)):
        for value in values:
            holder = _holder(value, seen)
            if holder is not None:
                return Leak("leak_static_held", result, in_aux, *holder)
    return None


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
    """The nearest function (or object) on the way from ``value`` to a traced value."""
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
    """The object to name: the nearest function or partial, else non-container."""
    if isinstance(obj, functools.partial | types.FunctionType):
        return obj
    if isinstance(owner, functools.partial | types.FunctionType):
        return owner
    return owner if isinstance(obj, list | tuple | set | frozenset | dict) else obj


def _children(obj: Any) -> list[Any]:
    if isinstance(obj, jax.tree_util.PyTreeDef):  # distrax keeps its inner tree in aux data
        return _aux_data(obj)
    return held_values(obj)


def _described(owner: Any) -> tuple[str, str]:
    """What holds a traced value nearest, and its name: ``("partial", "f")``, ..."""
    if isinstance(owner, functools.partial):
        return "partial", getattr(owner.func, "__name__", type(owner.func).__name__)
    if isinstance(owner, types.FunctionType):
        return "function", owner.__name__
    return "object", type(owner).__name__

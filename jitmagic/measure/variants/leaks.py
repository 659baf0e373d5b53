"""How a helper's jit leaked traced values, read off JAX's leak checker's message.

``jax.checking_leaks()`` names each leaked tracer's chain of keepers (``<list 1> is
referred to by __main__.seen``), which tells the mechanism: a global or closed-over list
the helper stored it in; an effect handler's stack (numpyro's ``_PYRO_STACK``); the
static part of the helper's result; or JAX's cache of a jit's constants, where the
helper used its caller's traced value without being passed it (a Keras layer inside
``stateless_call``, Haiku's ``hk.get_parameter``), worded by the helper's library
(:func:`library_of`). Where the helper's own jit saw its result's static part (aux data,
non-array leaves) holding a traced value (a ``distrax.Chain``'s
``partial(conditioner, params)``), the holder is read from the result itself
(:func:`static_holder`).
"""

from __future__ import annotations

import functools
import itertools
import re
import types
from typing import Any

import jax

from ...model.notes import Leak
from ...model.notes import Note
from ..calls.arguments import SCALARS
from ..discovery.found import closure_values

#: One link of a leaked tracer's chain: the kept object's type, and what keeps it.
_LINK = re.compile(r"^<(\w+) \d+> is referred to by (.*)$")
#: What keeps an object, where it is a module's global (``numpyro.handlers._PYRO_STACK``).
_GLOBAL = re.compile(r"^[\w.]+$")
#: ... where it is a key of a dict that a function then holds: its globals (a cell's).
_NAMESPACE_KEY = re.compile(r"^<dict \d+>\['(\w+)'\]$")
#: ... where it is a variable a function closes over.
_CLOSED_OVER = re.compile(r"\((\w+)\) closed-over variable (\w+)$")
#: Plain containers: the static part's own type is the first object outside them.
_CONTAINERS = {"list", "tuple", "dict", "OrderedDict", "DynamicJaxprTracer", "JitTracer"}


#: Libraries whose helpers use their caller's traced values without being passed them
#: in a way of their own, said in that library's terms (:mod:`jitmagic.render.notes`).
_NOT_PASSED = ("haiku", "keras")


def library_of(helper: Any) -> str | None:
    """``haiku`` or ``keras`` where the helper is a method of a class of that library
    (its ``self``'s class, or the class it is bound in), else None."""
    owners = [getattr(helper, "self_type", None),
              *(b.owner for b in getattr(helper, "bindings", ()))]
    for klass in (k for owner in owners for k in getattr(owner, "__mro__", ())):
        top = klass.__module__.split(".")[0]
        if top in _NOT_PASSED:
            return top
    return None


def leak_mechanism(error: BaseException, library: str | None = None) -> Note:
    """How the helper kept traced values (a :class:`~jitmagic.model.notes.Leak`), from the
    first leaked tracer's chain in JAX's message; the general one where it has no chain."""
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
    for block in message.split("\n\n"):
        links = [(m[1], m[2]) for m in map(_LINK.match, block.splitlines()) if m]
        if links:
            return links
    return []


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

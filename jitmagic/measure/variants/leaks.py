"""How a helper's jit leaked traced values, read off JAX's leak checker's message.

``jax.checking_leaks()`` names each leaked tracer's chain of keepers (``<list 1> is
referred to by __main__.seen``), which tells the mechanism: a global or closed-over list
the helper stored it in; an effect handler's stack (numpyro's ``_PYRO_STACK``); the
static part of the helper's result; or JAX's cache of a jit's constants, where the
helper used its caller's traced value without being passed it (a Keras layer inside
``stateless_call``, Haiku's ``hk.get_parameter``), worded by the helper's library
(:func:`library_of`).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from ...model.notes import Leak
from ...model.notes import Note

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
        links = [m.groups() for m in map(_LINK.match, block.splitlines()) if m]
        if links:
            return links
    return []

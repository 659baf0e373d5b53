"""Custom-derivative functions whose equations come from their rules alone.

Under ``jax.grad`` JAX runs a ``jax.custom_vjp`` function's rules instead of its body,
so a helper whose body builds no equation (``clip_gradient``) is in no frame discovery
reads; JAX's own ``__call__`` frame still sits between the user's call and the rules'
equations, and is read here, so such a helper is found and kept inline, with why.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import jax

from ...model.notes import Inline
from ..sampling.structure import distinct_jaxprs
from .bindings import Binding
from .call_graph import CallGraph
from .call_graph import _position
from .found import Found
from .found import as_called
from .found import code_of
from .found import helper_name
from .found import names_written

#: JAX's ``__call__`` of each custom-derivative class: its frame is on every equation a
#: call of such a function traces (its body's, or its rules').
_CALLS = {inspect.unwrap(kind.__call__).__code__: kind
          for kind in (jax.custom_vjp, jax.custom_jvp)}
#: The primitives that hold a custom function's body and rules (their equations count).
_HOLDERS = frozenset({"custom_vjp_call", "custom_jvp_call"})


@dataclass
class RuleCalls:
    """What calls of custom-derivative functions from one user function traced."""

    equations: int = 0
    #: The call sites (source positions in the caller) the equations were traced at.
    sites: set[Any] = field(default_factory=set)


def custom_calls(jaxpr: Any, is_user: Callable[[types.CodeType], bool],
                 ) -> dict[tuple[types.CodeType, type], RuleCalls]:
    """By (the user function that called one, the custom class): the equations traced
    under JAX's ``__call__`` of a custom_vjp or custom_jvp function, sub-jaxprs included."""
    out: dict[tuple[types.CodeType, type], RuleCalls] = {}
    for current in distinct_jaxprs(jaxpr):
        for eqn in current.eqns:
            if eqn.primitive.name in _HOLDERS or eqn.source_info.traceback is None:
                continue
            found = _caller(eqn.source_info.traceback, is_user)
            if found is not None:
                key, site = found
                calls = out.setdefault(key, RuleCalls())
                calls.equations += 1
                calls.sites.add(site)
    return out


def _caller(tb: Any, is_user: Callable[[types.CodeType], bool],
            ) -> tuple[tuple[types.CodeType, type], Any] | None:
    """((the user function, the custom class), its call site) of the innermost custom
    call on a traceback; None where it holds none, or no user frame calls it."""
    codes, offsets = tb.raw_frames()
    for i, code in enumerate(codes):
        kind = _CALLS.get(code)
        if kind is not None:
            for outer, offset in zip(codes[i + 1:], offsets[i + 1:], strict=True):
                if is_user(outer):
                    return (outer, kind), _position(outer, offset)
            return None
    return None


def rules_only(calls: dict[tuple[types.CodeType, type], RuleCalls], graph: CallGraph,
               namespaces: Callable[[types.CodeType], dict[str, Any] | None],
               known: Iterable[types.CodeType], entry_module: str | None) -> list[Found]:
    """The custom functions user functions call by a global name whose body built no
    equation (not in ``graph`` nor ``known``) though their rules did, each with why it
    stays inline (``Found.rules_only``)."""
    out, done = [], set(known)
    for (caller, kind), traced in calls.items():
        space = namespaces(caller) or {}
        named = [(k, v) for k in sorted(names_written(caller))
                 if isinstance(v := space.get(k), kind)
                 and (c := code_of(v)) is not None and c not in graph.functions
                 and c not in done]
        for key, fn in named:
            code = code_of(fn)
            assert code is not None  # checked above
            done.add(code)
            binding = Binding(space, key)
            found = Found(helper_name(code, space.get("__name__"), entry_module), code,
                          len(traced.sites), [binding])
            found.name = as_called(found.name, code, binding)
            found.rules_only = _why(fn, caller, traced if len(named) == 1 else None)
            out.append(found)
    return out


def _why(fn: Any, caller: types.CodeType, traced: RuleCalls | None) -> Inline:
    """Why a custom function whose rules alone add equations stays inline: its rules by
    name, and what they add where (``traced``: counted for this function alone)."""
    equations = traced.equations if traced else None
    sites = len(traced.sites) if traced else 0
    kind, rules = (("custom_vjp", ("fwd", "bwd")) if isinstance(fn, jax.custom_vjp)
                   else ("custom_jvp", ("jvp",)))
    names = tuple(getattr(getattr(fn, r, None), "__name__", r) for r in rules)
    return Inline("inline_rules_only", kind, names, equations, sites, caller.co_name)

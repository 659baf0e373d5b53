"""The JAX loops of a traced program (``jax.lax.scan``, ``fori_loop``, ``while_loop``), by
the user line that calls each, with the scan equation's own ``unroll``.

A scan's ``unroll`` is in its parameters, not the jaxpr's size (XLA gets that many
copies of the body per step); read here so the causes can name it, and so a line that
calls a JAX loop is never taken for a Python loop to rewrite.
"""

from __future__ import annotations

import dataclasses
import linecache
from typing import Any

from ...model.lines import LoopCall
from ..sampling.structure import count_equations
from .counts import UserCode
from .counts import owned_jaxprs

#: The loop primitives, and the jaxpr parameters that hold their bodies.
_BODIES = {"scan": ("jaxpr",), "while": ("cond_jaxpr", "body_jaxpr")}


def loop_calls(jaxpr: Any, user: UserCode) -> tuple[LoopCall, ...]:
    """The JAX loops of ``jaxpr``, one per user line and form (a library's loop at the
    user's call), with how many calls the line made and all their distinct bodies'
    equations (one call's body alone read 42% where the bodies built 85%)."""

    order, owner = owned_jaxprs(jaxpr, user)
    calls: dict[LoopCall, int] = {}
    bodies: dict[LoopCall, dict[int, int]] = {}
    for j in order:
        for eqn in j.eqns:
            names = _BODIES.get(eqn.primitive.name)
            if names is None:
                continue
            stack = user.stack(eqn.source_info.traceback)
            key = stack[0] if stack else owner[id(j)]
            if key is None:
                continue
            form = _loop_call(eqn, key)
            calls[form] = calls.get(form, 0) + 1
            bodies.setdefault(form, {}).update(
                (id(eqn.params[n]), count_equations(eqn.params[n])) for n in names
                if n in eqn.params)
    return tuple(dataclasses.replace(form, body_eqns=sum(bodies[form].values()),
                                     calls=n) for form, n in calls.items())


def _loop_call(eqn: Any, key: tuple[str, int]) -> LoopCall:
    """One loop equation as a :class:`LoopCall` (its bodies not yet counted), named as
    the user wrote it."""
    file, line = key
    scan = eqn.primitive.name == "scan"
    written = "fori_loop" if "fori_loop" in linecache.getline(file, line) else \
        "scan" if scan else "while_loop"
    unroll = eqn.params.get("unroll", 1) if scan else 1
    length = eqn.params.get("length") if scan else None
    return LoopCall(file, line, written, None if length is None else int(length),
                    max(1, int(unroll)), 0)

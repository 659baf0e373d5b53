"""The JAX loops of a traced program (``jax.lax.scan``, ``fori_loop``, ``while_loop``), by
the user line that calls each, with the scan equation's own ``unroll``.

A scan's ``unroll`` is in its equation's parameters, not in the jaxpr's size: the body
is traced once whatever it is, and XLA is handed that many copies of it in each step of
the compiled loop. ``--lines`` reads it here so that the causes can name it, and so that
a line that calls a JAX loop is never taken for a Python loop to rewrite as one.
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
    """The JAX loops of ``jaxpr`` (each distinct sub-jaxpr read once), each by its user
    line (that of the user's call into a library where the loop is the library's); one
    entry per line and form, holding every call the line made: how many, and their
    bodies' equations together (each distinct body once, as the table counts them). A
    line called twice gave one call's body as the program's share: 42% where its bodies
    built 85%."""
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

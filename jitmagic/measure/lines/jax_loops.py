"""The JAX loops of a traced program (``jax.lax.scan``, ``fori_loop``, ``while_loop``), by
the user line that calls each, with the scan equation's own ``unroll``.

A scan's ``unroll`` is in its equation's parameters, not in the jaxpr's size: the body
is traced once whatever it is, and XLA is handed that many copies of it in each step of
the compiled loop. ``--lines`` reads it here so that the causes can name it, and so that
a line that calls a JAX loop is never taken for a Python loop to rewrite as one.
"""

from __future__ import annotations

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
    entry per line and form."""
    order, owner = owned_jaxprs(jaxpr, user)
    found: list[LoopCall] = []
    for j in order:
        for eqn in j.eqns:
            bodies = _BODIES.get(eqn.primitive.name)
            if bodies is None:
                continue
            stack = user.stack(eqn.source_info.traceback)
            key = stack[0] if stack else owner[id(j)]
            if key is None:
                continue
            found.append(_loop_call(eqn, key, bodies))
    return tuple(dict.fromkeys(found))


def _loop_call(eqn: Any, key: tuple[str, int], bodies: tuple[str, ...]) -> LoopCall:
    """One loop equation as a :class:`LoopCall`, named as the user wrote it."""
    file, line = key
    scan = eqn.primitive.name == "scan"
    written = "fori_loop" if "fori_loop" in linecache.getline(file, line) else \
        "scan" if scan else "while_loop"
    unroll = eqn.params.get("unroll", 1) if scan else 1
    length = eqn.params.get("length") if scan else None
    body = sum(count_equations(eqn.params[name]) for name in bodies if name in eqn.params)
    return LoopCall(file, line, written, None if length is None else int(length),
                    max(1, int(unroll)), body)

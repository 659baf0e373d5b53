"""Eager operations JAX ledgers under a name of its own internals, named by what the user wrote, and
said once what they are."""

from __future__ import annotations

import re

from ...model.ledger.rows import FunctionRow

#: JAX's name of an eager op → the last names of the calls users write that run it.
WRITTEN = {"stage": ("asarray", "array")}
#: What each of them is, in words (said once, under the table).
EXPLAINED = {
    "stage": "`stage` is JAX's own op behind `jnp.array` and `jnp.asarray` of a Python number "
             "or a NumPy array: it copies the value onto the device, and compiles once per "
             "shape and dtype (calls with the same shape and dtype reuse it)",
}
#: A call as written: its dotted name (``jnp.asarray``, ``jax.numpy.array``) then ``(``.
_CALL = re.compile(r"((?:[A-Za-z_]\w*\.)*)([A-Za-z_]\w*)\s*\(")
#: Prefixes of NumPy's own ``array``/``asarray``, which compile nothing.
_NUMPY = ("np", "numpy", "onp")


def written_as(function: str, call_text: str | None) -> str | None:
    """The call on the user's line that ran JAX's eager op ``function`` (``jnp.asarray``); None
    where ``function`` is not one JAX names by its internals, or no such call is there."""
    names = WRITTEN.get(function)
    if not names or not call_text:
        return None
    for m in _CALL.finditer(call_text):
        prefix, name = m[1].rstrip("."), m[2]
        if name in names and prefix.rsplit(".", 1)[-1] not in _NUMPY:
            return f"{prefix}.{name}" if prefix else name
    return None


def shown(function: str, call_text: str | None) -> str:
    """An eager op's name as shown: what the user wrote, JAX's name beside it
    (``jnp.asarray (stage)``), or JAX's name alone."""
    written = written_as(function, call_text)
    return f"{written} ({function})" if written else function


def explanations(rows: list[FunctionRow]) -> list[str]:
    """What each eager op of ``rows`` that JAX names by its internals is (once each)."""
    return [EXPLAINED[f] for f in dict.fromkeys(r.function for r in rows if r.eager)
            if f in EXPLAINED]

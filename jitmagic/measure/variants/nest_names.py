"""``--nest`` names resolved to the helpers found: as named, by last part, or as written."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterable
from typing import Any

from ...errors import InputError
from ..discovery.found import code_of
from .plan import Helper
from .plan import Plan


def check_nest(nest: Iterable[str] | None, plan: Plan) -> tuple[str, ...] | None:
    """``--nest`` names as the helpers' own names (``mylayers.dense``), each given as that
    name, its last dotted part (``dense``) or as the call site writes it (``L.dense``);
    a name that is unknown, ambiguous, or names a helper that cannot be nested is refused."""
    if nest is None:
        return None
    resolved = tuple(_nest_name(n, plan) for n in nest)
    for given, name in zip(nest, resolved, strict=True):
        why = plan.helpers[name].why_inline
        if why:
            shown = name if given == name else f"{given} (`{name}`)"
            raise InputError(f"--nest {shown}: this helper cannot be nested: {why}.")
    return resolved


def _nest_name(given: str, plan: Plan) -> str:
    if given in plan.helpers:
        return given
    short = given.rsplit(".", 1)[-1]
    written = _written(given, plan.namespace)
    matches = [n for n, h in plan.helpers.items()
               if (written is not None and _names(written, h))
               or ("." not in given and n.rsplit(".", 1)[-1].split("#")[0] == short)]
    if len(matches) == 1:
        return matches[0]
    listed = ", ".join(f"`{n}`" for n in plan.helpers)
    helpers = f"its helpers are {listed}" if listed else "it calls no helper of yours"
    if matches:
        found = ", ".join(f"`{n}` ({_where(plan.helpers[n])})" for n in matches)
        raise InputError(f"--nest {given} could be any of {found}: write one of these names, "
                         f"or the module's full path (`package.module.{short}`).")
    raise InputError(f"--nest names `{given}`, which `{plan.name}` does not call; {helpers}.")


def _where(helper: Helper) -> str:
    """``enc/layers.py:2``: where a helper is defined, by its file's last two parts."""
    path = helper.code.co_filename.replace("\\", "/").split("/")
    return f"{'/'.join(path[-2:])}:{helper.code.co_firstlineno}"


def _names(value: Any, helper: Helper) -> bool:
    """Whether ``value`` (what a ``--nest`` name names) is ``helper``: it runs its code,
    or it is what one of its bindings holds (a shared decorator's wrapper of it)."""
    return code_of(value) is helper.code or any(value is b.original for b in helper.bindings)


def _written(given: str, namespace: dict[str, Any]) -> Any:
    """What ``given`` (``L.block``, ``MLP.layer``, or a module's full path
    ``enc.layers.dense``) names in ``namespace`` or among the imported modules (None:
    nothing)."""
    parts = given.split(".")
    value = namespace.get(parts[0])
    rest = parts[1:]
    if value is None:  # a module's full path: the longest one imported
        at = next((i for i in range(len(parts) - 1, 0, -1)
                   if ".".join(parts[:i]) in sys.modules), None)
        value = None if at is None else sys.modules[".".join(parts[:at])]
        rest = parts[at:] if at is not None else []
    for part in rest:
        value = inspect.getattr_static(value, part, None) if value is not None else None
    return value

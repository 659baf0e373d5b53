"""The entry of ``jitmagic.lines`` without a discovery trace, where none is needed.

A program whose trace runs no user function but the entry has no helper to nest (flat
and nested are one program), so ``lines`` first traces the entry as ``plan_entry``
would take it, and runs ``plan_entry``'s discovery only when that trace shows another
user function, or for Equinox or NNX modules in the arguments.
"""


from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from ...model.lines import LineTable
from ..calls.arguments import check_arguments
from ..calls.arguments import static_split
from ..discovery.bindings import installing
from ..variants.entry import _holds_module
from ..variants.entry import resolve_entry
from ..variants.entry import user_globals
from ..variants.plan import Plan

#: Code that runs inside its own function's frame but is no helper of its own.
_NOT_HELPERS = ("<genexpr>", "<listcomp>", "<dictcomp>", "<setcomp>")


def helperless_plan(fn: Callable, args: tuple, kwargs: dict[str, Any]) -> Plan | None:
    """The plan ``plan_entry`` makes for an entry without helpers, without its trace;
    None where the entry holds framework modules (``plan_entry`` must split them)."""
    resolved = resolve_entry(fn)
    if resolved.filtered or _holds_module("flax.nnx", (resolved.fn, args, kwargs)) or (
            resolved.jit_options is None and _holds_module("equinox", (args, kwargs))):
        return None
    check_arguments(resolved.name, args, kwargs)
    opts = resolved.jit_options or static_split(args, kwargs)
    return Plan(installing(resolved.fn, []), resolved.name, {}, opts, [], args, kwargs,
                user_globals(resolved.fn) or {})


def runs_other_functions(table: LineTable, entry: types.CodeType | None) -> bool:
    """Whether the traced program ran a function of the user's besides ``entry`` (not
    counting comprehensions and generator expressions)."""
    where = (entry.co_filename, entry.co_firstlineno) if entry is not None else None
    return any((f.file, f.first_line) != where for f in table.functions
               if f.name.rsplit(".", 1)[-1] not in _NOT_HELPERS)

"""The records a variant is built from: the helpers found, the planned entry, a variant;
and ``--nest`` names resolved to the helpers found."""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ...errors import InputError
from ...model.notes import Note, Noted
from ..discovery.bindings import Binding, jit_label
from ..discovery.found import code_of
from .inner_jit import is_user_jit

JIT_OPTIONS = ("static_argnums", "static_argnames", "donate_argnums", "donate_argnames",
               "inline", "keep_unused")


@dataclass(frozen=True)
class Helper:
    """A user function the discovery trace called from user code."""

    name: str
    #: Its call sites in the flat program (not its Python calls: a site in a loop is one).
    call_sites: int
    bindings: tuple[Binding, ...]
    #: Its code (nested at its function object; ``--nest`` matches it as written).
    code: types.CodeType = field(compare=False, repr=False)
    #: Why it cannot get a jit of its own (None: it can).
    why_inline: Note | None = None
    #: A Flax linen module class whose ``__call__`` this is: nested as ``nn.jit(cls)``.
    linen_class: type | None = field(default=None, compare=False, repr=False)
    #: The library primitive that holds and runs it (``lineax's `linear_solve```).
    held_by: str | None = None
    #: The class of a method's ``self``: the library a reason is worded for.
    self_type: type | None = field(default=None, compare=False, repr=False)
    #: A Pallas kernel body (a function of memory references ``pallas_call`` runs).
    kernel: bool = False

    @property
    def jit_names(self) -> set[str]:
        """What its jit is called in a jaxpr: jitmagic's, the user's own, or linen's ``core_fn``."""
        names = {jit_label(self.name)} | ({self.code.co_name} if self.user_jitted else set())
        return names | ({"core_fn"} if self.linen_class is not None else set())

    @property
    def user_jitted(self) -> bool:
        return any(is_user_jit(b.original) for b in self.bindings)


@dataclass
class Plan:
    """The entry resolved, how the outer jit takes its arguments, and its helpers."""

    fn: Callable
    name: str
    helpers: dict[str, Helper]
    jit_options: dict[str, Any]
    notes: list[Noted] = field(default_factory=list)
    #: The arguments the variants take (an ``eqx.filter_jit`` entry's: its array leaves).
    args: tuple = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    #: The globals of the user's entry function: where ``--nest L.block`` looks up ``L``.
    namespace: dict[str, Any] = field(default_factory=dict)
    #: Whether the flat program traced (the discovery trace raised nothing).
    flat_traces: bool = True
    #: The ``in_shardings`` of the user's own ``jax.jit`` on the entry, as given (None:
    #: none): ``--target`` places the arguments by them.
    in_shardings: Any = None


@dataclass
class Variant:
    """One way to run the entry: its bindings swapped in while it runs."""

    name: str
    fn: Callable
    plan: Plan
    planned: tuple[str, ...] = ()
    notes: list[Noted] = field(default_factory=list)
    jit_options: dict[str, Any] = field(default_factory=dict)
    ran: set[str] = field(default_factory=set)
    #: Helpers found that this variant keeps inline because they cannot be nested.
    inline: tuple[str, ...] = ()
    #: Planned helpers that run under the user's own ``jax.jit`` (not one jitmagic added).
    own_jit: tuple[str, ...] = ()

    @property
    def nested_helpers(self) -> tuple[str, ...]:
        """The helpers whose jit really ran (a binding nobody looked up nests nothing)."""
        return tuple(n for n in self.planned if n in self.ran)


def check_nest(nest: Iterable[str] | None, plan: Plan) -> tuple[str, ...] | None:
    """``--nest`` names as the helpers' own names; unknown or ambiguous ones are refused."""
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
    """Whether ``value`` (what a ``--nest`` name names) is ``helper`` or one of its bindings'."""
    return code_of(value) is helper.code or any(value is b.original for b in helper.bindings)


def _written(given: str, namespace: dict[str, Any]) -> Any:
    """What ``given`` (``L.block``, ``MLP.layer``) names in ``namespace`` (None: nothing)."""
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

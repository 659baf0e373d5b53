"""The records a variant is built from: the helpers found, the planned entry, a variant."""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from ...model.notes import Note
from ...model.notes import Noted
from ..discovery.bindings import Binding
from ..discovery.bindings import jit_label
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
    #: Its code (how it is nested at its function object, and how ``--nest`` matches a
    #: name as the call site writes it).
    code: types.CodeType = field(compare=False, repr=False)
    #: Why it cannot get a jit of its own (None: it can).
    why_inline: Note | None = None
    #: A Flax linen module class whose ``__call__`` this is: nested as ``nn.jit(cls)``.
    linen_class: type | None = field(default=None, compare=False, repr=False)
    #: The library primitive that holds it and runs it itself (``lineax's
    #: `linear_solve```), where the program shows it only there.
    held_by: str | None = None
    #: The class of a method's ``self`` (None: not a method, or not seen): what library
    #: a reason is worded for (:func:`~.leaks.library_of`).
    self_type: type | None = field(default=None, compare=False, repr=False)
    #: A Pallas kernel body (a function of memory references ``pallas_call`` runs).
    kernel: bool = False

    @property
    def jit_names(self) -> set[str]:
        """What its jit is called in a jaxpr: jitmagic's is named after the helper, the
        user's own ``jax.jit`` after the function it wraps, linen's lifted jit
        ``core_fn``."""
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
    #: The arguments the variants take: the call's own, or (for an ``eqx.filter_jit``
    #: entry) its array leaves alone, the other leaves fixed in ``fn``.
    args: tuple = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    #: The globals of the user's entry function: where ``--nest L.block`` looks up ``L``.
    namespace: dict[str, Any] = field(default_factory=dict)
    #: Whether the flat program traced (the discovery trace raised nothing).
    flat_traces: bool = True
    #: The ``in_shardings`` of the user's own ``jax.jit`` on the entry, as they gave them (a
    #: sharding, or a tuple with one per positional argument; None: they gave none):
    #: ``--target`` places the arguments on the topology's devices by them.
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



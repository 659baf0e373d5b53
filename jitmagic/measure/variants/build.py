"""Flat and nested variants of one entry: what every binding of a helper holds while it runs (flat:
the user's jits off; nested: a jit each), restored in ``finally``."""

from __future__ import annotations

import gc
import types
from collections.abc import Callable, Iterable
from typing import Any

from ...model.notes import Inline, Note, Noted, Taken
from ...usercode import user_file
from ..discovery.bindings import Binding, CellOf, installing, jit_label
from ..discovery.found import functions_of, functions_of_all
from . import inner_jit, trampoline
from .plan import Helper, Plan, Variant

#: ``replace(helper, original)`` gives what a binding holds in a variant (None: unchanged).
Replace = Callable[[Helper, Any], Any]


def make_variant(label: str, plan: Plan, replace: Replace,
                 planned: tuple[str, ...] = (), swaps: list | None = None,
                 blame: str | None = None) -> Variant:
    """The variant whose bindings hold ``replace(helper, original)`` while the entry runs."""
    variant = Variant(label, plan.fn, plan, planned, list(plan.notes), dict(plan.jit_options))
    swaps = [*(swaps or ()), *((b, b.original, new) for h in plan.helpers.values()
                               for b in h.bindings if (new := replace(h, b.original)) is not None)]
    variant.fn = installing(plan.fn, swaps, blame)
    return variant


def build_variant(name: str, plan: Plan, nest: Iterable[str] | None = None) -> Variant:
    """The ``flat`` or ``nested`` variant; ``nest`` limits the jits the tool adds."""
    if name == "flat":
        return make_variant(name, plan, lambda h, v: inner_jit.unjit(v) if h.user_jitted else None)
    if name != "nested":
        raise ValueError(f"unknown variant {name!r}")
    chosen = None if nest is None else set(nest)
    picked = tuple(h.name for h in plan.helpers.values()
                   if h.user_jitted or chosen is None or h.name in chosen)
    return nest_only(plan, picked, name)


def nest_only(plan: Plan, nest: Iterable[str], label: str, refused: dict[str, Note] | None = None,
              call_as: inner_jit.CallAs | None = None) -> Variant:
    """Flat except for the helpers in ``nest``, each under its own jit where it can be."""
    nest = tuple(nest)
    why, lifted = _kept_inline(plan, nest, refused, call_as)
    inline = tuple(why)
    notes: list[Noted] = [*plan.notes, *(Taken("stays_inline", n, w) for n, w in why.items())]
    ran: set[str] = set()
    planned = tuple(n for n in nest if n not in why)
    # the functions the entry runs itself are never routed (shared code)
    own = [f for f in trampoline.unwrapping(plan.fn) if isinstance(f, types.FunctionType)]
    held = _held_places(plan, [n for n in planned if n not in lifted], notes, ran, call_as)
    routed = [n for n in planned if n not in lifted and n not in held
              and (call_as is not None or not _callers_see_user_jit(plan.helpers[n]))]
    live = functions_of_all(plan.helpers[n].code for n in routed)
    routes = {n: [f for f in live[plan.helpers[n].code] if f not in own] for n in routed}
    replace = _nested_replace(planned, lifted, routes, notes, ran, call_as)
    swaps = [trampoline.route(fn, _helper_jit(plan.helpers[n], fn, notes, ran, call_as))
             for n, fns in routes.items() for fn in fns]
    swaps += [s for n in planned for s in lifted.get(n, ())]
    swaps += [s for cells in held.values() for s in cells]
    blame = _blame(planned, [n for n, fns in routes.items() if fns]) \
        if planned and plan.flat_traces else None
    built = make_variant(label, plan, replace, planned, swaps, blame)
    built.notes, built.ran, built.inline = notes, ran, inline
    built.own_jit = () if call_as is not None else tuple(  # out of line: jitmagic's jit
        n for n in planned if plan.helpers[n].user_jitted and not routes.get(n))
    return built


def _kept_inline(plan: Plan, nest: tuple[str, ...], refused: dict[str, Note] | None,
                 call_as: inner_jit.CallAs | None,
                 ) -> tuple[dict[str, Note], dict[str, list[tuple[Any, Any, Any]]]]:
    """The helpers of ``nest`` that stay inline, with why, and the linen classes lifted."""
    why = {n: w for n in nest if (w := plan.helpers[n].why_inline)}
    why |= refused or {}
    if call_as is not None:
        why |= {n: Inline("inline_flax_jit") for n in nest if n not in why and (
            (h := plan.helpers[n]).linen_class is not None
            or bool(h.bindings and inner_jit.is_nnx_class(h.bindings[0].owner)))}
    lifted = {n: linen_swaps(plan.helpers[n], plan.namespace) for n in nest
              if n not in why and plan.helpers[n].linen_class is not None}
    why |= {n: Inline("inline_linen_unnamed") for n, places in lifted.items() if not places}
    return why, lifted


def _nested_replace(planned: tuple[str, ...], lifted: dict[str, Any],
                    routes: dict[str, list[types.FunctionType]], notes: list[Noted],
                    ran: set[str], call_as: inner_jit.CallAs | None) -> Replace:
    """What each helper's bindings hold nesting ``planned``."""

    def replace(h: Helper, original: Any) -> Any:
        if h.name not in planned:
            return inner_jit.unjit(original) if h.user_jitted else None
        if h.name in lifted or (h.name in routes and routes[h.name]):
            return None  # nested at its class's name or its function object (below)
        if h.user_jitted and call_as is None:
            return None  # the user's own jit, where its callers look it up
        if inner_jit.is_nnx_class(h.bindings[0].owner):
            return inner_jit.nnx_method(original, h.name, ran)
        return inner_jit.unjitted(original, lambda f: inner_jit.faithful_jit(
            f, h.name, notes, ran, call_as))

    return replace


#: The note of an error raised in the nested variant where the flat program traces.
NESTING_CAUSED = ("jitmagic: the flat program traces, so nesting caused this error: in the "
                  "nested variant {} each ran under a jit of its own (its arguments tracers "
                  "inside it){}")

#: Added to :data:`NESTING_CAUSED` where helpers were nested at their function objects.
ROUTED = ("; while your code ran, the `__code__` of {} was jitmagic's trampoline to that jit "
          "(same signature, argument names and defaults; another code object, file and "
          "source)")


def _blame(planned: tuple[str, ...], routed: list[str]) -> str:
    names = ", ".join(f"`{n}`" for n in planned)
    return NESTING_CAUSED.format(names, ROUTED.format(", ".join(f"`{n}`" for n in routed))
                                 if routed else "")


def _held_places(plan: Plan, names: list[str], notes: list[Noted], ran: set[str],
                 call_as: inner_jit.CallAs | None) -> dict[str, list[tuple[Any, Any, Any]]]:
    """The primitive-held helpers a user's closure cell holds, with swaps jitting those cells."""
    held = {n: [(CellOf(cell), fn, inner_jit.faithful_jit(fn, n, notes, ran, call_as))
                for fn in functions_of(plan.helpers[n].code)
                for cell in closure_cells(fn)]
            for n in names if plan.helpers[n].held_by is not None}
    return {n: cells for n, cells in held.items() if cells or plan.helpers[n].bindings}


def _callers_see_user_jit(h: Helper) -> bool:
    """Every place the helper is looked up holds the user's own ``jax.jit`` of it."""
    return bool(h.bindings) and all(inner_jit.is_user_jit(b.original) for b in h.bindings)


def _helper_jit(h: Helper, fn: types.FunctionType, notes: list[Noted], ran: set[str],
                call_as: inner_jit.CallAs | None = None) -> Callable:
    """What a call of ``fn`` runs nested: a jit of a copy of it."""
    copy = trampoline.copy_function(fn)
    copy.__name__ = copy.__qualname__ = jit_label(h.name)  # what its jit is called
    if inner_jit.is_nnx_class(h.bindings[0].owner if h.bindings else None):
        return inner_jit.nnx_method(copy, h.name, ran)
    return inner_jit.faithful_jit(copy, h.name, notes, ran, call_as)


def linen_swaps(h: Helper, namespace: dict[str, Any]) -> list[tuple[Any, Any, Any]]:
    """Every global and closure cell naming the helper's linen class, bound to its ``nn.jit``."""
    from flax import linen as nn

    cls = h.linen_class
    assert cls is not None
    lifted = nn.jit(cls)
    lifted.__name__, lifted.__qualname__ = cls.__name__, cls.__qualname__
    spaces = [namespace, *(f.__globals__ for f in functions_of(h.code))]
    places: list[Any] = list({Binding(ns, k) for ns in spaces for k, v in list(ns.items())
                              if v is cls})
    places += [CellOf(c) for c in closure_cells(cls)]
    return [(b, cls, lifted) for b in places]


def closure_cells(value: Any) -> list[types.CellType]:
    """The closure cells of the user's functions naming ``value`` (not ``__class__``)."""
    cells = [cell for cell in gc.get_referrers(value) if isinstance(cell, types.CellType)
             for closure in gc.get_referrers(cell) if isinstance(closure, tuple)
             for fn in gc.get_referrers(closure) if isinstance(fn, types.FunctionType)
             and fn.__closure__ is closure and user_file(fn.__code__.co_filename)
             and fn.__code__.co_freevars[closure.index(cell)] != "__class__"]
    return list({id(c): c for c in cells}.values())

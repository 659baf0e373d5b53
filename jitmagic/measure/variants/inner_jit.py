"""The jit a helper gets in the nested variant, ``nnx.jit`` for NNX methods, and the user's own
jit recognised and taken off."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax

from ..._compat import jit_info
from ...model.notes import Note, Noted, Taken
from ..calls.arguments import SCALAR_MISUSE, SCALARS, Holes, hashable, holds_arrays, is_array
from ..discovery.bindings import jit_label
from .leaks import static_holder


def is_nnx_class(owner: Any) -> bool:
    """A Flax NNX module class: its methods must be jitted by ``nnx.jit`` (graph state)."""
    return isinstance(owner, type) and any(
        k.__name__ == "Module" and k.__module__ == "flax.nnx.module" for k in owner.__mro__)


def nnx_method(original: Callable, name: str, ran: set[str]) -> Callable:
    """A plain function calling ``nnx.jit(original)`` (so that it binds ``self``)."""
    from flax import nnx

    jitted = nnx.jit(original)

    @functools.wraps(original)
    def method(self, *args, **kwargs):
        ran.add(name)
        return jitted(self, *args, **kwargs)

    method.__dict__.pop("__wrapped__", None)
    return method


def unjit(value: Any) -> Any:
    """A user's ``jax.jit`` taken off (the plain function it wraps)."""
    return value.__wrapped__ if is_user_jit(value) else value


def unjitted(original: Any, wrap: Callable[[Callable], Callable]) -> Any:
    """``wrap`` applied to a bound value with any user jit taken off, keeping a
    ``staticmethod`` a staticmethod."""
    original = unjit(original)
    if isinstance(original, staticmethod | classmethod):
        return type(original)(wrap(original.__func__))
    return wrap(original)


#: The attribute an exception raised inside a helper's jit carries: the helper's name.
HELPER_TAG = "jitmagic_helper"
#: And, where its body returned, where its result's static part holds traced values
#: (:func:`~.leaks.static_holder`).
STATIC_TAG = "jitmagic_static_out"
#: How a helper's jit is called instead of directly: ``call_as(jitted, name)``.
CallAs = Callable[[Callable, str], Callable]


def faithful_jit(fn: Callable, name: str, notes: list[Noted], ran: set[str],
                 call_as: CallAs | None = None) -> Callable:
    """``fn`` under a jit taking its arguments as ``jax.jit`` does; else inline, noted."""
    programs: dict[Any, Callable] = {}  # one per argument structure and static leaves
    static_scalars: set[Any] = set()  # argument structures whose scalars must be static

    @functools.wraps(fn)
    def call(*args, **kwargs):
        leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
        scalars = tree not in static_scalars and any(isinstance(x, SCALARS) for x in leaves)
        for traced in (_traced_with_scalars, is_array) if scalars else (is_array,):
            holes, arrays = Holes.of(leaves, traced)
            key = (tree, tuple((i, type(x), x) for i, x in enumerate(leaves) if not traced(x)))
            why = _why_not_jit(name, leaves, key)
            if why:
                _note_once(notes, why)
                return fn(*args, **kwargs)
            if key not in programs:
                programs[key] = _leaf_program(fn, name, tree, holes, call_as)
            try:
                out = programs[key](arrays)
            except SCALAR_MISUSE as exc:
                if traced is is_array:
                    raise
                static_scalars.add(tree)
                _note_once(notes, Taken("helper_scalars_static", name, type(exc).__name__))
                continue
            ran.add(name)
            return out
        raise AssertionError("unreachable: the last attempt (scalars static) returns or raises")

    call.__dict__.pop("__wrapped__", None)
    return call


def _traced_with_scalars(x: Any) -> bool:
    """Traced as ``jax.jit`` traces it: arrays and Python scalars."""
    return is_array(x) or isinstance(x, SCALARS)


def _why_not_jit(name: str, leaves: list, key: Any) -> Note | None:
    """Why the helper cannot run this call under its jit (None: it can)."""
    holder = next((x for x in leaves if holds_arrays(x)), None)
    if holder is not None:
        return Taken("inline_holds_arrays", name, type(holder).__name__)
    if hashable(key):
        return None
    bad = next((x for x in leaves if not (is_array(x) or hashable(x))), None)
    return Taken("inline_unhashable", name, type(bad).__name__)


def _leaf_program(fn: Callable, name: str, tree: Any, holes: Holes,
                  call_as: CallAs | None = None) -> Callable:
    """A jit of ``fn`` over the traced leaves; what it raises is tagged with the helper."""
    out: dict[str, Any] = {}  # the output's tree and its non-array leaves, once traced

    def body(arrays):
        args, kwargs = jax.tree_util.tree_unflatten(tree, holes.fill(arrays))
        leaves, out["tree"] = jax.tree_util.tree_flatten(fn(*args, **kwargs))
        out["holes"], results = Holes.of(leaves)
        return results

    body.__name__ = body.__qualname__ = jit_label(name)
    jitted: Callable = jax.jit(body)
    if call_as is not None:
        jitted = call_as(jitted, name)

    def run(arrays):
        try:
            results = jitted(arrays)
        except Exception as exc:
            if not hasattr(exc, HELPER_TAG):  # the innermost helper's jit raised it
                setattr(exc, HELPER_TAG, name)
                if "tree" in out:  # its body returned: say what its static part holds
                    setattr(exc, STATIC_TAG, static_holder(out["tree"], out["holes"].fixed))
            raise
        return jax.tree_util.tree_unflatten(out["tree"], out["holes"].fill(results))

    return run


def _note_once(notes: list[Noted], note: Noted) -> None:
    if note not in notes:
        notes.append(note)


def is_user_jit(obj: Any) -> bool:
    """Whether ``obj`` is a ``jax.jit`` the user wrote (its plain function is ``__wrapped__``)."""
    return jit_info(obj) is not None and callable(getattr(obj, "__wrapped__", None))

"""Flat and nested variants of one entry, built from the helpers a trace really calls.

:func:`~jitmagic.measure.entry.plan_entry` resolves the entry (a function, a jitted function, a
transformation, a partial, a bound method, a callable instance), decides how
the outer ``jax.jit`` takes its arguments (as ``jax.jit`` does: arrays and
Python scalars traced, the rest static), and runs one profiled discovery
trace (:mod:`jitmagic.measure.discovery`) to find the user's helpers and
where each is bound. A variant is then one choice of what each binding holds
while the entry runs:

* ``flat``: a helper the user jitted runs as their plain function, so
  everything traces inline; every other helper is left as it is;
* ``nested``: every helper runs under a jit of its own (the user's own jit,
  where they wrote one), bound where its callers look it up: a global of the
  cell or of a module, or a class attribute.

Bindings are swapped in only while the entry's Python code runs (during a
trace) and restored in ``finally``: nothing the user owns stays changed.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import jax

from ..errors import InputError
from .arrays import holds_arrays as _holds_arrays
from .arrays import is_array as _is_array
from .discovery import Binding, code_of

JIT_OPTIONS = ("static_argnums", "static_argnames", "donate_argnums", "donate_argnames",
               "inline", "keep_unused")


@dataclass(frozen=True)
class Helper:
    """A user function the discovery trace called from user code."""

    name: str
    calls: int
    bindings: tuple[Binding, ...]
    #: Why it cannot get a jit of its own (None: it can).
    why_inline: str | None = None
    #: Its code (how ``--nest`` matches a name as the call site writes it).
    code: types.CodeType | None = field(default=None, compare=False, repr=False)

    @property
    def user_jitted(self) -> bool:
        return any(is_user_jit(b.original) for b in self.bindings)


@dataclass
class Plan:
    """The entry resolved, how the outer jit takes its arguments, and its helpers."""

    entry: Callable
    name: str
    helpers: dict[str, Helper]
    jit_options: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    #: The arguments the variants take: the call's own, or (for an ``eqx.filter_jit``
    #: entry) its array leaves alone, the other leaves fixed in ``entry``.
    args: tuple = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    #: The globals of the user's entry function: where ``--nest L.block`` looks up ``L``.
    namespace: dict[str, Any] = field(default_factory=dict)


@dataclass
class Variant:
    """One way to run the entry: its bindings swapped in while it runs."""

    name: str
    entry: Callable
    planned: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)
    jit_options: dict[str, Any] = field(default_factory=dict)
    plan: Plan | None = None
    ran: set[str] = field(default_factory=set)
    #: Helpers found that this variant keeps inline because they cannot be nested.
    inline: tuple[str, ...] = ()

    @property
    def nested(self) -> tuple[str, ...]:
        """The helpers whose jit really ran (a binding nobody looked up nests nothing)."""
        return tuple(n for n in self.planned if n in self.ran)

    @property
    def kept_inline(self) -> tuple[str, ...]:
        """The helpers it meant to nest but could not: refused up front, or never jitted
        because no call could pass through a jit (the notes say why)."""
        return (*self.inline, *(n for n in self.planned if n not in self.ran))


#: The options of an entry whose arguments are filtered leaf by leaf (``eqx.filter_jit``).
FILTER: dict[str, Any] = {"filter": True}


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
               if (written is not None and h.code is written)
               or ("." not in given and n.rsplit(".", 1)[-1] == short)]
    if len(matches) == 1:
        return matches[0]
    listed = ", ".join(f"`{n}`" for n in plan.helpers) or "none found"
    if matches:
        raise InputError(f"--nest {given} could be any of {', '.join(matches)}: write one of "
                         f"these names.")
    raise InputError(f"--nest names `{given}`, which `{plan.name}` does not call; its "
                     f"helpers are {listed}.")


def _written(given: str, namespace: dict[str, Any]) -> types.CodeType | None:
    """The code of what ``given`` (``L.block``, ``MLP.layer``) names in ``namespace``."""
    head, *rest = given.split(".")
    value = namespace.get(head)
    for part in rest:
        value = inspect.getattr_static(value, part, None) if value is not None else None
    return code_of(value) if value is not None else None


#: ``replace(helper, original)`` gives what a binding holds in a variant (None: unchanged).
Replace = Callable[[Helper, Any], Any]


def make_variant(label: str, plan: Plan, replace: Replace,
                 planned: tuple[str, ...] = ()) -> Variant:
    """The variant whose bindings hold ``replace(helper, original)`` while the entry runs."""
    variant = Variant(label, plan.entry, planned, list(plan.notes), dict(plan.jit_options), plan)
    swaps = []
    for h in plan.helpers.values():
        for b in h.bindings:
            new = replace(h, b.original)
            if new is not None:
                swaps.append((b, b.original, new))
    variant.entry = installing(plan.entry, swaps)
    return variant


def build_variant(name: str, plan: Plan, nest: Iterable[str] | None = None) -> Variant:
    """The ``flat`` or ``nested`` variant; ``nest`` limits the jits the tool adds
    (helpers the user jitted keep their jit in the nested variant)."""
    if name == "flat":
        return make_variant(name, plan, lambda h, v: _unjit(v) if h.user_jitted else None)
    if name != "nested":
        raise ValueError(f"unknown variant {name!r}")
    chosen = None if nest is None else set(nest)
    picked = tuple(h.name for h in plan.helpers.values()
                   if h.user_jitted or chosen is None or h.name in chosen)
    return nest_only(plan, picked, name)


def nest_only(plan: Plan, nest: Iterable[str], label: str) -> Variant:
    """Flat except for the helpers in ``nest``, each under its own jit (the user's, if
    they wrote one). A helper that cannot be nested stays inline, with a note why."""
    nest = tuple(nest)
    inline = tuple(n for n in nest if plan.helpers[n].why_inline)
    notes = list(plan.notes) + [f"`{n}` stays inline: {plan.helpers[n].why_inline}"
                                for n in inline]
    ran: set[str] = set()

    def replace(h: Helper, original: Any) -> Any:
        if h.name not in nest or h.why_inline:
            return _unjit(original) if h.user_jitted else None
        if h.user_jitted:
            ran.add(h.name)
            return None
        if _is_nnx_class(h.bindings[0].owner):
            return _nnx_method(original, h.name, ran)
        return _descriptor(original, lambda f: faithful_jit(f, h.name, notes, ran))

    planned = tuple(n for n in nest if not plan.helpers[n].why_inline)
    built = make_variant(label, plan, replace, planned)
    built.notes, built.ran, built.inline = notes, ran, inline
    return built


def _is_nnx_class(owner: Any) -> bool:
    """A Flax NNX module class: its methods must be jitted by ``nnx.jit`` (graph state)."""
    return isinstance(owner, type) and any(
        k.__name__ == "Module" and k.__module__ == "flax.nnx.module" for k in owner.__mro__)


def _nnx_method(original: Callable, name: str, ran: set[str]) -> Callable:
    """A plain function calling ``nnx.jit(original)``: assigned as the class attribute
    itself, ``nnx.jit``'s wrapper would not bind ``self`` (Flax 0.12)."""
    from flax import nnx

    jitted = nnx.jit(original)

    @functools.wraps(original)
    def method(self, *args, **kwargs):
        ran.add(name)
        return jitted(self, *args, **kwargs)

    method.__dict__.pop("__wrapped__", None)
    return method


def installing(fn: Callable, swaps: list[tuple[Binding, Any, Any]]) -> Callable:
    """``fn`` with the swaps in place while it runs, restored after."""
    if not swaps:
        return _named(fn)

    @functools.wraps(fn)
    def entry(*args, **kwargs):
        with swapped(swaps):
            return fn(*args, **kwargs)

    entry.__name__ = entry.__qualname__ = short_name(getattr(fn, "__name__", "entry"))
    return entry


def _named(fn: Callable) -> Callable:
    """``fn`` itself where it has a ``__name__`` (JAX names its events by it), else a wrapper."""
    if isinstance(getattr(fn, "__name__", None), str):
        return fn

    @functools.wraps(fn)
    def entry(*args, **kwargs):
        return fn(*args, **kwargs)

    entry.__name__ = entry.__qualname__ = "entry"
    return entry


@contextmanager
def swapped(swaps: list[tuple[Binding, Any, Any]]) -> Iterator[None]:
    """Each binding holds its new value inside the block and its original after."""
    done = []
    try:
        for binding, original, new in swaps:
            binding.set(new)
            done.append((binding, original))
        yield
    finally:
        for binding, original in reversed(done):
            binding.set(original)


def _unjit(value: Any) -> Any:
    """A user's ``jax.jit`` taken off (the plain function it wraps)."""
    return value.__wrapped__ if is_user_jit(value) else value


def unjitted(original: Any, wrap: Callable[[Callable], Callable]) -> Any:
    """``wrap`` applied to a bound value with any user jit taken off (a timer, say)."""
    return _descriptor(_unjit(original), wrap)


def _descriptor(original: Any, wrap: Callable[[Callable], Callable]) -> Any:
    """``wrap`` applied to a bound value, keeping a ``staticmethod`` a staticmethod."""
    if isinstance(original, staticmethod | classmethod):
        return type(original)(wrap(original.__func__))
    return wrap(original)


def short_name(name: str) -> str:
    return name.rsplit(".", 1)[-1].replace("#", "_")


def faithful_jit(fn: Callable, name: str, notes: list[str], ran: set[str]) -> Callable:
    """``fn`` under a jit that takes its arguments as the program does: array leaves
    traced, every other leaf static (keyed by type and value), non-array outputs passed
    around the jit. Calls it cannot take faithfully run inline, with a note why.

    The result is a plain function, so that a class attribute holding it binds ``self``.
    """
    programs: dict[Any, Callable] = {}

    @functools.wraps(fn)
    def call(*args, **kwargs):
        leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
        traced = [i for i, x in enumerate(leaves) if _is_array(x)]
        key = (tree, tuple((i, type(x), x) for i, x in enumerate(leaves) if not _is_array(x)))
        why = _why_not_jit(leaves, traced, key)
        if why:
            _note_once(notes, f"`{name}` stays inline for calls {why}")
            return fn(*args, **kwargs)
        if key not in programs:
            programs[key] = _leaf_program(fn, name, tree, leaves, traced)
        ran.add(name)
        return programs[key]([leaves[i] for i in traced])

    call.__dict__.pop("__wrapped__", None)
    return call


def _why_not_jit(leaves: list, traced: list[int], key: Any) -> str | None:
    for x in leaves:
        if _holds_arrays(x):
            return (f"on a `{type(x).__name__}` holding arrays that is not a pytree (a "
                    "static argument cannot carry arrays, so jit cannot take it)")
    if not traced:
        return "that pass no array (nothing to trace)"
    try:
        hash(key)
    except TypeError:
        bad = next((x for x in leaves if not (_is_array(x) or _hashable(x))), None)
        return (f"with a `{type(bad).__name__}` argument that holds no array and is not "
                "hashable (it can be neither traced nor static)")
    return None


def _leaf_program(fn: Callable, name: str, tree: Any, leaves: list,
                  traced: list[int]) -> Callable:
    """A jit of ``fn`` over the traced leaves only; the others are fixed in the closure."""
    fixed = [None if i in traced else x for i, x in enumerate(leaves)]
    out_shape: dict[str, Any] = {}

    def body(arrays):
        full = list(fixed)
        for i, a in zip(traced, arrays, strict=True):
            full[i] = a
        args, kwargs = jax.tree_util.tree_unflatten(tree, full)
        out, out_tree = jax.tree_util.tree_flatten(fn(*args, **kwargs))
        keep = [i for i, x in enumerate(out) if _is_array(x)]
        out_shape.update(tree=out_tree, keep=keep,
                         out=[None if i in keep else x for i, x in enumerate(out)])
        return [out[i] for i in keep]

    body.__name__ = body.__qualname__ = short_name(name)
    jitted = jax.jit(body)

    def run(arrays):
        results = jitted(arrays)
        full = list(out_shape["out"])
        for i, r in zip(out_shape["keep"], results, strict=True):
            full[i] = r
        return jax.tree_util.tree_unflatten(out_shape["tree"], full)

    return run


def _note_once(notes: list[str] | None, note: str) -> None:
    if notes is not None and note not in notes:
        notes.append(note)


def _hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def is_user_jit(obj: Any) -> bool:
    """Whether ``obj`` is a ``jax.jit`` the user wrote (its plain function is ``__wrapped__``)."""
    return (getattr(obj, "_jit_info", None) is not None
            and isinstance(getattr(obj, "__wrapped__", None), Callable))

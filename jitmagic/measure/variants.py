"""Flat and nested variants of one entry, built from the helpers a trace really calls.

:func:`plan_entry` resolves the entry (a function, a jitted function, a
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
import itertools
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import jax

from ..errors import InputError
from .discovery import SCALARS as _SCALARS
from .discovery import Binding, Found, code_of, discover
from .discovery import holds_arrays as _holds_arrays
from .discovery import is_array as _is_array

_JIT_OPTIONS = ("static_argnums", "static_argnames", "donate_argnums", "donate_argnames",
                "inline", "keep_unused")
#: What tracing raises when a traced Python scalar is used as a Python value.
_SCALAR_ERRORS = (TypeError, IndexError)
#: JAX's inner wrapper (held in the closure of what a transformation returns) → its name.
_TRANSFORMS = {"grad_f": "grad", "grad_f_aux": "grad", "value_and_grad_f": "value_and_grad",
               "value_and_grad_f_aux": "value_and_grad", "vmap_f": "vmap",
               "fun_remat": "checkpoint", "jacfun": "jacfwd"}


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
        return any(_is_user_jit(b.original) for b in self.bindings)


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


# --- the entry ----------------------------------------------------------------

def resolve_entry(obj: Any, name: str | None = None) -> tuple[Callable, dict | None, str]:
    """(callable to trace, the user's jit options on it or None, the entry's name).

    The options are ``{}`` (not None) for an ``eqx.filter_jit`` entry: every non-array
    leaf of its arguments is then static.
    """
    if isinstance(obj, type):
        raise InputError(f"the entry `{name or obj.__name__}` is a class: call a function, or "
                         f"an instance of it (`model = {obj.__name__}(...)`, then `model(x)`).")
    if not callable(obj):
        raise InputError(f"the entry `{name}` is not callable (it is a {type(obj).__name__}): "
                         f"end with a call of the function to measure.")
    name = name or entry_name(obj)
    if isinstance(obj, types.BuiltinFunctionType | types.BuiltinMethodType):
        raise InputError(
            f"the entry `{name}` is a {type(obj).__name__}, not a Python function of yours: "
            f"end with a call of your own function, e.g. `model(x)`, not `print(model(x))`.")
    if _is_user_jit(obj):
        info = obj._jit_info
        opts = {k: getattr(info, k) for k in _JIT_OPTIONS if getattr(info, k, None)}
        return obj.__wrapped__, opts or None, name
    inner = _framework_unjit(obj)
    if inner is not None:
        return inner, FILTER, name
    return obj, None, name


#: The options of an entry whose arguments are filtered leaf by leaf (``eqx.filter_jit``).
FILTER: dict[str, Any] = {"filter": True}


def entry_name(obj: Any) -> str:
    """The entry as a user would write it: ``loss``, ``grad(loss)``, ``Model.__call__``."""
    if isinstance(obj, functools.partial):
        return f"partial({entry_name(obj.func)})"
    if isinstance(obj, types.MethodType):
        return f"{type(obj.__self__).__name__}.{obj.__func__.__name__}"
    wrapped = getattr(obj, "__wrapped__", None)
    if isinstance(obj, types.FunctionType) and wrapped is not None:
        transform = _transform_of(obj)
        if transform:
            return f"{transform}({entry_name(wrapped)})"
    if isinstance(obj, types.FunctionType | types.BuiltinFunctionType) or _is_user_jit(obj):
        return getattr(obj, "__name__", "entry")
    if _framework_unjit(obj) is not None:
        return entry_name(_framework_unjit(obj))
    return f"{type(obj).__name__}.__call__"


def _transform_of(fn: types.FunctionType) -> str | None:
    """``grad``, ``vmap``, ... where ``fn`` is JAX's wrapper made by that transformation."""
    inner = [c.cell_contents for c in fn.__closure__ or () if _cell_full(c)]
    for f in (fn, *inner):
        code = getattr(f, "__code__", None)
        if code is not None and code.co_name in _TRANSFORMS:
            return _TRANSFORMS[code.co_name]
    return None


def _cell_full(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (an empty cell raises)
    except ValueError:
        return False
    return True


def _is_user_jit(obj: Any) -> bool:
    return (getattr(obj, "_jit_info", None) is not None
            and isinstance(getattr(obj, "__wrapped__", None), Callable))


def _framework_unjit(obj: Any) -> Callable | None:
    """The plain function behind ``eqx.filter_jit`` or ``nnx.jit``: the outer jit
    replaces it, taking array leaves traced and the rest static as they do."""
    kind = (type(obj).__module__, type(obj).__name__)
    if kind in (("equinox._jit", "_JitWrapper"),
                ("flax.nnx.transforms.compilation", "JitWrapped")):
        return getattr(obj, "__wrapped__", None)
    return None


# --- the outer jit's arguments -----------------------------------------------

def is_static(value: Any, scalars_static: bool = False) -> bool:
    """Whether the outer jit holds an argument static: no array leaf (no Python scalar
    leaf either, unless ``scalars_static``) and hashable."""
    leaves = jax.tree_util.tree_leaves(value)
    if any(_is_array(x) or (not scalars_static and isinstance(x, _SCALARS)) for x in leaves):
        return False
    try:
        hash(value)
    except TypeError:
        return False
    return True


def static_split(args: tuple, kwargs: dict[str, Any],
                 scalars_static: bool = False) -> dict[str, tuple]:
    """``jax.jit`` options that hold every argument with nothing to trace static."""
    return {
        "static_argnums": tuple(i for i, a in enumerate(args) if is_static(a, scalars_static)),
        "static_argnames": tuple(sorted(k for k, v in kwargs.items()
                                        if is_static(v, scalars_static))),
    }


def check_arguments(entry: str, args: tuple, kwargs: dict[str, Any]) -> None:
    """Refuse an argument that ``jax.jit`` can neither trace nor hold static."""
    named = [(f"argument {i + 1}", a) for i, a in enumerate(args)] + list(kwargs.items())
    for label, value in named:
        leaves = jax.tree_util.tree_leaves(value)
        holder = next((x for x in leaves if _holds_arrays(x)), None)
        if holder is not None:
            kind = type(holder).__name__
            raise InputError(
                f"{label} of `{entry}` is a `{kind}`, an ordinary object holding arrays: jit can "
                f"neither trace it nor hold it static (its arrays would be baked in as "
                f"constants). Pass its arrays as arguments, or make `{kind}` a pytree "
                f"(`jax.tree_util.register_dataclass` or `register_pytree_node_class`).")
        if is_static(value):
            continue
        bad = [x for x in leaves if not (_is_array(x) or isinstance(x, _SCALARS))]
        if bad and leaves == [value]:
            raise InputError(
                f"{label} of `{entry}` holds a {type(value).__name__}, which is neither a JAX "
                f"type nor hashable: pass arrays (or lists, tuples, dicts of arrays), or make "
                f"it hashable so that it can be a static argument.")
        if bad:
            raise InputError(
                f"{label} of `{entry}` holds a {type(bad[0]).__name__} next to arrays, which "
                f"jit can neither trace nor hold static: pass it as an argument of its own "
                f"(held static), or close over it (`functools.partial`).")


# --- planning -------------------------------------------------------------------

def plan_entry(obj: Any, args: tuple, kwargs: dict[str, Any], name: str | None = None,
               nest: Iterable[str] | None = None,
               swaps: list[tuple[Binding, Any, Any]] | None = None) -> Plan:
    """Resolve the entry, settle the outer jit's static arguments, find the helpers.

    ``swaps`` (binding, original, value) hold for every run of every variant.
    """
    fn, user_opts, name = resolve_entry(obj, name)
    namespace = user_globals(fn) or {}
    if _holds_nnx(fn, args, kwargs):
        fn, args, kwargs = _nnx_split(fn, args, kwargs)
        user_opts = FILTER
    if user_opts is FILTER:
        fn, args, kwargs = _filtered(fn, name, args, kwargs)
        user_opts = {"static_argnums": (), "static_argnames": ()}
    check_arguments(name, args, kwargs)
    swaps, nest = list(swaps or ()), tuple(nest or ())
    fn = _installing(fn, swaps)
    opts = user_opts or static_split(args, kwargs)
    found = discover(fn, args, kwargs, opts, nest)
    notes = []
    if user_opts is None and isinstance(found.error, _SCALAR_ERRORS):
        error, held = found.error, _fewest_static_scalars(fn, args, kwargs, opts, nest)
        if held is not None:
            opts, found, label, spelled = held
            notes.append(f"{label} of `{name}`: a Python scalar used as a Python value "
                         f"(tracing it raised {type(error).__name__}), so it is held static, "
                         f"as `jax.jit({_short(name)}, {spelled})` would")
    helpers = {n: _helper(f) for n, f in found.helpers.items()}
    return Plan(fn, name, helpers, opts, notes, args, kwargs, namespace)


def _fewest_static_scalars(fn: Callable, args: tuple, kwargs: dict[str, Any],
                           opts: dict[str, tuple], nest: tuple[str, ...]) -> tuple | None:
    """The smallest set of Python scalar arguments that, held static, lets the entry
    trace (each alone first, in order; then pairs ...): (options, discovery, label of
    the scalars, how ``jax.jit`` spells them), or None if none does."""
    scalars = _scalar_arguments(args, kwargs)
    sets = [c for k in range(1, len(scalars) + 1)
            for c in itertools.combinations(scalars, k)][:_MAX_TRIES]
    for chosen in sets:
        nums = {*opts["static_argnums"], *(k for k in chosen if isinstance(k, int))}
        names = {*opts["static_argnames"], *(k for k in chosen if isinstance(k, str))}
        held = {"static_argnums": tuple(sorted(nums)), "static_argnames": tuple(sorted(names))}
        retry = discover(fn, args, kwargs, held, nest)
        if retry.error is None:
            return held, retry, _scalar_label(chosen), _spelled(chosen)
    return None


#: At most this many sets of scalars are tried (each is one discovery trace).
_MAX_TRIES = 16


def _scalar_label(chosen: tuple) -> str:
    return ", ".join(f"argument {k + 1}" if isinstance(k, int) else f"`{k}`" for k in chosen)


def _spelled(chosen: tuple) -> str:
    """``static_argnums=(1,)`` / ``static_argnames=("n",)``, 0-based as ``jax.jit`` takes them."""
    nums = tuple(k for k in chosen if isinstance(k, int))
    names = tuple(k for k in chosen if isinstance(k, str))
    parts = [f"static_argnums={nums!r}"] if nums else []
    if names:
        parts.append("static_argnames=(" + ", ".join(f'"{n}"' for n in names)
                     + (",)" if len(names) == 1 else ")"))
    return ", ".join(parts)


def user_globals(fn: Any) -> dict[str, Any] | None:
    """The globals of the user's function behind ``fn`` (a wrapper, a partial, a bound
    method, a callable instance); None where there is none."""
    inner: Any = fn
    for _ in range(6):
        if hasattr(inner, "__globals__"):
            return inner.__globals__
        nxt = getattr(inner, "__wrapped__", None) or getattr(inner, "func", None) \
            or getattr(inner, "__func__", None)
        if nxt is None and callable(inner) and not isinstance(inner, types.FunctionType):
            nxt = inspect.getattr_static(type(inner), "__call__", None)
        inner = nxt
    return None


def _holds_nnx(fn: Callable, args: tuple, kwargs: dict[str, Any]) -> bool:
    nnx = sys.modules.get("flax.nnx")
    if nnx is None:
        return False
    leaves = jax.tree_util.tree_leaves((fn, args, kwargs),
                                       is_leaf=lambda x: isinstance(x, nnx.Module))
    return any(isinstance(x, nnx.Module) for x in leaves)


def _nnx_split(fn: Callable, args: tuple, kwargs: dict[str, Any],
               ) -> tuple[Callable, tuple, dict[str, Any]]:
    """Flax NNX modules (the entry itself, its ``self``, or in its arguments) become
    their state, merged back inside the trace: ``nnx.jit`` on a helper needs real
    graph objects, which a pytree round trip does not give back."""
    from flax import nnx

    if isinstance(fn, types.MethodType):
        fn, args = fn.__func__, (fn.__self__, *args)
    elif isinstance(fn, nnx.Module):
        fn, args = type(fn).__call__, (fn, *args)
    is_module = lambda x: isinstance(x, nnx.Module)  # noqa: E731
    leaves, tree = jax.tree_util.tree_flatten((args, kwargs), is_leaf=is_module)
    graphs = {}
    for i, x in enumerate(leaves):
        if is_module(x):
            graphs[i], leaves[i] = nnx.split(x)

    @functools.wraps(fn)
    def merged(parts):
        full = [nnx.merge(graphs[i], p) if i in graphs else p for i, p in enumerate(parts)]
        a, k = jax.tree_util.tree_unflatten(tree, full)
        return fn(*a, **k)

    merged.__dict__.pop("__wrapped__", None)
    return merged, (leaves,), {}


def _filtered(fn: Callable, name: str, args: tuple, kwargs: dict[str, Any],
              ) -> tuple[Callable, tuple, dict[str, Any]]:
    """``fn`` as a function of its array leaves alone, every other leaf fixed (static),
    as ``eqx.filter_jit`` takes it; flattened once, so no call pays for it."""
    leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
    traced = [i for i, x in enumerate(leaves) if _is_array(x)]
    fixed = [None if i in traced else x for i, x in enumerate(leaves)]

    def entry(arrays):
        full = list(fixed)
        for i, a in zip(traced, arrays, strict=True):
            full[i] = a
        a, k = jax.tree_util.tree_unflatten(tree, full)
        return fn(*a, **k)

    entry.__name__ = entry.__qualname__ = _short(name).replace("(", "_").rstrip(")")
    return entry, ([leaves[i] for i in traced],), {}


def binding_swaps(namespace: dict[str, Any], values: dict[str, Any] | None,
                  ) -> list[tuple[Binding, Any, Any]]:
    """Swaps that set each of ``values`` as a global of ``namespace`` (a sweep's value)."""
    return [(b, b.original, v) for b, v in
            ((Binding(namespace, k), v) for k, v in (values or {}).items())]


def _scalar_arguments(args: tuple, kwargs: dict[str, Any]) -> list[int | str]:
    """The Python scalar arguments: positions (0-based) and keyword names, in order."""
    named = [*enumerate(args), *kwargs.items()]
    return [key for key, v in named if not is_static(v) and is_static(v, scalars_static=True)]


def _helper(found: Found) -> Helper:
    return Helper(found.name, found.calls, tuple(found.bindings), _why_inline(found),
                  found.code)


def _why_inline(found: Found) -> str | None:
    qualname = found.code.co_qualname
    bases = getattr(found.self_type, "__mro__", ())
    if any(k.__module__.startswith("flax.linen") for k in bases):
        return ("it is a method of a Flax linen module, which jitmagic does not nest: wrap "
                "the submodule yourself (`nn.jit(Block)`) to measure that")
    if found.self_holds_arrays:
        kind = found.self_type.__name__
        return (f"its `self`, a `{kind}`, holds arrays but is not a pytree, and a static "
                f"argument cannot carry arrays, so `self` cannot be passed through `jax.jit`. "
                f"To nest it, register `{kind}` as a pytree (`jax.tree_util.register_dataclass`"
                f" or `register_pytree_node_class`), or make it an `eqx.Module`")
    if not found.bindings:
        if "<locals>" in qualname:
            outer = qualname.split(".<locals>")[0]
            return f"it is re-created on every call of `{outer}`, so no name holds it"
        return ("no name or class attribute its callers look up holds it (e.g. a lambda in "
                "a container, or a function held by a `jax.grad(...)` made outside the entry)")
    for b in found.bindings:
        if isinstance(b.original, jax.custom_vjp):
            return "it is a custom_vjp function, whose rules must see it unjitted"
        if isinstance(b.original, classmethod):
            return "it is a classmethod"
    return None


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
    listed = ", ".join(plan.helpers) or "none found"
    if matches:
        raise InputError(f"--nest {given} could be any of {', '.join(matches)}: write one of "
                         f"these names.")
    raise InputError(f"--nest names {given}, which `{plan.name}` does not call: its helpers "
                     f"are {listed}.")


def _written(given: str, namespace: dict[str, Any]) -> types.CodeType | None:
    """The code of what ``given`` (``L.block``, ``MLP.layer``) names in ``namespace``."""
    head, *rest = given.split(".")
    value = namespace.get(head)
    for part in rest:
        value = inspect.getattr_static(value, part, None) if value is not None else None
    return code_of(value) if value is not None else None


# --- variants -------------------------------------------------------------------

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
    variant.entry = _installing(plan.entry, swaps)
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


def _installing(fn: Callable, swaps: list[tuple[Binding, Any, Any]]) -> Callable:
    """``fn`` with the swaps in place while it runs, restored after."""
    if not swaps:
        return _named(fn)

    @functools.wraps(fn)
    def entry(*args, **kwargs):
        with swapped(swaps):
            return fn(*args, **kwargs)

    entry.__name__ = entry.__qualname__ = _short(getattr(fn, "__name__", "entry"))
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
    return value.__wrapped__ if _is_user_jit(value) else value


def unjitted(original: Any, wrap: Callable[[Callable], Callable]) -> Any:
    """``wrap`` applied to a bound value with any user jit taken off (a timer, say)."""
    return _descriptor(_unjit(original), wrap)


def _descriptor(original: Any, wrap: Callable[[Callable], Callable]) -> Any:
    """``wrap`` applied to a bound value, keeping a ``staticmethod`` a staticmethod."""
    if isinstance(original, staticmethod | classmethod):
        return type(original)(wrap(original.__func__))
    return wrap(original)


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1].replace("#", "_")


# --- jitting a helper faithfully ----------------------------------------------------

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

    body.__name__ = body.__qualname__ = _short(name)
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

"""The entry as ``jax.jit`` would see it: resolved to the user's function, named as written, the
user's jit taken off, and its helpers found by one discovery trace."""

from __future__ import annotations

import functools
import itertools
import sys
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import jax

from ..._compat import equinox_transform, framework_jit, jit_info
from ...errors import InputError
from ...model.notes import Inline, Note, Noted, Taken
from ...model.saved.schema import printable
from ..calls import arguments
from ..discovery.bindings import Binding, installing, short_name
from ..discovery.discover import Discovery, discover, profiled_discovery
from ..discovery.found import Found, closure_values, code_of, functions_of
from .inner_jit import is_user_jit
from .plan import JIT_OPTIONS, Helper, Plan
from .trampoline import unwrapping

#: JAX's inner wrapper (held in the closure of what a transformation returns) → its name.
_TRANSFORMS = {"grad_f": "grad", "grad_f_aux": "grad", "value_and_grad_f": "value_and_grad",
               "value_and_grad_f_aux": "value_and_grad", "vmap_f": "vmap",
               "fun_remat": "checkpoint", "jacfun": "jacfwd"}


@dataclass(frozen=True)
class Resolved:
    """The callable to trace, its user ``jax.jit`` options (or None), whether a filter jit's."""

    fn: Callable
    name: str
    jit_options: dict[str, Any] | None = None
    filtered: bool = False


def resolve_entry(obj: Any, name: str | None = None) -> Resolved:
    """The entry resolved to the user's function, named as written."""
    check_callable(obj, name)
    name = name or entry_name(obj)
    if isinstance(obj, types.BuiltinFunctionType | types.BuiltinMethodType):
        raise InputError(
            f"the entry `{name}` is a {type(obj).__name__}, not a Python function of yours: "
            f"end with a call of your own function, e.g. `model(x)`, not `print(model(x))`.")
    if is_user_jit(obj):
        info = jit_info(obj)
        opts = {k: getattr(info, k) for k in JIT_OPTIONS if getattr(info, k, None)}
        # the user's compiler options (XLA's effort): their program is compiled with them
        if getattr(info, "compiler_options_kvs", None):
            opts["compiler_options"] = dict(info.compiler_options_kvs)
        return Resolved(obj.__wrapped__, name, opts or None)
    inner = _framework_unjit(obj)
    return Resolved(obj, name) if inner is None else Resolved(inner, name, filtered=True)


def check_callable(obj: Any, name: str | None) -> None:
    """Refuse an entry that is a class or not callable, saying what to write instead."""
    if isinstance(obj, type):
        raise InputError(f"the entry `{name or obj.__name__}` is a class: call a function, or "
                         f"an instance of it (`model = {obj.__name__}(...)`, then `model(x)`).")
    if not callable(obj):
        kind = type(obj).__name__
        raise InputError(f"the entry `{name or repr(obj)[:60]}` is not a function (it is "
                         f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} `{kind}`): pass the "
                         f"function to measure (or, in a cell, end with a call of it).")


def entry_name(obj: Any) -> str:
    """The entry as a user would write it (``grad(loss)``), safe to print."""
    return printable(_written(obj))


def _written(obj: Any) -> str:
    if isinstance(obj, functools.partial):
        return f"partial({entry_name(obj.func)})"
    if isinstance(obj, types.MethodType):
        return f"{type(obj.__self__).__name__}.{obj.__func__.__name__}"
    wrapped = getattr(obj, "__wrapped__", None)
    if isinstance(obj, types.FunctionType) and wrapped is not None and \
            (transform := _transform_of(obj)):
        return f"{transform}({entry_name(wrapped)})"
    if isinstance(obj, types.FunctionType | types.BuiltinFunctionType) or is_user_jit(obj):
        return getattr(obj, "__name__", "entry")
    if _framework_unjit(obj) is not None:
        return entry_name(_framework_unjit(obj))
    if callable(wrapped):  # a wrapper object (``eqx.filter_grad(loss)``): as written
        kind = equinox_transform(obj)
        return f"{kind}({entry_name(wrapped)})" if kind else entry_name(wrapped)
    return f"{type(obj).__name__}.__call__"


def _transform_of(fn: types.FunctionType) -> str | None:
    """``grad``, ``vmap``, ... where ``fn`` is JAX's wrapper made by that transformation."""
    names = (getattr(getattr(f, "__code__", None), "co_name", None)
             for f in (fn, *closure_values(fn)))
    return next((_TRANSFORMS[n] for n in names if n in _TRANSFORMS), None)


def _framework_unjit(obj: Any) -> Callable | None:
    """The plain function behind ``eqx.filter_jit`` or ``nnx.jit``."""
    return getattr(obj, "__wrapped__", None) if framework_jit(obj) else None


def plan_entry(obj: Any, args: tuple, kwargs: dict[str, Any], name: str | None = None,
               nest: Iterable[str] | None = None,
               swaps: list[tuple[Binding, Any, Any]] | None = None) -> Plan:
    """Resolve the entry, settle its static arguments, find its helpers."""
    resolved = resolve_entry(obj, name)
    given = (obj, args, kwargs)  # where a helper's `self` may live, before any rewrapping
    name, notes = resolved.name, list[Noted]()
    namespace = user_globals(resolved.fn) or {}
    fn, args, kwargs, user_opts = _as_framework_takes(resolved, args, kwargs, notes)
    arguments.check_arguments(name, args, kwargs)
    swaps, nest = list(swaps or ()), tuple(nest or ())
    plain, fn = fn, installing(fn, swaps)
    opts = user_opts or arguments.static_split(args, kwargs)
    found = discover(fn, args, kwargs, opts, nest, given)
    if user_opts is None and isinstance(found.error, arguments.SCALAR_MISUSE):
        error, held = found.error, _fewest_static_scalars(fn, args, kwargs, opts, nest, given)
        if held is not None:
            opts, found, label, spelled = held
            notes.append(Taken("scalars_held_static", name, label, type(error).__name__,
                               short_name(name), spelled))
        elif (leaves := _scalar_leaves(args, kwargs)) and (
                leafwise := _leaves_static(plain, name, args, kwargs, swaps, nest, given)):
            fn, args, kwargs, opts, found = leafwise
            notes.append(Taken("leaves_held_static", name, leaves, type(error).__name__))
    if found.error is not None:  # no program to read: what the failing trace called
        found = profiled_discovery(fn, args, kwargs, opts, nest)
    return Plan(fn, name, _helpers_of(fn, found), opts, notes, args, kwargs, namespace,
                flat_traces=found.error is None, in_shardings=user_in_shardings(obj))


def _as_framework_takes(resolved: Resolved, args: tuple, kwargs: dict[str, Any],
                        notes: list[Noted]) -> tuple[Callable, tuple, dict[str, Any],
                                                   dict[str, Any] | None]:
    """The entry's function, arguments and jit options as its framework takes them, undonated."""
    fn, name, filtered = resolved.fn, resolved.name, resolved.filtered
    user_opts = _undonated(resolved.jit_options, name, notes)
    if _holds_module("flax.nnx", (fn, args, kwargs)):
        fn, args, kwargs = _nnx_split(fn, args, kwargs)
        filtered = True
    elif not filtered and user_opts is None and _holds_module("equinox", (args, kwargs)):
        filtered = True
        notes.append(Taken("equinox_modules", name))
    if filtered:
        fn, args, kwargs = _filtered(fn, name, args, kwargs)
        user_opts = dict(NO_STATIC)
    return fn, args, kwargs, user_opts


def _helpers_of(fn: Callable, found: Discovery) -> dict[str, Helper]:
    """The helpers found, each with why it stays inline."""
    ran = {f.code.co_qualname for f in found.helpers.values()}
    ran |= {code.co_qualname} if (code := code_of(fn)) is not None else set()
    return {n: Helper(f.name, f.call_sites, tuple(f.bindings), f.code, _why_inline(f, ran),
                      _linen_class(f), f.held_by, f.self_type, f.kernel)
            for n, f in found.helpers.items()}


def user_in_shardings(obj: Any) -> Any:
    """The ``in_shardings`` the user gave their own ``jax.jit`` on the entry (None: none)."""
    info = jit_info(obj) if is_user_jit(obj) else None
    if info is None or not getattr(info, "user_specified_in_shardings", False):
        return None
    return jax.tree_util.tree_unflatten(info.in_shardings_treedef, info.in_shardings_leaves)


#: Outer-jit options with nothing static (as ``eqx.filter_jit`` takes leaves).
NO_STATIC: dict[str, tuple] = {"static_argnums": (), "static_argnames": ()}
#: ``jax.jit``'s options that hand the caller's buffers to the program.
DONATING = ("donate_argnums", "donate_argnames")


def _undonated(opts: dict[str, Any] | None, name: str,
               notes: list[Noted]) -> dict[str, Any] | None:
    """The user's jit options without donation: each run takes the user's own arrays."""
    if not opts or not any(opts.get(k) for k in DONATING):
        return opts
    said = ", ".join(f"{k}={opts[k]!r}" for k in DONATING if opts.get(k))
    notes.append(Taken("donates", name, said))
    return {k: v for k, v in opts.items() if k not in DONATING}


def _fewest_static_scalars(fn: Callable, args: tuple, kwargs: dict[str, Any],
                           opts: dict[str, tuple], nest: tuple[str, ...],
                           given: tuple) -> tuple | None:
    """The fewest Python scalar arguments that, held static, let the entry trace (else None)."""
    named: list[tuple[int | str, Any]] = [*enumerate(args), *kwargs.items()]
    scalars = [k for k, v in named  # the Python scalar arguments, by position or name
               if not arguments.is_static(v) and arguments.is_static(v, scalars_static=True)]

    sets = [c for k in range(1, len(scalars) + 1)
            for c in itertools.combinations(scalars, k)][:_MAX_TRIES]
    for chosen in sets:
        nums = tuple(k for k in chosen if isinstance(k, int))
        names = tuple(k for k in chosen if isinstance(k, str))
        held = {"static_argnums": tuple(sorted({*opts["static_argnums"], *nums})),
                "static_argnames": tuple(sorted({*opts["static_argnames"], *names}))}
        retry = discover(fn, args, kwargs, held, nest, given)
        if retry.error is None:
            label = ", ".join(f"argument {k + 1}" if isinstance(k, int) else f"`{k}`"
                              for k in chosen)
            spelled = [f"static_argnums={nums!r}"] if nums else []
            spelled += [f"static_argnames={names!r}".replace("'", '"')] if names else []
            return held, retry, label, ", ".join(spelled)
    return None


#: At most this many sets of scalars are tried (each is one discovery trace).
_MAX_TRIES = 16


def user_globals(fn: Any) -> dict[str, Any] | None:
    """The globals of the user's function behind ``fn`` (None: there is none)."""
    return next((f.__globals__ for f in unwrapping(fn) if hasattr(f, "__globals__")), None)


def _holds_module(package: str, tree: Any) -> bool:
    """Whether ``tree`` holds a ``Module`` of ``package`` (if imported)."""
    module = getattr(sys.modules.get(package), "Module", None)
    return module is not None and any(isinstance(x, module) for x in jax.tree_util.tree_leaves(
        tree, is_leaf=lambda x: isinstance(x, module)))


def _scalar_leaves(args: tuple, kwargs: dict[str, Any], most: int = 4) -> str:
    """The Python scalar leaves inside pytree arguments, as a user would name them."""
    named = [(f"argument {i + 1}", a) for i, a in enumerate(args)] + list(kwargs.items())
    found = [f"{label}{jax.tree_util.keystr(path)}" for label, value in named
             for path, leaf in jax.tree_util.tree_flatten_with_path(value)[0]
             if path and isinstance(leaf, arguments.SCALARS)]
    more = f" and {len(found) - most} more" if len(found) > most else ""
    return ", ".join(found[:most]) + more


def _leaves_static(plain: Callable, name: str, args: tuple, kwargs: dict[str, Any],
                   swaps: list, nest: tuple[str, ...], given: tuple) -> tuple | None:
    """The entry with every non-array leaf static, where it then traces; else None."""
    fn, args, kwargs = _filtered(plain, name, args, kwargs)
    fn, opts = installing(fn, swaps), dict(NO_STATIC)
    found = discover(fn, args, kwargs, opts, nest, given)
    return None if found.error is not None else (fn, args, kwargs, opts, found)


def _nnx_split(fn: Callable, args: tuple, kwargs: dict[str, Any],
               ) -> tuple[Callable, tuple, dict[str, Any]]:
    """Flax NNX modules as their state, merged back inside the trace."""
    from flax import nnx

    if isinstance(fn, types.MethodType):
        args = (fn.__self__, *args)
        fn = fn.__func__
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
    """``fn`` as a function of its array leaves alone, the rest fixed (static)."""
    leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
    holes, arrays = arguments.Holes.of(leaves)

    def entry(arrays):
        a, k = jax.tree_util.tree_unflatten(tree, holes.fill(arrays))
        return fn(*a, **k)

    entry.__name__ = entry.__qualname__ = short_name(name).replace("(", "_").rstrip(")")
    return entry, (arrays,), {}


def binding_swaps(namespace: dict[str, Any], values: dict[str, Any] | None,
                  ) -> list[tuple[Binding, Any, Any]]:
    """Swaps that set each of ``values`` as a global of ``namespace`` (a sweep's value)."""
    return [(b := Binding(namespace, k), b.original, v) for k, v in (values or {}).items()]


def _linen_class(found: Found) -> type | None:
    """The Flax linen module class whose ``__call__`` ``found`` is (None: it is not one)."""
    return found.self_type if _is_linen(found.self_type) and found.code.co_name == "__call__" \
        else None


def _is_linen(cls: type | None) -> bool:
    return any(k.__module__.startswith("flax.linen") for k in getattr(cls, "__mro__", ()))


def _why_inline(found: Found, ran: set[str]) -> Note | None:
    """Why the helper ``found`` cannot be nested (None: it can)."""
    if found.rules_only:
        return found.rules_only
    qualname = found.code.co_qualname
    outer = qualname.split(".<locals>")[0] if "<locals>" in qualname else None
    if outer is not None and outer in ran:
        return Inline("inline_recreated", outer.rsplit(".", 1)[-1])
    linen = _linen_class(found)
    if linen is not None and found.self_made_before:  # apply's: linen binds it by
        # Module.clone (self.__class__), so a lifted class bound by name is never made
        return Inline("inline_linen_made_before", linen.__name__)
    if _is_linen(found.self_type) and linen is None:
        return Inline("inline_linen_method")
    if found.self_holds_arrays:
        assert found.self_type is not None  # discovery sets both together
        return Inline("inline_self_holds_arrays", found.self_type.__name__)
    if not found.bindings and not functions_of(found.code):
        return Inline("inline_no_function")
    for b in found.bindings:
        if isinstance(b.original, jax.custom_vjp):
            return Inline("inline_custom_vjp")
        if isinstance(b.original, classmethod):
            return Inline("inline_classmethod")
    return None

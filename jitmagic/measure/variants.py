"""Flat and nested variants of one entry function, built without editing it.

A *helper* is a function of the user's own (defined in the same module as the
entry: a notebook's ``__main__`` or a script) that the entry reaches by name,
transitively, including from generator expressions, comprehensions, lambdas
and nested defs. Each variant gets a scratch copy of the entry's globals in
which every helper is re-created with the copy as its globals and rebound:

* ``flat``: every helper is the plain Python function; any ``jax.jit`` the
  user wrote on it is taken off, so everything traces inline.
* ``nested``: every selected helper runs under its own ``jax.jit`` (the user's
  own, with its static arguments, where they wrote one).

The user's namespace and function objects are never modified.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np

from ..errors import InputError

_JIT_OPTIONS = ("static_argnums", "static_argnames", "donate_argnums", "donate_argnames",
                "inline", "keep_unused")


@dataclass(frozen=True)
class Helper:
    """A user function the entry reaches: its plain function and the user's jit, if any."""

    name: str
    function: types.FunctionType
    jit_options: dict[str, Any] | None = None  # None: the user did not jit it

    @property
    def user_jitted(self) -> bool:
        return self.jit_options is not None


@dataclass
class Variant:
    """One way to run the entry: a rebound entry function and the helpers it nests."""

    name: str
    entry: types.FunctionType
    nested: tuple[str, ...]
    notes: list[str] = field(default_factory=list)


def unwrap(obj: Any) -> tuple[types.FunctionType | None, dict[str, Any] | None]:
    """The plain function behind ``obj`` and the options of the user's jit on it."""
    if isinstance(obj, types.FunctionType):
        return obj, None
    inner = getattr(obj, "__wrapped__", None)
    info = getattr(obj, "_jit_info", None)
    if isinstance(inner, types.FunctionType) and info is not None:
        opts = {k: getattr(info, k) for k in _JIT_OPTIONS if hasattr(info, k)}
        return inner, opts
    return None, None


def find_helpers(entry: Callable, namespace: dict[str, Any]) -> dict[str, Helper]:
    """Helpers reachable by name from ``entry``, in order of first reach."""
    fn, _ = unwrap(entry)
    if fn is None:
        return {}
    module = fn.__globals__.get("__name__")
    found: dict[str, Helper] = {}
    todo = [fn.__code__]
    while todo:
        for name in _global_names(todo.pop()):
            if name in found or name not in namespace:
                continue
            helper_fn, opts = unwrap(namespace[name])
            if helper_fn is None or helper_fn is fn:
                continue
            if helper_fn.__globals__.get("__name__") != module:
                continue  # a library function (jnp.sin, ...): not the user's to nest
            found[name] = Helper(name, helper_fn, opts)
            todo.append(helper_fn.__code__)
    return found


def build_variant(name: str, entry: Callable, namespace: dict[str, Any],
                  nest: Iterable[str] | None = None) -> Variant:
    """Build the ``flat`` or ``nested`` variant of ``entry`` over a copy of ``namespace``.

    ``nest`` limits the jits the tool adds in the nested variant; helpers the
    user jitted themselves keep their jit there.
    """
    if name not in ("flat", "nested"):
        raise ValueError(f"unknown variant {name!r}")
    if name == "flat":
        return Variant(name, rebuild(entry, namespace, lambda h, plain: plain), ())
    chosen = None if nest is None else set(nest)
    nested: list[str] = []
    notes: list[str] = []

    def wrap(h: Helper, plain: types.FunctionType) -> Callable:
        if not (h.user_jitted or chosen is None or h.name in chosen):
            return plain
        nested.append(h.name)
        return jit_like_user(h, plain, notes)

    return Variant(name, rebuild(entry, namespace, wrap), tuple(nested), notes)


def rebuild(entry: Callable, namespace: dict[str, Any],
            wrap: Callable[[Helper, types.FunctionType], Callable]) -> types.FunctionType:
    """The entry over a scratch copy of ``namespace`` in which each helper is ``wrap``-ped.

    ``wrap(helper, plain)`` gets the helper's plain function, rebound to the
    scratch namespace, and returns what the helper's name should hold there:
    every variant (flat, nested, one helper nested, timed for attribution) is
    one choice of ``wrap``.
    """
    fn = entry_function(entry)
    scratch = dict(namespace)
    for h in find_helpers(entry, namespace).values():
        scratch[h.name] = wrap(h, rebind(h.function, scratch))
    return rebind(fn, scratch)


def jit_like_user(h: Helper, plain: types.FunctionType,
                  notes: list[str] | None = None) -> Callable:
    """``plain`` under the user's own jit options, or under :func:`auto_jit` if they had none."""
    return jax.jit(plain, **h.jit_options) if h.user_jitted else auto_jit(plain, notes)


def entry_function(entry: Callable) -> types.FunctionType:
    """The user's Python function behind ``entry``; refuse anything else, clearly."""
    fn, _ = unwrap(entry)
    if fn is None:
        raise InputError(_not_a_function(entry))
    return fn


def _not_a_function(entry: Any) -> str:
    """What ``entry`` is instead of a function of the user's, and what to write."""
    if isinstance(entry, functools.partial):
        inner = getattr(entry.func, "__name__", type(entry.func).__name__)
        return (f"the entry is a functools.partial of `{inner}`, not a Python function of "
                f"yours: write the call out in one, e.g. `def f(x): return {inner}(x, ...)` "
                "with the arguments the partial fixed, and end with `f(...)`.")
    if callable(entry) and not isinstance(entry, types.BuiltinFunctionType) and not hasattr(
            entry, "__name__"):
        cls = type(entry).__name__
        var = cls.lower() if cls.lower() != cls else f"my_{cls}"
        return (f"the entry is an instance of class `{cls}` (called through its __call__), "
                f"not a Python function of yours: wrap the call in one, e.g. "
                f"`{var} = {cls}(...)` then `def f(x): return {var}(x)`, and end with `f(...)`.")
    name = getattr(entry, "__name__", type(entry).__name__)
    return (f"the entry `{name}` is a {type(entry).__name__}, not a Python function of yours: "
            f"end with a call of your own function, e.g. `model(x)`, not `print(model(x))`; "
            f"wrap anything else in one (`def f(x): return {name}(x)`).")


def rebind(fn: types.FunctionType, namespace: dict[str, Any]) -> types.FunctionType:
    """A copy of ``fn`` whose global names resolve in ``namespace``."""
    new = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    new.__dict__.update(fn.__dict__)
    new.__dict__.pop("__wrapped__", None)
    return new


def is_static(value: Any) -> bool:
    """Whether ``jax.jit`` should treat an argument as static: no array leaf, hashable."""
    if _has_array(value):
        return False
    try:
        hash(value)
    except TypeError:
        return False
    return True


def check_arguments(entry: str, args: tuple, kwargs: dict[str, Any]) -> None:
    """Refuse an argument that ``jax.jit`` can neither trace nor hold static."""
    named = [(f"argument {i + 1}", a) for i, a in enumerate(args)] + list(kwargs.items())
    for label, value in named:
        if is_static(value):
            continue
        bad = [leaf for leaf in jax.tree_util.tree_leaves(value)
               if not (_is_array(leaf) or isinstance(leaf, int | float | complex | bool))]
        if bad:
            raise InputError(
                f"{label} of `{entry}` holds a {type(bad[0]).__name__}, which is neither a JAX "
                f"type nor hashable: pass arrays (or lists, tuples, dicts of arrays), or make "
                f"it hashable so that it can be a static argument.")


def static_split(args: tuple, kwargs: dict[str, Any]) -> dict[str, tuple]:
    """``jax.jit`` options that make every non-array argument static."""
    return {
        "static_argnums": tuple(i for i, a in enumerate(args) if is_static(a)),
        "static_argnames": tuple(sorted(k for k, v in kwargs.items() if is_static(v))),
    }


def auto_jit(fn: types.FunctionType, notes: list[str] | None = None) -> Callable:
    """``jax.jit(fn)`` that makes Python ints, strings, callables ... static per call.

    A call with an argument jit can take neither way (no array in it, and not
    hashable, like a list of Python ints) runs inline instead, and says so in
    ``notes``: tracing those ints would change what the helper does.
    """
    jitted: dict[tuple, Callable] = {}

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if not all(is_static(a) or _has_array(a) for a in (*args, *kwargs.values())):
            _note_once(notes, f"`{fn.__name__}` was left inline for calls with an argument "
                              "that holds no array and is not hashable (so it can be "
                              "neither traced nor static)")
            return fn(*args, **kwargs)
        opts = static_split(args, kwargs)
        key = tuple(opts.values())
        if key not in jitted:
            jitted[key] = jax.jit(fn, **opts)
        return jitted[key](*args, **kwargs)

    del call.__wrapped__  # so that `unwrap` does not mistake it for the user's function
    return call


def _note_once(notes: list[str] | None, note: str) -> None:
    if notes is not None and note not in notes:
        notes.append(note)


def _has_array(value: Any) -> bool:
    return any(_is_array(leaf) for leaf in jax.tree_util.tree_leaves(value))


def _is_array(x: Any) -> bool:
    return isinstance(x, (jax.Array, np.ndarray, np.generic, jax.core.Tracer))


def _global_names(code: types.CodeType) -> Iterable[str]:
    """Names a code object (and the code nested in it) may look up as globals."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _global_names(const)

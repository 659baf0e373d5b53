"""The batch the orderings map over: one example stacked, or the user's batch under
``--in-axes``, checked (batchable, memory) before anything is built or timed."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp

from ...errors import InputError, UserCodeError, user_traceback
from ...model.stats.units import fmt_bytes
from ...options.values import DEFAULT_BATCH
from ..calls.arguments import Holes, is_static
from ..sampling.conditions import persistent_cache_off

#: Outputs alive at once while the orderings run: the reference's, a cold one, a steady one.
OUTPUTS_KEPT = 3


@dataclass(frozen=True)
class Batched:
    """The entry bound to its static arguments, ready to map: ``fn(*args)`` under ``in_axes``."""

    fn: Callable
    args: tuple
    in_axes: int | tuple[Any, ...]
    batch: int
    built: bool  # True: jitmagic stacked one example; False: the user's batch
    requested: Any = 0  # in_axes as the user wrote them (for the report)


def prepare_batch(fn: Callable, args: tuple, kwargs: dict[str, Any], *,
                  batch: int | None = None, in_axes: Any = None) -> Batched:
    """Check the call can be batched as asked (memory included) and build the batch."""
    if batch is not None and batch < 1:
        raise InputError(f"--batch must be at least 1, not {batch}")
    if in_axes is not None and batch is not None:
        raise InputError("--batch builds a batch from one example; --in-axes says the arguments "
                         "already are one. Use one of them.")
    if held := [k for k, v in kwargs.items() if not is_static(v, scalars_static=True)]:
        raise InputError(f"--vmap maps positional arguments only, but {', '.join(held)} is "
                         "passed by keyword with an array: pass it positionally.")
    fn = functools.partial(fn, **kwargs) if kwargs else fn
    static, arrays = _split(args)
    if all(static):
        raise InputError("--vmap needs an array argument to batch, but the call passes none: "
                         "call the function with an array, e.g. `f(jnp.ones((32, 32)))`.")
    bound = _bind_static(fn, args, static)
    axes, n, shaped = _batch_shapes(arrays, static, batch, in_axes)
    out = _check_traces(bound, shaped, axes)
    check_memory(_nbytes(shaped) if in_axes is None else 0, _nbytes(out), n, in_axes is None)
    if in_axes is not None:
        return Batched(bound, arrays, axes, n, False, in_axes)
    with persistent_cache_off():  # jitmagic's own jit_stack: not into the user's cache
        stacked = tuple(jax.tree_util.tree_map(lambda x: jnp.stack([x] * n), a)
                        for a in arrays)
    return Batched(bound, stacked, 0, n, True)


def _split(args: tuple) -> tuple[list[bool], tuple]:
    """(whether each argument holds no array, the array arguments as JAX arrays)."""
    static = [is_static(a, scalars_static=True) for a in args]
    return static, tuple(jax.tree_util.tree_map(jnp.asarray, a)
                         for a, s in zip(args, static, strict=True) if not s)


def _batch_shapes(arrays: tuple, static: list[bool], batch: int | None, in_axes: Any,
                  ) -> tuple[int | tuple[Any, ...], int, tuple]:
    """(the axes mapped, the batch size, the batch as the check traces it: shapes only)."""
    if in_axes is None:
        n = DEFAULT_BATCH if batch is None else batch
        return 0, n, tuple(jax.tree_util.tree_map(
            lambda x: jax.ShapeDtypeStruct((n, *x.shape), x.dtype), a) for a in arrays)
    axes = _array_axes(in_axes, static)
    return axes, _batch_size(arrays, axes, static), arrays


def one_example(args: tuple, in_axes: Any) -> tuple:
    """The call's arguments at index 0 of each mapped axis: the example the variants run on."""
    static, arrays = _split(args)
    axes = _array_axes(in_axes, static)
    _batch_size(arrays, axes, static)  # checks every mapped axis exists, with one length
    per_arg = iter(_per_arg(axes, arrays))
    out = list(args)
    positions = [i for i, s in enumerate(static) if not s]
    with persistent_cache_off():  # jitmagic's own jit_take: not into the user's cache
        for i, arg in zip(positions, arrays, strict=True):
            pairs = _leaf_axes(arg, next(per_arg), f"argument {i + 1}")
            leaves = [leaf if ax is None else jnp.take(leaf, 0, axis=ax) for leaf, ax, _ in pairs]
            out[i] = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(arg), leaves)
    return tuple(out)


def _bind_static(fn: Callable, args: tuple, static: list[bool]) -> Callable:
    """``fn`` as a function of its array arguments only (the others are fixed)."""
    flags = iter(static)
    holes, _ = Holes.of(args, lambda _: not next(flags))

    @functools.wraps(fn)
    def bound(*arrays):
        return fn(*holes.fill(arrays))

    bound.__dict__.pop("__wrapped__", None)
    return bound


def _array_axes(in_axes: Any, static: list[bool]) -> int | tuple[Any, ...]:
    """The user's ``in_axes`` restricted to the array arguments (others must be None)."""
    if isinstance(in_axes, int):
        return in_axes
    if not isinstance(in_axes, tuple | list):
        raise InputError(f"--in-axes {in_axes!r}: give one axis for every argument (e.g. 0) "
                         "or a tuple with one entry (an axis, None, or a tree of them) per "
                         "positional argument, as jax.vmap's in_axes.")
    if len(in_axes) != len(static):
        raise InputError(f"--in-axes gives {len(in_axes)} axes but the call has {len(static)} "
                         f"positional argument(s): write one axis (or None) per argument, "
                         f"e.g. `--in-axes {','.join(['0'] + ['None'] * (len(static) - 1))}`.")
    for i, (axis, s) in enumerate(zip(in_axes, static, strict=True)):
        if s and axis is not None:
            raise InputError(f"--in-axes maps argument {i + 1} along axis {axis}, but it holds "
                             "no array: write None for it.")
    axes = tuple(a for a, s in zip(in_axes, static, strict=True) if not s)
    if all(a is None for a in jax.tree_util.tree_leaves(axes)):
        raise InputError("--in-axes maps no array argument: give at least one an axis, "
                         "e.g. `--in-axes 0`.")
    return axes


def _per_arg(axes: int | tuple, arrays: tuple) -> tuple:
    """One axis spec per array argument."""
    return axes if isinstance(axes, tuple) else (axes,) * len(arrays)


def _leaf_axes(arg: Any, spec: Any, label: str) -> list[tuple[Any, int | None, str]]:
    """Every array leaf of one argument with the axis ``spec`` maps it along and its label
    (``argument 1, .step``), or InputError."""
    pairs: list[tuple[Any, int | None, str]] = []

    def collect(path: Any, axis: Any, sub: Any) -> None:
        if axis is not None and not isinstance(axis, int):
            raise InputError(f"--in-axes for {label} holds {axis!r}, which is not an axis: "
                             "use an integer or None.")
        for inner, leaf in jax.tree_util.tree_flatten_with_path(sub)[0]:
            where = jax.tree_util.keystr((*path, *inner))
            pairs.append((leaf, axis, f"{label}, {where}" if where else label))

    try:
        jax.tree_util.tree_map_with_path(collect, spec, arg, is_leaf=lambda x: x is None)
    except InputError:
        raise
    except (ValueError, TypeError, KeyError):
        raise InputError(f"--in-axes for {label} is {spec!r}, which does not fit its structure "
                         f"{jax.tree_util.tree_structure(arg)}: give one axis for the whole "
                         "argument, or a tree of that structure (or a prefix of it) with an "
                         "axis or None at each leaf.") from None
    return pairs


def _batch_size(arrays: tuple, axes: int | tuple, static: list[bool]) -> int:
    """The mapped axis' length, the same for every mapped leaf; ``InputError`` otherwise."""
    labels = [f"argument {i + 1}" for i, s in enumerate(static) if not s]
    sizes: dict[int, str] = {}
    for a, spec, label in zip(arrays, _per_arg(axes, arrays), labels, strict=True):
        for leaf, axis, where in _leaf_axes(a, spec, label):
            if axis is None:
                continue
            if not -leaf.ndim <= axis < leaf.ndim:
                use = (f"use an axis from {-leaf.ndim} to {leaf.ndim - 1}" if leaf.ndim else
                       "a scalar has no axis to map: give it None (a tree of axes for the "
                       "argument, or None for the whole of it)")
                raise InputError(f"--in-axes maps {where} (an array of shape "
                                 f"{tuple(leaf.shape)}) along axis {axis}, which it does not "
                                 f"have: {use}.")
            sizes.setdefault(leaf.shape[axis], f"{where} (shape {tuple(leaf.shape)}, axis {axis})")
    if len(sizes) > 1:
        lengths = "; ".join(f"{where} has length {n}" for n, where in sizes.items())
        raise InputError(f"--in-axes maps axes of different lengths: {lengths}. The batch axis "
                         "must have the same length in every mapped argument.")
    if not sizes:
        raise InputError("--in-axes maps no array: give at least one array an axis, "
                         "e.g. `--in-axes 0`.")
    (size,) = sizes
    if size < 1:
        raise InputError("--in-axes maps an axis of length 0: there is nothing to batch.")
    return size


def _check_traces(fn: Callable, args: tuple, in_axes: Any) -> Any:
    """The output's shapes and dtypes: a function that cannot be batched fails here."""
    try:
        return jax.eval_shape(jax.vmap(fn, in_axes=in_axes), *args)
    except Exception as exc:
        raise UserCodeError("--vmap: the function cannot be batched as asked (jax.vmap(f) "
                            f"raised):\n{user_traceback(exc)}") from None


def _nbytes(tree: Any) -> int:
    """Bytes of every array (or shape-and-dtype) leaf of ``tree``, PRNG keys included."""
    return sum(math.prod(leaf.shape) * _itemsize(leaf.dtype)
               for leaf in jax.tree_util.tree_leaves(tree) if hasattr(leaf, "dtype"))


def _itemsize(dtype: Any) -> int:
    """Bytes per element of ``dtype``: numpy's, ml_dtypes' or a PRNG key's."""
    size = getattr(dtype, "itemsize", None)
    return int(size) if isinstance(size, int) else jnp.dtype(dtype).itemsize


def available_memory() -> int:
    """Bytes of memory the system can give now without swapping."""
    import psutil

    return psutil.virtual_memory().available


def check_memory(arg_bytes: int, out_bytes: int, batch: int, built: bool) -> None:
    """Refuse a batch that would need more than half the available memory, naming one that fits."""
    need = arg_bytes + OUTPUTS_KEPT * out_bytes
    limit = available_memory() // 2
    if need <= limit:
        return
    fits = int(limit // max(need / batch, 1))
    what = "--batch" if built else "a mapped axis of length"
    advice = (f"use {what} {fits} or smaller" if fits >= 1
              else "even a batch of 1 does not fit: use smaller arguments")
    sizes = [fmt_bytes(n) or "0 B" for n in (need, arg_bytes, out_bytes, limit * 2)]
    raise InputError(f"--vmap with a batch of {batch} would need about {sizes[0]} "
                     f"({sizes[1]} of batched arguments and {OUTPUTS_KEPT} outputs of "
                     f"{sizes[2]}), more than half of the {sizes[3]} of memory available: "
                     f"{advice}.")

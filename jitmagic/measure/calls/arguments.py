"""Which arguments of a jitted call are traced and which are static, as ``jax.jit``
decides: array leaves and Python scalars traced, other hashable leaves static."""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from ...errors import InputError

SCALARS = (bool, int, float, complex)


def hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def is_array(x: Any) -> bool:
    """A JAX or NumPy array, a NumPy scalar, or a tracer of one."""
    return isinstance(x, (jax.Array, np.ndarray, np.generic, jax.core.Tracer))


def holds_arrays(x: Any) -> bool:
    """An ordinary object (not a pytree) with arrays among its attributes."""
    if is_array(x) or isinstance(x, (*SCALARS, str, types.FunctionType, type)):
        return False
    attrs = getattr(x, "__dict__", None)
    if not isinstance(attrs, dict) or jax.tree_util.tree_leaves(x) != [x]:
        return False
    return any(is_array(leaf) for v in attrs.values() for leaf in jax.tree_util.tree_leaves(v))


@dataclass(frozen=True)
class Holes:
    """Values with the traced ones taken out (``fill`` puts them back): jit gets only arrays."""

    fixed: tuple
    traced: tuple[int, ...]

    @classmethod
    def of(cls, values: list | tuple, traced: Callable[[Any], bool] = is_array,
           ) -> tuple[Holes, list]:
        """(the holes, the values taken out) of ``values``."""
        where = tuple(i for i, x in enumerate(values) if traced(x))
        fixed = tuple(None if i in where else x for i, x in enumerate(values))
        return cls(fixed, where), [values[i] for i in where]

    def fill(self, arrays: list | tuple) -> list:
        """The values again, ``arrays`` in the holes (in order)."""
        full = list(self.fixed)
        for i, a in zip(self.traced, arrays, strict=True):
            full[i] = a
        return full


#: What tracing raises when a traced Python scalar is used as a Python value: ``range(n)``
#: and ``if n > 0`` (``TypeError``s), ``x[:n]`` (``IndexError``), and a ``ValueError``
#: where it reaches a ``static_argnums`` (not hashable).
SCALAR_MISUSE = (TypeError, IndexError, ValueError)


def is_static(value: Any, scalars_static: bool = False) -> bool:
    """Whether the outer jit holds an argument static: hashable, and no traced leaf."""
    leaves = jax.tree_util.tree_leaves(value)
    return not any(is_array(x) or (not scalars_static and isinstance(x, SCALARS))
                   for x in leaves) and hashable(value)


def static_split(args: tuple, kwargs: dict[str, Any]) -> dict[str, tuple]:
    """``jax.jit`` options that hold every argument with nothing to trace static."""
    return {"static_argnums": tuple(i for i, a in enumerate(args) if is_static(a)),
            "static_argnames": tuple(sorted(k for k, v in kwargs.items() if is_static(v)))}


def check_arguments(entry: str, args: tuple, kwargs: dict[str, Any]) -> None:
    """Refuse an argument that ``jax.jit`` can neither trace nor hold static."""
    named = [(f"argument {i + 1}", a) for i, a in enumerate(args)] + list(kwargs.items())
    for label, value in named:
        leaves = jax.tree_util.tree_leaves(value)
        holder = next((x for x in leaves if holds_arrays(x)), None)
        if holder is not None:
            kind = type(holder).__name__
            raise InputError(
                f"{label} of `{entry}` is a `{kind}`, an ordinary object holding arrays: jit can "
                f"neither trace it nor hold it static (its arrays would be baked in as "
                f"constants). Pass its arrays as arguments, or make `{kind}` a pytree "
                f"(`jax.tree_util.register_dataclass` or `register_pytree_node_class`).")
        if is_static(value):
            continue
        bad = [x for x in leaves if not (is_array(x) or isinstance(x, SCALARS))]
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

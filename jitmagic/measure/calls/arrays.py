"""What counts as an array where jitmagic decides what is traced and what is static."""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

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
    """A list of values with the traced ones taken out: ``fill`` puts arrays back in.

    The one way jitmagic hands ``jax.jit`` only the arrays of a call (an
    ``eqx.filter_jit`` entry's leaves, a nested helper's leaves, ``--vmap``'s
    mapped arguments) while every other value stays fixed, as a static one does.
    """

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

"""What counts as an array where jitmagic decides what is traced and what is static."""

from __future__ import annotations

import types
from typing import Any

import jax
import numpy as np

SCALARS = (bool, int, float, complex)


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

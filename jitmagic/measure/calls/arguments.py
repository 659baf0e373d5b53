"""Which arguments of a jitted call are traced and which are static, as ``jax.jit``
decides: array leaves and Python scalars traced, other hashable leaves static."""

from __future__ import annotations

from typing import Any

import jax

from ...errors import InputError
from .arrays import SCALARS as _SCALARS
from .arrays import hashable
from .arrays import holds_arrays as _holds_arrays
from .arrays import is_array as _is_array

#: What tracing raises when a traced Python scalar is used as a Python value: ``range(n)``
#: and ``if n > 0`` (``TypeError``s), ``x[:n]`` (``IndexError``), and a ``ValueError``
#: where it reaches a ``static_argnums`` (not hashable).
SCALAR_MISUSE = (TypeError, IndexError, ValueError)


def is_static(value: Any, scalars_static: bool = False) -> bool:
    """Whether the outer jit holds an argument static: no array leaf (no Python scalar
    leaf either, unless ``scalars_static``) and hashable."""
    leaves = jax.tree_util.tree_leaves(value)
    return not any(_is_array(x) or (not scalars_static and isinstance(x, _SCALARS))
                   for x in leaves) and hashable(value)


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

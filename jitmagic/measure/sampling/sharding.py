"""Sharded arguments: their mesh, and whether each compiled variant takes its inputs
with the shardings they arrived in (nesting jit must not make XLA reshard them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jax
from jax.sharding import NamedSharding

from ...model.comparison import Sharding
from ..calls.arguments import static_split
from .stages import traced_arguments


def named_shardings(args: tuple, kwargs: dict[str, Any]) -> list[NamedSharding]:
    """The ``NamedSharding`` of every array argument that has one, in argument order."""
    return [leaf.sharding for leaf in jax.tree_util.tree_leaves((args, kwargs))
            if isinstance(leaf, jax.Array) and isinstance(leaf.sharding, NamedSharding)]


def mesh_env(args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``{"mesh_shape": {"x": 8}}`` for the arguments' mesh (several: a list, in argument
    order; ``None`` where none is sharded)."""
    shapes: list[dict[str, int]] = []
    for sharding in named_shardings(args, kwargs):
        shape = {str(k): int(v) for k, v in sharding.mesh.shape.items()}
        if shape not in shapes:
            shapes.append(shape)
    return {"mesh_shape": shapes[0] if len(shapes) == 1 else (shapes or None)}


def kept_input_shardings(compiled: Any, args: tuple, kwargs: dict[str, Any]) -> bool | None:
    """Whether ``compiled`` takes every named-sharded argument with the sharding it has
    (``None``: none is sharded, or the program does not say)."""
    leaves = jax.tree_util.tree_leaves(traced_arguments(None, args, kwargs,
                                                        static_split(args, kwargs)))
    try:
        taken = jax.tree_util.tree_leaves(compiled.input_shardings)
    except Exception:  # a backend or version that does not report them
        return None
    if len(taken) != len(leaves):
        return None
    checked = [want.is_equivalent_to(leaf.sharding, leaf.ndim)
               for leaf, want in zip(leaves, taken, strict=True)
               if isinstance(leaf, jax.Array) and isinstance(leaf.sharding, NamedSharding)]
    return all(checked) if checked else None


def sharding_report(args: tuple, kwargs: dict[str, Any],
                    compiled: Mapping[str, Any]) -> Sharding | None:
    """``Comparison.sharding``: ``None`` where nothing is sharded."""
    shardings = named_shardings(args, kwargs)
    if not shardings:
        return None
    return Sharding(tuple(str(s.spec) for s in shardings),
                    {name: kept_input_shardings(c, args, kwargs) for name, c in compiled.items()})

"""The sentence JAX would write for two input pytrees' difference where writing it raised:
a static argument whose ``__repr__`` raises would fail the user's call only because the
watch turned explanations on. The difference is found with the trees' ``node_data()`` and
``children()``; such a value is said by its type (``<a Config that could not be shown>``)."""

from __future__ import annotations

from typing import Any

#: Where a tree's node differs, as JAX writes it (its explanation reads it back).
DIFFERENT_TREE = ("different input pytree:\n  * at input path {path}, now {new} and before "
                  "{old}, so the pytree node metadata does not match")


def tree_difference(new: Any, old: Any, error: Exception) -> tuple[int, int, str]:
    """JAX's ``(severity, count, sentence)`` of the first node where ``new`` and
    ``old`` differ."""
    path, a, b = _first_difference(new, old, "")
    return 1, 1, DIFFERENT_TREE.format(path=path, new=_node(a), old=_node(b))


def _first_difference(a: Any, b: Any, path: str) -> tuple[str, Any, Any]:
    """(JAX's input path, each tree's ``node_data()``) of the first node that differs."""
    da, db = a.node_data(), b.node_data()
    ca, cb = a.children(), b.children()
    if da is None or db is None or len(ca) != len(cb) or _differ(da, db):
        return path, da, db
    for i, (x, y) in enumerate(zip(ca, cb, strict=True)):
        if _differ(x, y):
            return _first_difference(x, y, path + _key(da, i))
    return path, da, db


def _differ(a: Any, b: Any) -> bool:
    try:
        return bool(a != b)
    except Exception:  # noqa: BLE001 (an __eq__ that raises: they differ, said as such)
        return True


def _key(data: Any, i: int) -> str:
    """The ``i``-th child's part of an input path: ``['n']`` in a dict, else ``[i]``."""
    kind, meta = data
    if kind is dict and isinstance(meta, list | tuple) and i < len(meta):
        return f"[{_shown(meta[i])}]"
    return f"[{i}]"


def _node(data: Any) -> str:
    if data is None:
        return "pytree leaf"
    kind, meta = data
    return f"{kind} with pytree metadata {_shown(meta)}"


def _shown(value: Any) -> str:
    """``repr(value)``; where it raises, its type and that it could not be shown (kept
    in a ``Static(val=...)`` node's form)."""
    try:
        return repr(value)
    except Exception:  # noqa: BLE001 (the user's __repr__)
        val = getattr(value, "val", value) if type(value).__name__ == "Static" else value
        said = f"<a {type(val).__name__} that could not be shown>"
        return f"Static(val={said})" if val is not value else said

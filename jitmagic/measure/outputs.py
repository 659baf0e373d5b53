"""Whether two variants returned the same values: compared leaf by leaf, by tree
shape rather than class identity, as soon as both exist, then dropped."""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np

#: Leaves are compared this many elements at a time, so that a float64 copy
#: (for the difference) never costs more than a few megabytes.
CHUNK = 1 << 18


@dataclass
class OutputDiff:
    """How two outputs differ: ``match``, the largest difference, and where it is.

    ``max_abs_diff`` is None when the structures differ (no values to subtract);
    ``problems`` names each leaf path that differs, first one first.
    """

    match: bool = True
    max_abs_diff: float | None = 0.0
    problems: list[str] = field(default_factory=list)

    def structure(self, path: str, what: str) -> None:
        self.match, self.max_abs_diff = False, None
        self.problems.append(f"{_where(path)}: {what}")

    def values(self, path: str, match: bool, worst: float) -> None:
        if self.max_abs_diff is not None:
            self.max_abs_diff = max(self.max_abs_diff, worst)
        if not match:
            self.match = False
            self.problems.append(f"{_where(path)} (largest difference {worst:.3g})")

    def describe(self) -> str | None:
        """One line naming the first differing leaf (and how many others), or None."""
        if not self.problems:
            return None
        more = len(self.problems) - 1
        others = f"; {more} other leaf differs" if more == 1 else f"; {more} other leaves differ"
        return self.problems[0] + (others if more else "")


def _where(path: str) -> str:
    return f"`{path}`" if path else "the whole output"


def compare_outputs(a: Any, b: Any) -> OutputDiff:
    """Compare two outputs leaf by leaf, within float tolerance, by structure and value.

    Structures are compared by shape, not class identity: node type names, keys
    and static (aux) data by value, so the NamedTuple a cell defines once per
    variant still matches. Values are compared a chunk at a time in float64,
    never a whole output at once.
    """
    diff = OutputDiff()
    _compare_nodes(a, b, "", diff)
    return diff


def _compare_nodes(a: Any, b: Any, path: str, diff: OutputDiff) -> None:
    (ka, ta), (kb, tb) = _one_level(a), _one_level(b)
    node_a, node_b = _node_key(ta), _node_key(tb)
    if node_a is None and node_b is None:
        _compare_leaves(_as_numpy(a), _as_numpy(b), path, diff)
    elif node_a != node_b or [k for k, _ in ka] != [k for k, _ in kb]:
        diff.structure(path, f"{_node_name(ta, a)} vs {_node_name(tb, b)}")
    else:
        for (key, x), (_, y) in zip(ka, kb, strict=True):
            _compare_nodes(x, y, path + key, diff)


def _one_level(tree: Any) -> tuple[list[tuple[str, Any]], Any]:
    """``tree``'s children with their keys (as ``keystr`` writes them), and its treedef."""
    pairs, treedef = jax.tree_util.tree_flatten_with_path(tree, is_leaf=lambda x: x is not tree)
    return [(jax.tree_util.keystr(p), child) for p, child in pairs], treedef


def _node_key(treedef: Any) -> tuple[str, Any] | None:
    """A node's type by name and its static data by value; None for a leaf."""
    data = treedef.node_data()
    return None if data is None else (data[0].__qualname__, _by_value(data[1]))


def _by_value(aux: Any) -> Any:
    """Static data made comparable by value: classes and functions by their names
    (a cell run once per variant defines its own), arrays as bytes."""
    if isinstance(aux, tuple | list):
        return tuple(_by_value(x) for x in aux)
    if isinstance(aux, dict):
        return tuple((k, _by_value(v)) for k, v in aux.items())
    if isinstance(aux, type | types.FunctionType | types.BuiltinFunctionType):
        return ("callable", getattr(aux, "__module__", None), getattr(aux, "__qualname__", None))
    if isinstance(aux, np.ndarray | jax.Array):
        return ("array", np.asarray(aux).dtype.str, np.asarray(aux).shape,
                np.asarray(aux).tobytes())
    return aux


def _node_name(treedef: Any, tree: Any) -> str:
    data = treedef.node_data()
    if data is None:
        return f"a leaf {getattr(tree, 'dtype', type(tree).__name__)}" \
               f"{list(getattr(tree, 'shape', ()))}"
    static = "" if data[1] is None else f" with static data {data[1]!r}"
    return f"{data[0].__qualname__}{static}"


def _compare_leaves(x: np.ndarray, y: np.ndarray, path: str, diff: OutputDiff) -> None:
    if x.shape != y.shape:
        diff.structure(path, f"shape {x.shape} vs {y.shape}")
        return
    numeric = all(np.issubdtype(v.dtype, np.number) or v.dtype == bool for v in (x, y))
    if not numeric:
        diff.values(path, bool(np.array_equal(x, y)), 0.0)
        return
    dtype = np.result_type(x.dtype, y.dtype)
    wide = np.complex128 if np.issubdtype(dtype, np.complexfloating) else np.float64
    exact = not np.issubdtype(dtype, np.inexact)
    rtol, atol = (0.0, 0.0) if exact else _tolerance(dtype)
    xf, yf = x.reshape(-1), y.reshape(-1)
    match, worst = True, 0.0
    for i in range(0, xf.size, CHUNK):
        xc, yc = xf[i:i + CHUNK].astype(wide), yf[i:i + CHUNK].astype(wide)
        d = np.abs(xc - yc)
        if not np.all(np.isnan(d)):
            worst = max(worst, float(np.nanmax(d)))
        match &= bool(np.allclose(xc, yc, rtol=rtol, atol=atol, equal_nan=True))
    diff.values(path, match, worst)


def _as_numpy(x: Any) -> np.ndarray:
    if isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        x = jax.random.key_data(x)
    return np.asarray(x)


def _tolerance(dtype: np.dtype) -> tuple[float, float]:
    bits = np.dtype(dtype).itemsize * 8 // (2 if np.issubdtype(dtype, np.complexfloating) else 1)
    return {16: (1e-2, 1e-3), 32: (1e-4, 1e-5)}.get(bits, (1e-9, 1e-12))


class OutputCheck:
    """Compares each variant's output with the first one's as soon as it exists.

    Measuring keeps no output: the first variant's is held until every other
    variant's has been compared with it, then dropped; the others are dropped
    at once. Only each variant's first output is compared (repeats compute the
    same values).
    """

    def __init__(self, expected: int):
        self.expected = expected
        self.reference: str | None = None
        self._output: Any = None
        self.seen: set[str] = set()
        self.match: bool | None = None
        self.max_abs_diff: float | None = 0.0
        self.problems: list[str] = []

    def add(self, name: str, output: Any) -> None:
        """Take ``name``'s output (the caller drops its own reference)."""
        if name in self.seen:
            return
        self.seen.add(name)
        if self.reference is None:
            self.reference, self._output = name, output
            return
        d = compare_outputs(self._output, output)
        self.match = d.match and self.match is not False
        self.max_abs_diff = None if d.max_abs_diff is None or self.max_abs_diff is None \
            else max(self.max_abs_diff, d.max_abs_diff)
        if d.describe():
            self.problems.append(f"outputs of {self.reference} and {name} differ at "
                                 f"{d.describe()}")
        if len(self.seen) >= self.expected:
            self._output = None

    def result(self) -> tuple[bool | None, float | None]:
        """(match, largest difference); (None, None) until two outputs were compared."""
        return (None, None) if self.match is None else (self.match, self.max_abs_diff)

"""Whether two variants returned the same values: compared leaf by leaf, by tree
shape rather than class identity, as soon as both exist, then dropped.

Each ends ``exact`` (every leaf equal, NaN with NaN), ``rounding`` (a floating leaf
differs within :func:`within_rounding`; integer, bool and key leaves equal) or
``mismatch`` (beyond that, or structures differ); ``docs/outputs.md`` has the rule.
"""

from __future__ import annotations

import math
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ...model.notes import Differs
from .stops import first_line

#: Leaves are compared this many elements at a time, so that a float64 copy
#: (for the difference) never costs more than a few megabytes.
CHUNK = 1 << 18

#: The kinds of a comparison, from best to worst (``Comparison.outputs_kind``).
EXACT, ROUNDING, MISMATCH = "exact", "rounding", "mismatch"
#: Both outputs exist, but jitmagic could not compare their values (the warning says why).
UNCOMPARED = "uncompared"
_RANK = {EXACT: 0, ROUNDING: 1, UNCOMPARED: 2, MISMATCH: 3}


@dataclass
class OutputDiff:
    """How outputs differ: two outputs' leaves (:func:`compare_outputs`), or each variant's
    first output against the first variant's as it comes (:meth:`add`, ``expected`` of them;
    ``kind`` None until two were compared). ``max_abs_diff`` None: structures differ.
    ``leaf``: the first mismatching leaf, else the one with the largest difference within
    rounding (None: all equal); paths are dotted (``layers[0].w``; ``""`` the whole output)."""

    kind: str | None = None
    max_abs_diff: float | None = 0.0
    problems: list[Differs] = field(default_factory=list)
    leaf: str | None = None
    dtype: str | None = None
    expected: int = 0
    reference: str | None = None
    seen: set[str] = field(default_factory=set)
    #: Each other output's comparison with the reference, or what comparing it raised.
    each: dict[str, OutputDiff | Exception] = field(default_factory=dict)
    _largest: float = -1.0  # the largest difference within rounding seen so far
    _output: Any = None
    _computed_in: str | None = None

    @property
    def match(self) -> bool:
        return self.kind in (EXACT, ROUNDING)

    def structure(self, path: str, nodes: list[Node] | None = None,
                  shapes: tuple[tuple[int, ...], ...] = ()) -> None:
        """The structures differ at ``path``: two ``nodes`` (:func:`_node`), or (None)
        two leaves of ``shapes``."""
        self.max_abs_diff = None
        self._take(MISMATCH, path, None)
        if nodes is None:
            self.problems.append(Differs("leaf_differs", path, "shape", 0.0, False, 0, (), (),
                                                 shapes, ()))
            return
        types, dtypes, shapes, statics = zip(*nodes, strict=True)
        self.problems.append(Differs("leaf_differs", path, "node", 0.0, False, 0, nodes=types,
                                         dtypes=dtypes, shapes=shapes, statics=statics))

    def values(self, path: str, kind: str, worst: float, dtype: str, *,
               nonfinite: bool = False) -> None:
        """One leaf's result; ``nonfinite``: its NaN or infinities are not where the
        other's are (``worst`` then is the largest difference of the finite values)."""
        if self.max_abs_diff is not None:
            self.max_abs_diff = max(self.max_abs_diff, worst)
        self._take(kind, path, dtype, worst)
        if kind == MISMATCH:
            self.problems.append(Differs("leaf_differs", path, None, worst, nonfinite, 0,
                                                 (), (), (), ()))

    def _take(self, kind: str, leaf: str | None, dtype: str | None, worst: float = -1.0) -> None:
        """Keep the worse kind, the first mismatch, the largest difference within rounding."""
        larger = kind == ROUNDING == self.kind and worst > self._largest
        if larger or self.kind is None or _RANK[kind] > _RANK[self.kind]:
            self.kind, self.leaf, self.dtype, self._largest = kind, leaf, dtype, worst

    def describe(self) -> Differs | None:
        """The first differing leaf, with how many others differ (None: none does)."""
        if not self.problems:
            return None
        return self.problems[0].replace(others=len(self.problems) - 1)

    def add(self, name: str, output: Any, computed_in: str | None = None) -> None:
        """Take ``name``'s output, of a program computing in ``computed_in`` at its least
        precise; the reference is dropped once all ``expected`` were compared, others at
        once. Never raises: an output that cannot be compared is noted as such."""
        if name in self.seen:
            return
        self.seen.add(name)
        if self.reference is None:
            self.reference, self._output, self._computed_in = name, output, computed_in
            return
        try:
            d = compare_outputs(self._output, output,
                                least_precise([self._computed_in, computed_in]))
        except Exception as exc:  # a leaf numpy cannot read: say so, keep what was measured
            self.each[name] = exc.with_traceback(None)  # its frames would hold the outputs
            self._take(UNCOMPARED, None, None)
            self.problems.append(Differs("outputs_uncompared", self.reference, name,
                                         first_line(exc, named=True)))
        else:
            self.each[name] = d
            self.max_abs_diff = None if d.max_abs_diff is None or self.max_abs_diff is None \
                else max(self.max_abs_diff, d.max_abs_diff)
            self._take(d.kind or EXACT, d.leaf, d.dtype, d._largest)
            found = d.describe()
            if found is not None:
                self.problems.append(Differs("outputs_differ", **found.facts(),
                                                   reference=self.reference, other=name))
        if len(self.seen) >= self.expected:
            self._output = None

    def result(self) -> tuple[bool | None, float | None]:
        """(whether within rounding, largest difference); (None, None) where nothing was
        compared."""
        if self.kind in (None, UNCOMPARED):
            return None, None
        return self.match, self.max_abs_diff

    def details(self) -> dict[str, Any]:
        """What the records keep besides :meth:`result`."""
        return {"outputs_kind": self.kind, "outputs_leaf": self.leaf,
                "outputs_dtype": self.dtype}


def compare_outputs(a: Any, b: Any, computed_in: str | None = None) -> OutputDiff:
    """Compare two outputs leaf by leaf: structures by shape, not class identity (the
    NamedTuple a cell defines once per variant still matches); floating leaves within
    the rounding of ``computed_in`` or their own dtype, whichever is coarser, others
    exactly. No numpy warning or error escapes."""
    diff = OutputDiff(EXACT)
    with np.errstate(all="ignore"):
        _compare_nodes(a, b, "", diff, computed_in)
    return diff


def _compare_nodes(a: Any, b: Any, path: str, diff: OutputDiff,
                   computed_in: str | None = None) -> None:
    (ka, ta), (kb, tb) = _one_level(a), _one_level(b)
    node_a, node_b = _node_key(ta), _node_key(tb)
    if node_a is None and node_b is None:
        _compare_leaves(_as_numpy(a), _as_numpy(b), path, diff, computed_in)
    elif node_a != node_b or [k for k, _ in ka] != [k for k, _ in kb]:
        diff.structure(path, [_node(ta, a), _node(tb, b)])
    else:
        for (key, x), (_, y) in zip(ka, kb, strict=True):
            _compare_nodes(x, y, (path + key).lstrip("."), diff, computed_in)


def _one_level(tree: Any) -> tuple[list[tuple[str, Any]], Any]:
    """``tree``'s children with their :func:`dotted` keys, and its treedef."""
    pairs, treedef = jax.tree_util.tree_flatten_with_path(tree, is_leaf=lambda x: x is not tree)
    return [(dotted(p), child) for p, child in pairs], treedef


def dotted(path: tuple) -> str:
    """A key path as Python would reach the leaf, dotted: ``.params.w_fc``, ``[0].w``,
    ``['a b']`` (:func:`jax.tree_util.keystr` with names that are identifiers as
    attributes); the leading dot is dropped where the path starts."""
    out = ""
    for key in path:
        name = getattr(key, "name", None)
        if name is None and isinstance(getattr(key, "key", None), str):
            name = key.key  # a dict's string key
        if isinstance(name, str) and name.isidentifier():
            out += f".{name}"
        elif hasattr(key, "idx"):
            out += f"[{key.idx}]"
        elif hasattr(key, "key"):
            out += f"[{key.key!r}]"
        else:
            out += jax.tree_util.keystr((key,))
    return out


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


#: A node as :class:`~jitmagic.model.notes.Differs` holds it: its type's name
#: ("" a leaf), a leaf's dtype and shape, and the ``repr`` of its static data ("" none).
Node = tuple[str, str, tuple[int, ...], str]


def _node(treedef: Any, tree: Any) -> Node:
    """``tree``'s top node, as a mismatch of structures names it."""
    data = treedef.node_data()
    if data is None:
        return ("", str(getattr(tree, "dtype", type(tree).__name__)),
                tuple(getattr(tree, "shape", ())), "")
    return data[0].__qualname__, "", (), "" if data[1] is None else repr(data[1])


def _compare_leaves(x: np.ndarray, y: np.ndarray, path: str, diff: OutputDiff,
                    computed_in: str | None = None) -> None:
    if x.shape != y.shape:
        diff.structure(path, shapes=(tuple(x.shape), tuple(y.shape)))
        return
    if not all(_numeric(v.dtype) for v in (x, y)):  # strings, objects: equal or not
        equal = bool(np.array_equal(x, y))
        diff.values(path, EXACT if equal else MISMATCH, 0.0, str(x.dtype))
        return
    floating = [v.dtype for v in (x, y) if jnp.issubdtype(v.dtype, jnp.inexact)]
    if not floating:  # integers, bools, PRNG key data: equal or not
        kind, worst = _exact(x.reshape(-1), y.reshape(-1))
        diff.values(path, kind, worst, str(x.dtype))
        return
    coarse = least_precise([*floating, *([computed_in] if computed_in else [])])
    assert coarse is not None  # a floating leaf is among them
    kind, worst, nonfinite = _floating(x.reshape(-1), y.reshape(-1),
                                       float(jnp.finfo(coarse).eps))
    diff.values(path, kind, worst, coarse, nonfinite=nonfinite)


def _numeric(dtype: np.dtype) -> bool:
    """Numbers and bools, ml_dtypes' (bfloat16, float8) included."""
    return dtype.kind == "b" or bool(jnp.issubdtype(dtype, jnp.number))


def _exact(x: np.ndarray, y: np.ndarray) -> tuple[str, float]:
    """(kind, largest difference) of two flat integer or bool arrays, compared as they
    are (the difference only computed, in float64, to report it)."""
    kind, worst = EXACT, 0.0
    for i in range(0, x.size, CHUNK):
        xc, yc = x[i:i + CHUNK], y[i:i + CHUNK]
        if not np.array_equal(xc, yc):
            kind = MISMATCH
            worst = max(worst, float(np.max(np.abs(xc.astype(np.float64)
                                                   - yc.astype(np.float64)))))
    return kind, worst


def _floating(x: np.ndarray, y: np.ndarray, eps: float) -> tuple[str, float, bool]:
    """(kind, largest finite difference, whether non-finite values differ) of two flat
    arrays, one at least floating. Non-finite values must agree exactly (NaN with NaN,
    the same infinity); finite ones per :func:`within_rounding`."""
    wide = np.complex128 if any(jnp.issubdtype(v.dtype, jnp.complexfloating)
                                for v in (x, y)) else np.float64
    worst, nonfinite_differ = 0.0, False
    size_x = size_y = size_d = 0.0  # 2-norms over the finite elements so far
    for i in range(0, x.size, CHUNK):
        xc, yc = x[i:i + CHUNK].astype(wide), y[i:i + CHUNK].astype(wide)
        both = np.isfinite(xc) & np.isfinite(yc)
        if not np.all(both | (np.isnan(xc) & np.isnan(yc)) | (xc == yc)):
            nonfinite_differ = True
        d = np.abs(xc[both] - yc[both])
        if d.size:
            worst = max(worst, float(np.max(d)))
        size_x, size_y = _norm(size_x, np.abs(xc[both])), _norm(size_y, np.abs(yc[both]))
        size_d = _norm(size_d, d)
    if nonfinite_differ or not math.isfinite(worst):
        return MISMATCH, worst, nonfinite_differ
    if worst == 0.0:
        return EXACT, 0.0, False
    inside = within_rounding(size_d, max(size_x, size_y), eps)
    return (ROUNDING if inside else MISMATCH), worst, False


def least_precise(dtypes: Iterable[Any]) -> str | None:
    """The name of the least precise of floating ``dtypes`` (names or dtypes; None
    skipped): the one whose rounding two results are held to (None: none given)."""
    known = [jnp.dtype(d) for d in dtypes if d is not None]
    return max(known, key=lambda d: float(jnp.finfo(d).eps)).name if known else None


def within_rounding(difference: float, size: float, eps: float) -> bool:
    """Whether a leaf's difference (2-norm over finite elements) is at most ``sqrt(eps)``
    times the larger leaf's 2-norm: agreement in half the dtype's significant digits, as
    reassociation allows and a different program does not (``docs/outputs.md``)."""
    return difference <= math.sqrt(eps) * size


def _norm(so_far: float, v: np.ndarray) -> float:
    """The 2-norm of the numbers behind ``so_far`` (their 2-norm) and of non-negative finite
    ``v``, each chunk scaled by its largest so that squares of large float64 never overflow."""
    top = float(np.max(v)) if v.size else 0.0
    if top == 0.0 or not math.isfinite(top):
        return so_far
    return math.hypot(so_far, top * float(np.sqrt(np.sum(np.square(v / top)))))


def _as_numpy(x: Any) -> np.ndarray:
    """A leaf as a numpy array; a typed PRNG key as its key data (``key<fry>`` has no
    numpy dtype), which two equal keys share."""
    if isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        x = jax.random.key_data(x)
    return np.asarray(x)

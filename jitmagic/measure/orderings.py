"""``vmap(jit(f))`` against ``jit(vmap(f))``: four orderings of one function, measured.

Both orderings end up as one compiled XLA program, but called eagerly,
``vmap(jit(f))`` re-runs batching in Python on every call. This module builds
the batch, measures the four orderings side by side (cold first call, steady
per call, JAX's compile events, jaxpr, StableHLO size) and checks whether the
XLA program each runs is the same as ``jit(vmap(f))``'s.

Rows are interleaved (A B C D A B C D ...) so drift on a shared machine hits
all of them; each row's steady state is timed right after its cold first
call, while its executable is still cached; every raw sample is kept.
No IPython, no matplotlib here.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp

from ..errors import InputError, UserCodeError, user_traceback
from ..model.orderings import ORDERINGS, REFERENCE, SAMPLE_KEYS, OrderingRow, Orderings
from ..options import Options
from .arguments import is_static
from .conditions import frozen_heap, paused_gc, persistent_cache_off
from .monitor import COMPILE_EVENT, Monitor
from .runner import Cold, Sampler
from .stops import Checkpoint
from .structure import count_nested_calls, jaxpr_text

DEFAULT_BATCH = 64
#: Outputs alive at once while the orderings are measured: the reference
#: ordering's (kept for the comparison), the current one's cold output, and a
#: steady-state call's.
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
    """Check the call can be batched as asked and build the batch; ``InputError`` if not.

    Without ``in_axes`` the call's arguments are one example: every array
    leaf (arguments may be pytrees: dicts, lists of tuples, NamedTuples) is
    stacked ``batch`` times along a new leading axis. With ``in_axes`` they
    already are a batch, mapped as ``jax.vmap`` would, pytree prefixes
    included. Non-array arguments (Python numbers, strings, ...) are bound,
    not mapped. Everything is checked, memory included, before anything is
    built or measured.
    """
    if batch is not None and batch < 1:
        raise InputError(f"--batch must be at least 1, not {batch}")
    if in_axes is not None and batch is not None:
        raise InputError("--batch builds a batch from one example; --in-axes says the arguments "
                         "already are one. Use one of them.")
    if kwargs:
        held = all(is_static(v, scalars_static=True) for v in kwargs.values())
        fn = functools.partial(fn, **kwargs) if held else _refuse_array_kwargs(kwargs)
    static = [is_static(a, scalars_static=True) for a in args]
    if all(static):
        raise InputError("--vmap needs an array argument to batch, but the call passes none: "
                         "call the function with an array, e.g. `f(jnp.ones((32, 32)))`.")
    bound = _bind_static(fn, args, static)
    arrays = tuple(jax.tree_util.tree_map(jnp.asarray, a) for a, s in zip(args, static,
                                                                           strict=True) if not s)
    if in_axes is None:
        n, axes = DEFAULT_BATCH if batch is None else batch, 0
        shaped = tuple(jax.tree_util.tree_map(
            lambda x: jax.ShapeDtypeStruct((n, *x.shape), x.dtype), a) for a in arrays)
    else:
        axes = _array_axes(in_axes, static)
        n, shaped = _batch_size(arrays, axes, static), arrays
    out = _check_traces(bound, shaped, axes)
    check_memory(_nbytes(shaped) if in_axes is None else 0, _nbytes(out), n, in_axes is None)
    if in_axes is not None:
        return Batched(bound, arrays, axes, n, False, in_axes)
    stacked = tuple(jax.tree_util.tree_map(lambda x: jnp.stack([x] * n), a) for a in arrays)
    return Batched(bound, stacked, 0, n, True)


#: What a comparison with ``--in-axes`` says about its flat and nested variants.
ONE_EXAMPLE_NOTE = ("flat/nested measured on one example: index 0 of the batch along each "
                    "mapped axis (--in-axes); the orderings on the whole batch")


def one_example(args: tuple, in_axes: Any) -> tuple:
    """The call's arguments with index 0 taken along each mapped axis of ``in_axes``
    (``jax.vmap``'s, pytree prefixes included): the one example the flat and nested
    variants run on, since the arguments themselves are a batch. Arguments mapped
    with None, and those that hold no array, are unchanged."""
    static = [is_static(a, scalars_static=True) for a in args]
    axes = _array_axes(in_axes, static)
    arrays = tuple(jax.tree_util.tree_map(jnp.asarray, a) for a, s in zip(args, static,
                                                                           strict=True) if not s)
    _batch_size(arrays, axes, static)  # checks every mapped axis exists, with one length
    per_arg = iter(axes if isinstance(axes, tuple) else (axes,) * len(arrays))
    out = list(args)
    positions = [i for i, s in enumerate(static) if not s]
    for i, arg in zip(positions, arrays, strict=True):
        pairs = _leaf_axes(arg, next(per_arg), f"argument {i + 1}")
        leaves = [leaf if ax is None else jnp.take(leaf, 0, axis=ax) for leaf, ax in pairs]
        out[i] = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(arg), leaves)
    return tuple(out)


def _refuse_array_kwargs(kwargs: dict[str, Any]) -> Callable:
    names = ", ".join(k for k, v in kwargs.items() if not is_static(v, scalars_static=True))
    raise InputError(f"--vmap maps positional arguments only, but {names} is passed by keyword "
                     "with an array: pass it positionally.")


def _bind_static(fn: Callable, args: tuple, static: list[bool]) -> Callable:
    """``fn`` as a function of its array arguments only (the others are fixed)."""
    positions = [i for i, s in enumerate(static) if not s]

    @functools.wraps(fn)
    def bound(*arrays):
        full = list(args)
        for i, a in zip(positions, arrays, strict=True):
            full[i] = a
        return fn(*full)

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


def _leaf_axes(arg: Any, spec: Any, label: str) -> list[tuple[Any, int | None]]:
    """Every array leaf of one argument with the axis ``spec`` maps it along.

    ``spec`` is an axis, None, or a tree prefix of the argument (as ``jax.vmap``
    reads it); one that does not fit is an ``InputError`` naming the argument.
    """
    pairs: list[tuple[Any, int | None]] = []

    def collect(axis: Any, sub: Any) -> None:
        if axis is not None and not isinstance(axis, int):
            raise InputError(f"--in-axes for {label} holds {axis!r}, which is not an axis: "
                             "use an integer or None.")
        pairs.extend((leaf, axis) for leaf in jax.tree_util.tree_leaves(sub))

    try:
        jax.tree_util.tree_map(collect, spec, arg, is_leaf=lambda x: x is None)
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
    per_arg = axes if isinstance(axes, tuple) else (axes,) * len(arrays)
    labels = [f"argument {i + 1}" for i, s in enumerate(static) if not s]
    sizes: dict[int, str] = {}
    for a, spec, label in zip(arrays, per_arg, labels, strict=True):
        for leaf, axis in _leaf_axes(a, spec, label):
            if axis is None:
                continue
            if not -leaf.ndim <= axis < leaf.ndim:
                raise InputError(f"--in-axes maps {label} (an array of shape "
                                 f"{tuple(leaf.shape)}) along axis {axis}, which it does not "
                                 f"have: use an axis from {-leaf.ndim} to {leaf.ndim - 1}.")
            sizes.setdefault(leaf.shape[axis], f"{label} (shape {tuple(leaf.shape)}, axis {axis})")
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
    """Trace ``vmap(f)`` abstractly, so a function that cannot be batched fails before
    timing; the output's shapes and dtypes."""
    try:
        return jax.eval_shape(jax.vmap(fn, in_axes=in_axes), *args)
    except Exception as exc:
        raise UserCodeError("--vmap: the function cannot be batched as asked (jax.vmap(f) "
                            f"raised):\n{user_traceback(exc)}") from None


def _nbytes(tree: Any) -> int:
    """Bytes of every array (or shape-and-dtype) leaf of ``tree``."""
    return sum(math.prod(leaf.shape) * jnp.dtype(leaf.dtype).itemsize
               for leaf in jax.tree_util.tree_leaves(tree) if hasattr(leaf, "dtype"))


def available_memory() -> int:
    """Bytes of memory the system can give now without swapping."""
    import psutil

    return psutil.virtual_memory().available


def check_memory(arg_bytes: int, out_bytes: int, batch: int, built: bool) -> None:
    """Refuse a batch whose arrays would need more than half the available memory.

    The estimate counts what measuring the orderings creates: the stacked
    arguments (when jitmagic builds the batch) and :data:`OUTPUTS_KEPT`
    outputs alive at once. The refusal names the largest batch that fits.
    """
    need = arg_bytes + OUTPUTS_KEPT * out_bytes
    limit = available_memory() // 2
    if need <= limit:
        return
    fits = int(limit // max(need / batch, 1))
    what = "--batch" if built else "a mapped axis of length"
    advice = (f"use {what} {fits} or smaller" if fits >= 1
              else "even a batch of 1 does not fit: use smaller arguments")
    raise InputError(f"--vmap with a batch of {batch} would need about {_fmt_bytes(need)} "
                     f"({_fmt_bytes(arg_bytes)} of batched arguments and {OUTPUTS_KEPT} outputs "
                     f"of {_fmt_bytes(out_bytes)}), more than half of the "
                     f"{_fmt_bytes(limit * 2)} of memory available: {advice}.")


def _fmt_bytes(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


# --------------------------------------------------------------------------- programs


def ordering_functions(fn: Callable, in_axes: Any) -> dict[str, Callable]:
    """Fresh callables for the four orderings (fresh, so no cache is shared between runs)."""
    return {
        "jit(vmap(f))": jax.jit(jax.vmap(fn, in_axes=in_axes)),
        "vmap(jit(f))": jax.vmap(jax.jit(fn), in_axes=in_axes),
        "vmap(f)": jax.vmap(fn, in_axes=in_axes),
        "jit(vmap(jit(f)))": jax.jit(jax.vmap(jax.jit(fn), in_axes=in_axes)),
    }


_METADATA = re.compile(r',?\s*metadata=\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}')
_NAME = re.compile(r"%[\w.\-]+")
_PARAM = re.compile(r"([(,]\s*)[\w.\-]+:")
#: Debug tables (source files, functions, stack frames) printed before the computations.
_DEBUG_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def normalized_hlo(text: str) -> list[str]:
    """Optimized HLO text, instruction by instruction, with names and metadata stripped.

    Names are renumbered in order of first appearance, so references between
    instructions still have to agree; the module's name line and the debug
    tables (source locations) are dropped: as raw text two compilations of the
    same program differ only there.
    """
    names: dict[str, str] = {}

    def rename(m: re.Match) -> str:
        return names.setdefault(m.group(0), f"%{len(names)}")

    out, in_table = [], False
    for line in text.splitlines():
        line = line.strip()
        if line in _DEBUG_TABLES:
            in_table = True
        if not line:
            in_table = False
        if in_table or not line or line.startswith("HloModule"):
            continue
        line = _METADATA.sub("", line)
        if line.endswith("{"):  # a computation's header: its parameters are named too
            line = _PARAM.sub(r"\1_:", line)
        out.append(_NAME.sub(rename, line))
    return out


def _program(name: str, fn: Callable, args: tuple) -> tuple[Any, Any, Any] | None:
    """(jaxpr, lowered, compiled) of the XLA program an ordering runs on the batch.

    For ``vmap(jit(f))`` that is the program its inner jit runs on the batch;
    ``vmap(f)`` runs op by op and has no single program (None).
    """
    if name.startswith("jit("):
        traced = fn.trace(*args)
        lowered = traced.lower()
        return traced.jaxpr, lowered, lowered.compile()
    closed = jax.make_jaxpr(fn)(*args)
    inner = [e for e in closed.jaxpr.eqns if e.primitive.name in ("jit", "pjit")]
    # Only vmap(jit(f)) has a program of its own: the one jit taking exactly the
    # batch's arguments. vmap(f) may show jax.numpy's internal jits (x.mean()): not it.
    if (name != "vmap(jit(f))" or len(inner) != 1
            or list(inner[0].invars) != list(closed.jaxpr.invars)):
        return closed, None, None
    from jax.extend.core import jaxpr_as_fun

    body = inner[0].params["jaxpr"]
    # the inner jit's body takes the batch's leaves, flattened (pytree arguments)
    lowered = jax.jit(jaxpr_as_fun(body)).trace(*jax.tree_util.tree_leaves(args)).lower()
    return closed, lowered, lowered.compile()


# --------------------------------------------------------------------------- measuring


def measure_orderings(b: Batched, *, entry: str = "f", repeat: int = 3,
                      number: int | None = None, deadline: float = math.inf,
                      check: Checkpoint | None = None) -> Orderings:
    """Measure the four orderings of ``b`` side by side, interleaved, from cleared caches.

    Ctrl-C or passing ``deadline`` (a ``time.perf_counter()`` value; or ``check``,
    the measurement's own checkpoint) stops after the current call; what was
    measured is kept, the programs are not compared, and ``stopped`` says why.
    """
    Options(repeat=repeat, number=number)  # refused before anything runs
    runs = Sampler({n: OrderingSubject(n, b) for n in ORDERINGS}, SAMPLE_KEYS, "ordering")
    monitor = Monitor()
    check = check or Checkpoint(deadline=deadline, entry=entry)
    with (persistent_cache_off(), monitor.listening(), frozen_heap(),
          check.catching_interrupts()):
        runs.measure(repeat, number, monitor, check, what="orderings")
        hlo = {} if runs.stopped else _describe_programs(runs, b, check)
    errors = {n: user_traceback(exc) for n, exc in runs.errors.items()}
    match, diff = runs.outputs_match()
    rows = {n: OrderingRow(name=n, samples=runs.samples[n], execute_loops=runs.loops.get(n, 0),
                           same_program=_same(hlo, n), error=errors.get(n),
                           **runs.shape.get(n, {}))
            for n in ORDERINGS}
    return Orderings(entry=entry, batch=b.batch, in_axes=b.requested, built_batch=b.built,
                     rows=rows, outputs_match=match, max_abs_diff=diff,
                     warnings=(*(f"{n} failed:\n{e}" for n, e in errors.items()),
                               *runs.outputs.problems), stopped=runs.stopped)


def _describe_programs(runs: Sampler, b: Batched,
                       check: Checkpoint) -> dict[str, list[str] | None]:
    """Each measured ordering's program (see :func:`_describe_program`), compiled after
    all timings; a stop between two of them leaves the rest out."""
    hlo = {}
    check.at("orderings")
    for n, cold in runs.last.items():
        check.begin(f"comparing programs ({n})")
        hlo[n] = _describe_program(n, cold.call, b.args, runs.shape[n])
    return hlo


@dataclass(frozen=True)
class OrderingSubject:
    """One ordering as a sampler row: its cold first call is one interval, caches cleared."""

    name: str
    b: Batched
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    warm_up: bool = True  # each repeat's callables are fresh: one call off the slow path

    @property
    def args(self) -> tuple:
        return self.b.args

    def cold(self, monitor: Monitor, check: Checkpoint) -> Cold:
        check.begin("first call")
        jax.clear_caches()
        fn = ordering_functions(self.b.fn, self.b.in_axes)[self.name]
        with paused_gc():
            t0 = time.perf_counter()
            out = jax.block_until_ready(fn(*self.b.args))
            t1 = time.perf_counter()
        compiles = [s for t, e, s, _ in monitor.durations if e == COMPILE_EVENT and t0 <= t <= t1]
        return Cold({"first_call_s": t1 - t0, "compile_event_s": sum(compiles)}, fn, out,
                    facts={"compile_events": len(compiles)})

    def describe(self, cold: Cold) -> dict[str, Any]:
        return {}  # the programs are compared after all timings: see _describe_program


def _describe_program(name: str, fn: Callable, args: tuple,
                      shape: dict[str, Any]) -> list[str] | None:
    """Add the jaxpr, StableHLO size and HLO count of ``name``'s program to ``shape``;
    return its normalized optimized HLO (None: no single program)."""
    jaxpr, lowered, compiled = _program(name, fn, args)
    shape.update(jaxpr_eqns=len(jaxpr.eqns), nested_calls=count_nested_calls(jaxpr),
                 jaxpr_text=jaxpr_text(jaxpr))
    if lowered is None:
        return None
    hlo = normalized_hlo(compiled.as_text() or "")
    shape.update(stablehlo_bytes=len(lowered.as_text().encode()),
                 hlo_instructions=sum(" = " in line for line in hlo))
    return hlo


def _same(hlo: dict[str, list[str] | None], name: str) -> bool | None:
    """Whether ``name`` runs the same optimized XLA program as the reference ordering."""
    ref, mine = hlo.get(REFERENCE), hlo.get(name)
    return None if ref is None or mine is None else ref == mine


# --------------------------------------------------------------------------- one call


def compare_orderings(fn: Callable, /, *args: Any, batch: int | None = None,
                      in_axes: Any = None, repeat: int = 3, number: int | None = None,
                      **kwargs: Any) -> Orderings:
    """Measure ``jit(vmap(f))`` against ``vmap(jit(f))`` (and two references) on a batch.

    ``fn(*args, **kwargs)`` is one example, stacked ``batch`` times (default
    64); with ``in_axes`` (as ``jax.vmap``'s) ``args`` already are the batch.
    """
    b = prepare_batch(fn, args, kwargs, batch=batch, in_axes=in_axes)
    return measure_orderings(b, entry=getattr(fn, "__name__", "f"), repeat=repeat,
                             number=number)


def add_orderings(comparison: Any, b: Batched | None, *, repeat: int, number: int | None,
                  deadline: float = math.inf, check: Checkpoint | None = None) -> Any:
    """``comparison`` with the orderings of ``b`` measured into ``comparison.orderings``.

    Nothing is measured without a batch, or when the comparison itself was
    stopped (interrupted or out of time): it comes back as it was. Orderings
    that stop are marked PARTIAL themselves (``orderings.stopped``); the finished
    comparison is not, and ``Comparison.stopped_anywhere`` keeps what comes after
    them from running.
    """
    if b is None or comparison.stopped:
        return comparison
    measured = measure_orderings(b, entry=comparison.entry, repeat=repeat, number=number,
                                 deadline=deadline, check=check)
    return with_orderings(comparison, measured)


def with_orderings(comparison: Any, orderings: Orderings) -> Any:
    """A copy of ``comparison`` that holds ``orderings``."""
    return dataclasses.replace(comparison, orderings=orderings)


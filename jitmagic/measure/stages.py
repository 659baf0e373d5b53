"""Honest timings of JAX's stages: cold trace, lower, compile, first call; steady execute.

Rules kept here (see ``shared/guides/measuring-jax.md``):

* every cold sample starts from ``jax.clear_caches()`` (``jit.clear_cache()``
  would leave nested helpers warm), with the persistent compilation cache off;
* the garbage collector is emptied before and paused during each timed run, so
  the previous variant's garbage is not collected inside this one's interval;
* every interval that produces arrays ends in ``block_until_ready``;
* JAX's own clock (``jax.monitoring``) is recorded beside ours as a cross-check.

This module imports neither IPython nor matplotlib: scripts can use it directly.
"""

from __future__ import annotations

import gc
import math
import os
import platform
import re
import signal
import threading
import time
import timeit
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np

from ..model.progress import Progress
from ..model.stats import median
from .variants import static_split

TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
LOWER_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
CACHE_HIT_EVENT = "/jax/compilation_cache/cache_hits"
#: How far JAX's own event may differ from our interval before we say so.
#: ``.lower()`` does a little more than its event covers, hence the wider bound.
TOLERANCE = {"trace_s": 0.10, "lower_s": 0.25, "compile_s": 0.10}
#: Below this absolute gap a relative disagreement is timer noise, not news.
TOLERANCE_ABS_S = 0.002
AUTORANGE_TARGET_S = 0.2


@dataclass
class Monitor:
    """Records ``jax.monitoring`` events while active; registers nothing after exit."""

    durations: list[tuple[float, str, float, str | None]] = field(default_factory=list)
    events: list[str] = field(default_factory=list)

    def _on_duration(self, event: str, secs: float, **kw: Any) -> None:
        self.durations.append((time.perf_counter(), event, secs, kw.get("fun_name")))

    def _on_event(self, event: str, **kw: Any) -> None:
        self.events.append(event)

    @contextmanager
    def listening(self) -> Iterator[Monitor]:
        jax.monitoring.register_event_duration_secs_listener(self._on_duration)
        jax.monitoring.register_event_listener(self._on_event)
        try:
            yield self
        finally:
            _unregister(jax.monitoring.unregister_event_duration_listener, self._on_duration)
            _unregister(jax.monitoring.unregister_event_listener, self._on_event)

    def seconds(self, event: str, fun_name: str, start: float, end: float) -> float:
        """JAX's own seconds for ``event`` on ``fun_name`` reported within [start, end]."""
        return sum(s for t, e, s, f in self.durations
                   if e == event and f == fun_name and start <= t <= end)


def _unregister(unregister: Callable, listener: Callable) -> None:
    with suppress(AssertionError, ValueError, KeyError):  # never registered: nothing to undo
        unregister(listener)


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Move what exists now out of the collector's sight for a whole measurement.

    ``paused_gc`` collects before every timed interval; with the long-lived
    heap (JAX, the user's session) frozen, each of those collections scans
    only what the measurement itself created, which keeps them cheap. (Garbage
    frozen here is collected as usual after ``unfreeze``.) If the user froze
    the heap themselves (``gc.get_freeze_count() > 0``), it is left exactly as
    they froze it: ``unfreeze`` would release their objects too.
    """
    mine = gc.get_freeze_count() == 0
    if mine:
        gc.freeze()
    try:
        yield
    finally:
        if mine:
            gc.unfreeze()


@contextmanager
def paused_gc() -> Iterator[None]:
    """Collect now, then keep the collector out of the timed interval (as ``timeit`` does)."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def persistent_cache_off() -> Iterator[bool]:
    """Turn JAX's persistent (disk) compilation cache off; restore the user's setting.

    Yields whether a cache directory was set (and so had to be switched off).
    Whether the cache is used is decided once per process, so it is reset on
    both sides for the switch to count.
    """
    from jax._src import compilation_cache

    was_on = jax.config.jax_enable_compilation_cache
    had_dir = bool(jax.config.jax_compilation_cache_dir)
    if not (was_on and had_dir):
        yield False
        return
    compilation_cache.reset_cache()
    jax.config.update("jax_enable_compilation_cache", False)
    try:
        yield True
    finally:
        jax.config.update("jax_enable_compilation_cache", was_on)
        compilation_cache.reset_cache()


#: A second Ctrl-C within this many seconds of the first abandons the measurement.
ABANDON_S = 5.0
#: A steady-state timing loop asks whether to stop at least this often (seconds).
POLL_S = 0.1
#: What each stage is called once it has finished (stop reasons say "after trace").
FINISHED = {"tracing": "trace", "lowering": "lowering", "XLA compile": "XLA compile",
            "first call": "first call", "steady state": "steady state"}


class Stop(Exception):
    """Measurement stopped between stages; ``times`` holds the stages that finished."""

    def __init__(self, reason: str, times: dict[str, float] | None = None):
        super().__init__(reason)
        self.reason = reason
        self.times = times or {}


class Interrupted(BaseException):
    """Raised by the Ctrl-C handler inside a Python stage (trace, lower) to stop at once.

    A ``BaseException``, so that an ``except Exception`` in the user's traced code
    cannot swallow it; :meth:`Checkpoint.running` turns it into :class:`Stop`.
    """


@dataclass
class Checkpoint:
    """Asked between stages: has the user pressed stop, or has the time limit passed?

    One checkpoint runs a whole measurement (variants, orderings, attribution,
    advice, every point of a sweep), so once anything stops nothing after it
    starts. While ``catching_interrupts`` is active, Ctrl-C (or Jupyter's stop
    button) stops a Python stage (tracing, lowering) at once, and only sets a
    flag during an XLA compile or a call (cutting a compile leaves it running in
    the background and has crashed JAX later): the measurement stops at the next
    boundary. A second Ctrl-C within :data:`ABANDON_S` seconds raises
    ``KeyboardInterrupt`` wherever the measurement is. Before each stage the
    checkpoint tells ``progress`` where the measurement is (never inside a
    timed interval).
    """

    deadline: float = math.inf
    interrupted: bool = False
    progress: Callable[[Progress], None] | None = None
    entry: str = ""
    started: float = field(default_factory=time.perf_counter)
    point: str | None = None  # a sweep's current value, for progress
    _done: str | None = None  # the last thing finished: a stop is "after" it
    _where: tuple = ("comparison", None, 0, 0, "variant")  # what, row, repeat, repeats, noun
    _part: tuple = ("", 0.0, 0, 0)  # what, when it began, units done, units in all
    _sweep: tuple | None = None  # sweep began, points done, points in all, point began
    _python: bool = False
    _pressed: float | None = None
    _depth: int = 0

    def __call__(self, done: str, times: dict[str, float] | None = None) -> None:
        if self.interrupted:
            raise Stop(f"interrupted by the user after {done}", times)
        if time.perf_counter() > self.deadline:
            raise Stop(f"stopped by --timeout after {done}", times)
        self._done = done

    def poll(self, stage: str, times: dict[str, float] | None = None) -> None:
        """Inside a long stage (a steady-state loop), between two of its calls: stop now?"""
        if self.interrupted or time.perf_counter() > self.deadline:
            cause = "interrupted by the user" if self.interrupted else "stopped by --timeout"
            raise Stop(f"{cause} during {stage} of {self.position()}", times)

    def begin(self, stage: str, times: dict[str, float] | None = None) -> None:
        """Before ``stage`` starts: stop if due (once anything has finished), else tell
        ``progress`` where the measurement is."""
        if self._done is not None:
            self(self._done, times)
        self.tell(stage)

    @contextmanager
    def running(self, stage: str, times: dict[str, float] | None = None,
                python: bool = False) -> Iterator[None]:
        """Around one stage: in a ``python`` one Ctrl-C stops at once (``Stop``)."""
        outer, self._python = self._python, python
        try:
            yield
        except Interrupted:
            raise Stop(f"interrupted by the user during {stage} of {self.position()}",
                       times) from None
        finally:
            self._python = outer
        self._done = FINISHED.get(stage, stage)

    @contextmanager
    def mode(self, python: bool) -> Iterator[None]:
        """Within: Ctrl-C raises ``Interrupted`` at once (``python``: the user's own
        Python code runs) or only sets the flag (compiles, calls, measuring code)."""
        outer, self._python = self._python, python
        try:
            yield
        finally:
            self._python = outer

    def at(self, what: str, row: str | None = None, repeat: int = 0, repeats: int = 0,
           noun: str = "variant", units: tuple[int, int] = (0, 0)) -> None:
        """Where the measurement is: ``what`` part, ``row``, round ``repeat`` of ``repeats``;
        ``units`` (done, in all) of the part, for the estimate of what is left."""
        self._where = (what, row, repeat, repeats, noun)
        if self._part[0] != what or units[0] == 0:
            self._part = (what, time.perf_counter(), *units)
        else:
            self._part = (what, self._part[1], *units)

    def sweep_at(self, label: str, index: int, count: int) -> None:
        """A sweep is about to measure its value ``index`` (from 0) of ``count``."""
        now = time.perf_counter()
        began = now if self._sweep is None else self._sweep[0]
        self._sweep = (began, index, count, now)
        self.point = f"{label} {index + 1}/{count}"

    def position(self) -> str:
        what, row, repeat, repeats, noun = self._where
        if row is None:
            return f"the {what}"
        return f"the {row} {noun}'s run {repeat} of {repeats}"

    def tell(self, stage: str, done: bool = False) -> None:
        """Give ``progress`` a :class:`Progress` for ``stage`` (nothing without one)."""
        if self.progress is None:
            return
        what, row, repeat, repeats, _ = self._where
        now = time.perf_counter()
        self.progress(Progress(self.entry, what, stage, now - self.started, row, repeat,
                               repeats, self._left(now), self.point, done))

    def _left(self, now: float) -> float | None:
        """Seconds left, from the pace so far: of the sweep once one point has run,
        else of the current part once one round of it has run."""
        if self._sweep is not None and self._sweep[1] > 0:
            began, done, count, point_began = self._sweep
            return max(0.0, (point_began - began) / done * count - (now - began))
        _, began, done, total = self._part
        if self._where[2] < 2 or done == 0:
            return None
        return (now - began) / done * (total - done)

    @contextmanager
    def catching_interrupts(self) -> Iterator[Checkpoint]:
        """Ctrl-C handled as the class says while active; nested uses share one handler."""
        if threading.current_thread() is not threading.main_thread() or self._depth:
            self._depth += 1
            try:
                yield self  # signal handlers can only be set from the main thread
            finally:
                self._depth -= 1
            return

        def request_stop(signum: int, frame: Any) -> None:
            now = time.monotonic()
            if self._pressed is not None and now - self._pressed < ABANDON_S:
                raise KeyboardInterrupt("a second Ctrl-C: the measurement was abandoned")
            self._pressed, self.interrupted = now, True
            if self._python:
                raise Interrupted()

        previous = signal.signal(signal.SIGINT, request_stop)
        self._depth += 1
        try:
            yield self
        finally:
            self._depth -= 1
            signal.signal(signal.SIGINT, previous)


@dataclass
class ColdRun:
    """One cold pass through the stages, with the artefacts for structure counts."""

    times: dict[str, float]
    events: dict[str, float]
    traced: Any
    lowered: Any
    compiled: Any
    jitted: Callable
    output: Any


def cold_run(fn: Callable, args: tuple, kwargs: dict, monitor: Monitor,
             check: Checkpoint | None = None, opts: dict[str, Any] | None = None) -> ColdRun:
    """Time trace → lower → compile from cleared caches, then a fresh first call.

    ``check`` is asked before every stage; it raises :class:`Stop` (carrying the
    stages timed so far) to end the measurement early. Each stage is its own
    timed interval, so that progress is told between them, never inside one.
    ``opts`` are the outer jit's options (default: arrays and Python scalars
    traced, everything else static).
    """
    check = check or Checkpoint()
    opts = static_split(args, kwargs) if opts is None else opts
    name = fn.__name__
    times: dict[str, float] = {}
    jax.clear_caches()
    jitted = jax.jit(fn, **opts)
    traced, trace = timed_stage(check, "tracing", times, "trace_s",
                                lambda: jitted.trace(*args, **kwargs), python=True)
    lowered, lower = timed_stage(check, "lowering", times, "lower_s", traced.lower, python=True)
    compiled, comp = timed_stage(check, "XLA compile", times, "compile_s", lowered.compile)
    events = {
        "trace_s": monitor.seconds(TRACE_EVENT, name, *trace),
        "lower_s": monitor.seconds(LOWER_EVENT, f"jit({name})", *lower),
        "compile_s": monitor.seconds(COMPILE_EVENT, f"jit({name})", *comp),
    }
    check.begin("first call", times)
    jax.clear_caches()
    jitted = jax.jit(fn, **opts)
    out, _ = timed_stage(check, "first call", times, "first_call_s",
                         lambda: jax.block_until_ready(jitted(*args, **kwargs)), ask=False)
    return ColdRun(times, events, traced, lowered, compiled, jitted, out)


def timed_stage(check: Checkpoint, stage: str, times: dict[str, float], key: str,
                run: Callable[[], Any], python: bool = False,
                ask: bool = True) -> tuple[Any, tuple[float, float]]:
    """``run()`` timed as one interval (collector paused) into ``times[key]``; the
    checkpoint is asked (``ask``) and told before the interval, never inside it.
    Returns (its value, (start, end))."""
    if ask:
        check.begin(stage, times)
    with check.running(stage, times, python), paused_gc():
        t0 = time.perf_counter()
        value = run()
        t1 = time.perf_counter()
    times[key] = t1 - t0
    return value, (t0, t1)


def steady_timer(jitted: Callable, args: tuple, kwargs: dict, output: Any) -> timeit.Timer:
    """A ``timeit.Timer`` whose statement is one call that waits for its result."""
    if isinstance(output, jax.Array):
        def stmt():
            jitted(*args, **kwargs).block_until_ready()
    else:
        def stmt():
            jax.block_until_ready(jitted(*args, **kwargs))
    return timeit.Timer(stmt, timer=time.perf_counter)


def autorange(timer: timeit.Timer, target_s: float = AUTORANGE_TARGET_S,
              check: Checkpoint | None = None) -> tuple[int, float]:
    """``timeit``'s autorange idea, (loops, seconds per loop): grow the loop count
    until one timing takes ``target_s``. Instead of timeit's fixed 1-2-5 steps it
    jumps to the count the last timing predicts (at most 100× at once), so that
    calibration wastes a few calls rather than a second of the user's time.
    """
    number = 1
    while True:
        t = timer.timeit(number)
        if t >= target_s:
            return number, t / number
        if check:
            check.poll("steady state")
        predicted = math.ceil(number * 1.1 * target_s / max(t, 1e-9))
        number = max(2 * number, min(100 * number, predicted))


def time_per_call(timer: timeit.Timer, loops: int | None, number: int | None,
                  check: Checkpoint | None = None) -> tuple[int, float]:
    """One steady-state sample: (loop count, seconds per call).

    The first sample (``loops`` None) fixes the loop count, ``number`` if given,
    else auto-ranged; later samples reuse it, so that every sample of a row is
    comparable.
    """
    if loops is None:
        if number is None:
            return autorange(timer, check=check)
        timer.timeit(1)  # the first call after a compile takes a slower path
        loops = number
    return loops, timed_calls(timer, loops, check) / loops


def timed_calls(timer: timeit.Timer, loops: int, check: Checkpoint | None = None) -> float:
    """Seconds for ``loops`` calls. With ``check``, timed in chunks of about
    :data:`POLL_S`, asking ``check.poll`` between them, so a stop is seen soon
    however large ``loops`` is; the ``Stop``'s
    reason says where it stopped (a sample cut short is not kept)."""
    if check is None:
        return timer.timeit(loops)
    total, done, chunk = 0.0, 0, 1
    while done < loops:
        n = min(chunk, loops - done)
        t = timer.timeit(n)
        total, done = total + t, done + n
        if done < loops:
            check.poll("steady state")
        chunk = max(1, min(100 * n, int(n * POLL_S / max(t, 1e-9))))
    return total


def structure(run: ColdRun) -> dict[str, Any]:
    """Counts that explain the timings: equations, nested calls, IR sizes."""
    jaxpr = run.traced.jaxpr
    hlo = run.lowered.as_text()
    return {
        "jaxpr_eqns": count_equations(jaxpr),
        "jaxpr_eqns_top": len(jaxpr.eqns),
        "nested_calls": count_nested_calls(jaxpr),
        "stablehlo_bytes": len(hlo.encode()),
        "stablehlo_calls": len(re.findall(r"\bcall @", hlo)),
        "compiled_calls": len(re.findall(r"\bcall\(", run.compiled.as_text() or "")),
    }


def distinct_jaxprs(jaxpr: Any) -> list[Any]:
    """``jaxpr`` and every distinct sub-jaxpr it holds (loop and cond bodies, custom
    rules, checkpoints, nested jit calls), each once.

    JAX's trace cache hands back the same jaxpr object for repeated calls of a
    helper with equal argument types, so one object is one body the compiler
    sees once: a helper jitted and called 16 times is one body plus 16 call
    equations, while the same helper inlined is 16 copies of its body.
    """
    seen: dict[int, Any] = {}
    stack = [getattr(jaxpr, "jaxpr", jaxpr)]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen[id(current)] = current
        for eqn in current.eqns:
            stack.extend(_sub_jaxprs(eqn))
    return list(seen.values())


def count_equations(jaxpr: Any) -> int:
    """Equations in ``jaxpr`` and its distinct sub-jaxprs (see :func:`distinct_jaxprs`)."""
    return sum(len(j.eqns) for j in distinct_jaxprs(jaxpr))


def count_nested_calls(jaxpr: Any) -> int:
    """jit/pjit equations in a jaxpr, counted recursively through sub-jaxprs: every
    call as it happens (a call inside a helper called twice counts twice)."""
    total = 0
    for eqn in getattr(jaxpr, "eqns", ()):
        total += eqn.primitive.name in ("jit", "pjit")
        for sub in _sub_jaxprs(eqn):
            total += count_nested_calls(sub)
    return total


def _sub_jaxprs(eqn: Any) -> Iterator[Any]:
    """The jaxprs an equation holds in its parameters (bodies, branches, rules, callees)."""
    for value in eqn.params.values():
        for sub in value if isinstance(value, tuple | list) else (value,):
            inner = getattr(sub, "jaxpr", sub)
            if hasattr(inner, "eqns"):
                yield inner


def jaxpr_text(jaxpr: Any, max_lines: int = 300) -> str:
    """The jaxpr as text, cut to ``max_lines`` (a flat trace can have thousands)."""
    lines = str(jaxpr).splitlines()
    if len(lines) <= max_lines:
        return "\n".join(lines)
    return "\n".join(lines[:max_lines] + [f"... {len(lines) - max_lines} more lines"])


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


def disagreements(entry: str, variant: str, stages: dict[str, list[float]],
                  events: dict[str, list[float]]) -> list[str]:
    """Warnings where JAX's own clock disagrees with ours beyond the tolerance."""
    out = []
    for phase, tol in TOLERANCE.items():
        ours, theirs = median(stages.get(phase)), median(events.get(phase))
        if math.isnan(ours) or math.isnan(theirs):
            continue
        gap = abs(ours - theirs)
        if theirs == 0:
            out.append(f"{variant}: JAX reported no {phase[:-2]} event for `{entry}` "
                       f"(was it served from a cache?)")
        elif gap > tol * ours and gap > TOLERANCE_ABS_S:
            out.append(f"{variant}: {phase[:-2]} measured {ours * 1e3:.1f} ms but JAX's own "
                       f"event says {theirs * 1e3:.1f} ms ({gap / ours:.0%} apart)")
    return out


def environment(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Where the numbers came from."""
    devices = jax.devices()
    return {
        "jax": jax.__version__,
        "jaxlib": _jaxlib_version(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "backend": jax.default_backend(),
        "devices": sorted({d.device_kind for d in devices}),
        "device_count": len(devices),
        "cpu_count": os.cpu_count(),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "x64": bool(jax.config.jax_enable_x64),
        **(extra or {}),
    }


def _jaxlib_version() -> str:
    import jaxlib

    return getattr(jaxlib, "__version__", "unknown")

"""Honest timings of JAX's stages: cold trace, lower, compile, first call; steady execute.

Every cold sample starts from ``jax.clear_caches()`` (``jit.clear_cache()`` would leave
nested helpers warm) with the persistent cache off; the collector is emptied before
and paused during each timed run; every interval ends in ``block_until_ready``; JAX's
own clock (``jax.monitoring``) is kept beside ours (``docs/measuring.md``).
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import platform
import re
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jaxlib

from ...model.rows import FROM_EVENTS, FROM_STAGED, VARIANTS, cpu_key
from ...model.stats.rule import json_number
from ..calls.arguments import static_split
from . import clocks, contention, fresh
from .conditions import paused_gc
from .lockstep import lockstep_of
from .monitor import COMPILE_EVENT, LOWER_EVENT, TRACE_EVENT, Monitor
from .stops import POLL_S, Checkpoint, Stop

#: A steady-state sample takes this share of its row's cold first call (the steady state
#: is then about a tenth of a comparison's wall time, benchmarks/wait.py) ...
STEADY_SHARE = 0.05
#: ... within these bounds (s): the floor still averages thousands of microsecond calls;
#: the ceiling is timeit's own.
STEADY_FLOOR_S, STEADY_CEILING_S = 0.01, 0.2
#: The most calls one auto-ranged timing makes (the ceiling takes under 10^5 at JAX's
#: fastest dispatch; this binds only where the clock barely moves, a patched one).
MOST_STEADY_CALLS = 10**6
#: The most calls timed between two asks of the checkpoint, so Ctrl-C is seen soon.
POLL_CALLS = 10**5


def steady_target(first_call_s: float) -> float:
    """Seconds a steady-state sample takes, for a row whose first call took that."""
    return min(STEADY_CEILING_S, max(STEADY_FLOOR_S, STEADY_SHARE * first_call_s))


@dataclass
class ColdRun:
    """One cold run of a variant: its timings, and the artefacts for structure counts."""

    times: dict[str, float]
    events: dict[str, float]
    traced: Any
    lowered: Any
    compiled: Any
    jitted: Callable
    output: Any
    #: Where ``times``' stages came from (``model.rows.FROM_EVENTS`` or ``FROM_STAGED``).
    stages_from: str = FROM_STAGED


def own_program(fn: Callable, label: str) -> Callable:
    """``fn`` named for its row (``g_nested``), so each row's program is an XLA module of
    its own name as by hand; the flat row keeps the user's name. On a TPU v5e two programs
    compiled in turn under one name moved towards each other: 1.2× apart where by hand
    they are 1.5× (benchmarks/tpu_order.py, ``samename``). A fresh child that samples one
    row alone keeps the user's name for it: nothing else compiles there, and the user's
    own program (``jax.jit(g)`` with ``f`` jitted) is named so."""
    if label == VARIANTS[0] or fresh.alone():
        return fn
    name = "_".join((getattr(fn, "__name__", "entry"), re.sub(r"\W+", "_", label)))

    @functools.wraps(fn)
    def program(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    program.__name__ = program.__qualname__ = name
    return program


#: JAX's duration events for the stages, by sample key, and whose name each carries.
STAGE_EVENTS = (("trace_s", TRACE_EVENT, "{}"), ("lower_s", LOWER_EVENT, "jit({})"),
                ("compile_s", COMPILE_EVENT, "jit({})"))


def first_call_run(fn: Callable, args: tuple, kwargs: dict, monitor: Monitor,
                   check: Checkpoint | None = None,
                   opts: dict[str, Any] | None = None) -> ColdRun:
    """The cold first call as the user pays it, one interval from cleared caches; its
    stages are JAX's events inside it (where one is missing, :func:`staged_run`)."""
    check = check or Checkpoint()
    opts, jitted = cold_jit(fn, args, kwargs, opts)
    name = fn.__name__
    out, times, stages, window = timed_first_call(
        jitted, name, lambda: jax.block_until_ready(jitted(*args, **kwargs)), monitor, check)
    known = {key: secs for key, secs in stages.items() if secs}
    if len(known) < len(stages):  # the stages cannot be told apart: time them one by one
        return staged_run(fn, args, kwargs, monitor, check, opts)
    return ColdRun(times | known | stage_cpu(monitor, name, window), {}, None, None, None,
                   jitted, out, FROM_EVENTS)


@dataclass(frozen=True)
class Lowering:
    """One untimed lowering, to compile cold at several settings, and its dynamic arguments."""

    lowered: Any
    args: tuple
    kwargs: dict[str, Any]


def lower_once(fn: Callable, args: tuple, kwargs: dict,
               opts: dict[str, Any] | None = None) -> Lowering | None:
    """``fn`` lowered untimed from cleared caches (``compiler_options`` left to each
    compile); None where its dynamic arguments' tree is not the lowering's."""
    if opts is not None:
        opts = {k: v for k, v in opts.items() if k != "compiler_options"}
    opts, jitted = cold_jit(fn, args, kwargs, opts)
    lowered = jitted.lower(*args, **kwargs)
    dynamic = traced_arguments(fn, args, kwargs, opts)
    if jax.tree_util.tree_structure(dynamic) != lowered.in_tree:
        return None
    return Lowering(lowered, *dynamic)


def traced_arguments(fn: Callable | None, args: tuple, kwargs: dict,
                     opts: dict[str, Any]) -> tuple[tuple, dict[str, Any]]:
    """``args`` and ``kwargs`` without those ``opts`` hold static, by position or name."""
    nums = opts.get("static_argnums", ())
    names = opts.get("static_argnames", ())
    nums = {n % len(args) if args else n for n in ((nums,) if isinstance(nums, int) else nums)}
    names = set((names,) if isinstance(names, str) else names)
    try:
        params = list(inspect.signature(fn).parameters) if fn is not None else []
    except (TypeError, ValueError):  # no signature (a builtin): the options as written
        params = []
    nums |= {params.index(n) for n in names if n in params}
    names |= {params[i] for i in nums if i < len(params)}
    return (tuple(a for i, a in enumerate(args) if i not in nums),
            {k: v for k, v in kwargs.items() if k not in names})


def compiled_first_call(lowering: Lowering, name: str, options: dict[str, Any],
                        monitor: Monitor, check: Checkpoint) -> ColdRun:
    """A cold XLA compile of ``lowering`` with ``options`` and its first call, one
    interval; ``compile_s`` from JAX's event inside it, where one came."""
    jax.clear_caches()
    made: dict[str, Any] = {}

    def call() -> Any:
        # always a dict: ``compile()`` without options would hand back a cached program
        made["compiled"] = lowering.lowered.compile(compiler_options=dict(options))
        return jax.block_until_ready(made["compiled"](*lowering.args, **lowering.kwargs))

    out, times, stages, window = timed_first_call(lowering.lowered, name, call, monitor, check)
    compile_s = stages["compile_s"]
    if compile_s:
        times["compile_s"] = compile_s
        mark = monitor.cpu_at(COMPILE_EVENT, f"jit({name})", window.start, window.end)
        if mark is not None:
            times[cpu_key("compile_s")] = max(0.0, mark - window.cpu_start)
    return ColdRun(times, {}, None, lowering.lowered, made["compiled"], made["compiled"],
                   out, FROM_EVENTS)


def timed_first_call(jitted: Any, name: str, call: Callable[[], Any], monitor: Monitor,
                     check: Checkpoint, stage: str = "first call"
                     ) -> tuple[Any, dict[str, float], dict[str, float | None], Window]:
    """``call()`` (blocking) timed as one interval: (its output, the interval's seconds
    on both clocks, each stage's seconds from JAX's events inside it or None, its
    :class:`Window`). Ctrl-C stops it at once while Python traces and lowers, and only
    sets the flag once XLA compiles (or reads the persistent cache)."""
    times = dict[str, float]()

    def compiling(event: str, fun_name: str | None) -> None:
        if event == LOWER_EVENT and fun_name == f"jit({name})":
            check.leave_python()  # lowered: XLA compiles from here on

    check.begin(stage, times)
    with monitor.calling(compiling):
        out, window = timed_stage(check, stage, times, "first_call_s", call, python=True,
                                  ask=False)
    stages = {key: monitor.seconds(event, who.format(name), window.start, window.end) or None
              for key, event, who in STAGE_EVENTS}
    return out, times, stages, window


class Window(NamedTuple):
    """A timed interval's start and end (``clocks.wall()``) and CPU seconds at start."""

    start: float
    end: float
    cpu_start: float


def stage_cpu(monitor: Monitor, name: str, window: Window) -> dict[str, float]:
    """Each stage's CPU seconds inside a first call, between the events that end the
    stages; empty where an event lacks its reading."""
    marks = [monitor.cpu_at(event, who.format(name), window.start, window.end)
             for _, event, who in STAGE_EVENTS]
    ends = [m for m in marks if m is not None]
    if len(ends) != len(marks):
        return {}
    starts = [window.cpu_start, *ends[:-1]]
    return {cpu_key(key): max(0.0, end - begin)
            for (key, _, _), begin, end in zip(STAGE_EVENTS, starts, ends, strict=True)}


def cold_jit(fn: Callable, args: tuple, kwargs: dict,
             opts: dict[str, Any] | None) -> tuple[dict[str, Any], Any]:
    """(the outer jit's options, a fresh ``jax.jit`` of ``fn``) with JAX's caches cleared."""
    opts = static_split(args, kwargs) if opts is None else opts
    jax.clear_caches()
    return opts, jax.jit(fn, **opts)


def warm_artefacts(run: ColdRun, args: tuple, kwargs: dict) -> ColdRun:
    """``run`` with its programs, taken untimed from the caches its first call filled."""
    if run.traced is None:
        jitted: Any = run.jitted  # a jax.jit wrapper, whose ``trace`` typing cannot see
        run.traced = jitted.trace(*args, **kwargs)
        run.lowered = run.traced.lower()
        run.compiled = run.lowered.compile()
    return run


def staged_run(fn: Callable, args: tuple, kwargs: dict, monitor: Monitor,
               check: Checkpoint | None = None, opts: dict[str, Any] | None = None) -> ColdRun:
    """Trace → lower → compile from cleared caches, each its own interval, then a fresh
    cold first call: where JAX reports no stage events. A :class:`Stop` carries the
    stages so far."""
    check = check or Checkpoint()
    opts, jitted = cold_jit(fn, args, kwargs, opts)
    name, times = fn.__name__, dict[str, float]()
    made, windows = staged_programs(check, jitted, args, kwargs, times, then="first call")
    made.events = {key: monitor.seconds(event, who.format(name), window.start, window.end)
                   for (key, event, who), window in zip(STAGE_EVENTS, windows, strict=True)}
    jax.clear_caches()
    made.jitted = jax.jit(fn, **opts)
    made.output, _ = timed_stage(check, "first call", times, "first_call_s",
                                 lambda: jax.block_until_ready(made.jitted(*args, **kwargs)),
                                 ask=False)
    return made


def staged_programs(check: Checkpoint, jitted: Any, args: tuple, kwargs: dict,
                    times: dict[str, float], compiling: str = "XLA compile",
                    then: str | None = None) -> tuple[ColdRun, tuple[Window, ...]]:
    """Trace, lowering and compile of ``jitted``, each timed into ``times`` (then the stage
    ``then`` begun): (what they made, their windows). A :class:`Stop` carries what the
    finished stages made, for their structure counts."""
    made = ColdRun(times, {}, None, None, None, jitted, None)
    try:
        made.traced, trace = timed_stage(check, "tracing", times, "trace_s",
                                         lambda: jitted.trace(*args, **kwargs), python=True)
        made.lowered, lower = timed_stage(check, "lowering", times, "lower_s",
                                          made.traced.lower, python=True)
        made.compiled, comp = timed_stage(check, compiling, times, "compile_s",
                                          made.lowered.compile)
        if then is not None:
            check.begin(then, times)
    except Stop as stop:
        stop.artefact = made if made.traced is not None else None
        raise
    return made, (trace, lower, comp)


def timed_stage(check: Checkpoint, stage: str, times: dict[str, float], key: str,
                run: Callable[[], Any], python: bool = False,
                ask: bool = True) -> tuple[Any, Window]:
    """(``run()``, its :class:`Window`), timed with the collector paused into
    ``times[key]``; the checkpoint is asked (``ask``) before, never inside."""
    if ask:
        check.begin(stage, times)
    busy = key == "first_call_s"  # how busy the machine was: read for the cold run
    with check.running(stage, times, python), paused_gc():
        before = contention.read(busy)
        t0 = clocks.wall()
        value = run()
        t1 = clocks.wall()
        after = contention.read(busy)
    clocks.advanced(t1 - t0, 1)
    times[key] = t1 - t0
    taken = contention.since(before, after, busy)
    times[cpu_key(key)] = taken.pop("cpu_s")
    times.update(taken)
    return value, Window(t0, t1, before.cpu_s)


class SteadyTimer(timeit.Timer):
    """A ``timeit.Timer`` on :data:`.clocks.wall` (not the ``perf_counter`` test frameworks
    patch) that notes each timing's CPU seconds in ``spent`` (timeit reads it in pairs)."""

    def __init__(self, stmt: Callable[[], None]):
        self.spent: list[float] = []
        self._began: float | None = None
        super().__init__(stmt, timer=self._clock)

    def _clock(self) -> float:
        cpu = clocks.cpu()
        if self._began is None:
            self._began = cpu
        else:
            self.spent.append(cpu - self._began)
            self._began = None
        return clocks.wall()


def steady_timer(jitted: Callable, args: tuple, kwargs: dict, output: Any) -> SteadyTimer:
    """A timer whose statement is one call that waits for its result."""
    if isinstance(output, jax.Array):
        def stmt():
            jitted(*args, **kwargs).block_until_ready()
    else:
        def stmt():
            jax.block_until_ready(jitted(*args, **kwargs))
    return SteadyTimer(stmt)


def autorange(timer: SteadyTimer, target_s: float = STEADY_CEILING_S,
              check: Checkpoint | None = None) -> tuple[int, float, float]:
    """(loops, seconds and CPU seconds per loop) of the first timing to reach
    ``target_s``: timeit's autorange, but jumping to the count the last timing predicts
    (at most 100×) instead of 1-2-5 steps, so calibration wastes few calls."""
    step = lockstep_of(check)  # under several processes: process 0's target, the slowest
    number, target_s = 1, step.decide("the steady-state target", target_s)
    while True:
        t, cpu = timed_calls(timer, number, check)
        slowest = step.slowest("the steady loop count", t)
        if slowest >= target_s or number >= MOST_STEADY_CALLS:
            return number, t / number, cpu / number
        if check:
            check.poll("steady state")
        predicted = math.ceil(number * 1.1 * target_s / max(slowest, 1e-9))
        number = min(MOST_STEADY_CALLS, max(2 * number, min(100 * number, predicted)))


def time_per_call(timer: SteadyTimer, loops: int | None, number: int | None,
                  check: Checkpoint | None = None,
                  target_s: float = STEADY_CEILING_S) -> tuple[int, float, float]:
    """One steady-state sample: (loop count, seconds and CPU seconds per call). The
    first (``loops`` None) fixes the count that later ones reuse, so they compare."""
    if loops is None:
        if number is None:
            return autorange(timer, target_s, check)
        timer.timeit(1)  # the first call after a compile takes a slower path
        loops = number
    wall, cpu = timed_calls(timer, loops, check)
    return loops, wall / loops, cpu / loops


def timed_calls(timer: SteadyTimer, loops: int,
                check: Checkpoint | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds for ``loops`` calls; with ``check``, in chunks of about
    :data:`POLL_S` with ``check.poll`` between them."""
    made, total, done, chunk = len(timer.spent), 0.0, 0, loops if check is None else 1
    while done < loops:
        n = min(chunk, loops - done)
        t = timer.timeit(n)
        clocks.advanced(t, n)
        total, done = total + t, done + n
        if done < loops and check is not None:
            check.poll("steady state")
        chunk = max(1, min(100 * n, POLL_CALLS, int(n * POLL_S / max(t, 1e-9))))
    return total, math.fsum(timer.spent[made:])


def environment(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Where the numbers came from."""
    devices = jax.devices()
    return {
        "jax": jax.__version__,
        "jaxlib": getattr(jaxlib, "__version__", "unknown"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "backend": jax.default_backend(),
        "devices": sorted({d.device_kind for d in devices}),
        "device_count": len(devices),
        "cpu_count": os.cpu_count(),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        # a property JAX adds to its Config at run time, unseen by mypy (jax.config.read
        # takes this one only by an exception JAX marks as temporary)
        "x64": bool(jax.config.jax_enable_x64),  # type: ignore[attr-defined]
        "cpu_tick_s": json_number(clocks.cpu_tick()),  # what CPU-time samples can resolve
        **(extra or {}),
    }

"""Honest timings of JAX's stages: cold trace, lower, compile, first call; steady execute.

Rules kept here (the method is in ``docs/measuring.md``):

* every cold sample starts from ``jax.clear_caches()`` (``jit.clear_cache()``
  would leave nested helpers warm), with the persistent compilation cache off;
* the garbage collector is emptied before and paused during each timed run, so
  the previous variant's garbage is not collected inside this one's interval;
* every interval that produces arrays ends in ``block_until_ready``;
* JAX's own clock (``jax.monitoring``) is recorded beside ours as a cross-check.

This module imports neither IPython nor matplotlib: scripts can use it directly.
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
from typing import Any
from typing import NamedTuple

import jax

from ...model.rows import FROM_EVENTS
from ...model.rows import FROM_STAGED
from ...model.rows import VARIANTS
from ...model.rows import cpu_key
from ...model.stats.rule import json_number
from ..calls.arguments import static_split
from . import clocks
from . import contention
from .conditions import paused_gc
from .lockstep import leaders
from .lockstep import slowest_of
from .monitor import COMPILE_EVENT
from .monitor import LOWER_EVENT
from .monitor import TRACE_EVENT
from .monitor import Monitor
from .stops import POLL_S
from .stops import Checkpoint
from .stops import Stop

#: A steady-state sample takes about this share of its row's cold first call: with
#: auto-ranging, the steady state is then about a tenth of a comparison's wall time, the
#: cold calls nearly all the rest (benchmarks/wait.py).
STEADY_SHARE = 0.05
#: ... within these bounds (seconds): at the floor a sample still averages thousands of
#: calls of a microsecond-scale program (a median within a few percent); the ceiling is
#: timeit's own 0.2 s.
STEADY_FLOOR_S, STEADY_CEILING_S = 0.01, 0.2
#: The most calls one steady-state timing makes while auto-ranging: at JAX's fastest
#: dispatch (a few microseconds a call) the ceiling takes under 10^5, so this cap only
#: binds where the clock barely moves (a test framework's, patched).
MOST_STEADY_CALLS = 10**6
#: The most calls timed between two asks of the checkpoint (about :data:`POLL_S` of
#: calls of a microsecond each), so a Ctrl-C is seen within a chunk of calls too.
POLL_CALLS = 10**5


def steady_target(first_call_s: float) -> float:
    """How long one steady-state sample of a row whose first call took ``first_call_s``
    should take (:data:`STEADY_SHARE` of it, within the floor and the ceiling)."""
    return min(STEADY_CEILING_S, max(STEADY_FLOOR_S, STEADY_SHARE * first_call_s))


@dataclass
class ColdRun:
    """One cold run of a variant: its timings, and the artefacts for structure counts
    (for a first call, filled in afterwards from warm caches by :func:`warm_artefacts`)."""

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
    """``fn`` under a name of its row's own, ``g_nested`` for the nested row of ``g``, so
    that each row's program is an XLA module of its own name (``jit_g_nested``), as the
    programs are by hand; the flat row, the user's own program, keeps its name (``g``).
    On a TPU v5e two programs compiled in turn under one module name (as two rows of
    ``g`` were) moved towards each other: the seed's flat compile read 4.7-5.5 s and its
    nested one 3.2-4.3 s, against 5.4-5.8 s and 3.5-3.8 s under names of their own in
    the same hour, 1.2× where by hand it is 1.5× (benchmarks/tpu_order.py, ``samename``)."""
    if label == VARIANTS[0]:
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
    """The cold first call as the user pays it: ``jax.jit(fn)(*args, **kwargs)`` from
    cleared caches until its result is ready, one timed interval. Its stages are JAX's
    own duration events fired inside that interval (trace, lower, XLA compile), so that
    they and the rest (dispatch, execution, Python) add up to the first call.

    Where JAX fired no event for one of the stages (an older JAX, another backend), the
    stages are not known: then :func:`staged_run` times them (``stages_from`` says so).
    Ctrl-C stops the call at once while the user's Python traces and lowers, and only
    sets the flag once the XLA compile has begun (see :class:`Checkpoint`). ``opts``
    are the outer jit's options (default: arrays and Python scalars traced).
    """
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
    """One untimed lowering of a function, to compile cold at several settings without
    tracing and lowering it again (the stages no compiler option can change), and the
    arguments its compiled program takes (the static ones left out)."""

    lowered: Any
    args: tuple
    kwargs: dict[str, Any]


def lower_once(fn: Callable, args: tuple, kwargs: dict,
               opts: dict[str, Any] | None = None) -> Lowering | None:
    """``fn`` lowered once, untimed, from cleared caches with the outer jit's options
    (``compiler_options`` left to each compile); None where the arguments its compiled
    program takes cannot be told from the static ones (its tree is not the lowering's)."""
    if opts is not None:
        opts = {k: v for k, v in opts.items() if k != "compiler_options"}
    opts, jitted = cold_jit(fn, args, kwargs, opts)
    lowered = jitted.lower(*args, **kwargs)
    dynamic = traced_arguments(fn, args, kwargs, opts)
    if jax.tree_util.tree_structure(dynamic) != lowered.in_tree:
        return None
    return Lowering(lowered, *dynamic)


def traced_arguments(fn: Callable, args: tuple, kwargs: dict,
                     opts: dict[str, Any]) -> tuple[tuple, dict[str, Any]]:
    """``args`` and ``kwargs`` without those ``opts`` hold static, a static argument
    named by position or by name alike (as ``jax.jit`` reads them from the signature)."""
    nums = opts.get("static_argnums", ())
    names = opts.get("static_argnames", ())
    nums = {n % len(args) if args else n for n in ((nums,) if isinstance(nums, int) else nums)}
    names = set((names,) if isinstance(names, str) else names)
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):  # no signature (a builtin): the options as written
        params = []
    nums |= {params.index(n) for n in names if n in params}
    names |= {params[i] for i in nums if i < len(params)}
    return (tuple(a for i, a in enumerate(args) if i not in nums),
            {k: v for k, v in kwargs.items() if k not in names})


def compiled_first_call(lowering: Lowering, name: str, options: dict[str, Any],
                        monitor: Monitor, check: Checkpoint) -> ColdRun:
    """A cold first call of ``lowering`` (of the function named ``name``) compiled with
    ``options``: from cleared caches, XLA's compile and the compiled program's first call
    until its result is ready, one timed interval (``first_call_s``, as in
    :func:`first_call_run`, without the trace and lowering). Its XLA compile is JAX's own
    event inside it, its CPU seconds those to that event; where no event came, only the
    interval is known."""
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
    """``call()``, the first call of ``jitted`` (its function named ``name``), timed as
    one interval ending when its result is ready (``call`` blocks until it is): (its
    output, the interval's seconds on both clocks, each stage's seconds from JAX's own
    events inside it, None where none came, and its :class:`Window`). Ctrl-C stops it
    at once while the user's Python traces and lowers, and only sets the flag once XLA
    compiles (or, with a warm persistent cache, reads the entry)."""
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
    """When a timed interval ran: its start and end (``clocks.wall()``) and the
    process's CPU seconds at its start (``clocks.cpu()``)."""

    start: float
    end: float
    cpu_start: float


def stage_cpu(monitor: Monitor, name: str, window: Window) -> dict[str, float]:
    """Each stage's CPU seconds inside a first call, bounded by JAX's events: from the
    call's start (or the previous stage's event) to the stage's own event, which JAX
    fires as the stage ends. Empty where an event lacks its CPU reading."""
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
    """(the outer jit's options, a fresh ``jax.jit`` of ``fn``) with JAX's caches cleared:
    what every cold run starts from (default options: arrays and Python scalars traced)."""
    opts = static_split(args, kwargs) if opts is None else opts
    jax.clear_caches()
    return opts, jax.jit(fn, **opts)


def warm_artefacts(run: ColdRun, args: tuple, kwargs: dict) -> ColdRun:
    """``run`` with its traced, lowered and compiled program, taken untimed from the
    caches its first call has just filled (each costs well under a millisecond then), for
    the structure counts; a staged run has them already."""
    if run.traced is None:
        jitted: Any = run.jitted  # a jax.jit wrapper, whose ``trace`` typing cannot see
        run.traced = jitted.trace(*args, **kwargs)
        run.lowered = run.traced.lower()
        run.compiled = run.lowered.compile()
    return run


def staged_run(fn: Callable, args: tuple, kwargs: dict, monitor: Monitor,
               check: Checkpoint | None = None, opts: dict[str, Any] | None = None) -> ColdRun:
    """Time trace → lower → compile from cleared caches, each stage its own interval,
    then a fresh cold first call: two cold runs, for where JAX reports no stage events.

    ``check`` is asked before every stage; it raises :class:`Stop` (carrying the
    stages timed so far) to end the measurement early, so that progress is told
    between stages, never inside one. JAX's own events for each stage are kept
    beside ours (``events``) as a cross-check. ``opts`` as in :func:`first_call_run`.
    """
    check = check or Checkpoint()
    opts, jitted = cold_jit(fn, args, kwargs, opts)
    name, times = fn.__name__, dict[str, float]()
    made = ColdRun(times, {}, None, None, None, jitted, None)
    try:  # a stop keeps what the finished stages made, for their structure counts
        made.traced, trace = timed_stage(check, "tracing", times, "trace_s",
                                         lambda: jitted.trace(*args, **kwargs), python=True)
        made.lowered, lower = timed_stage(check, "lowering", times, "lower_s",
                                          made.traced.lower, python=True)
        made.compiled, comp = timed_stage(check, "XLA compile", times, "compile_s",
                                          made.lowered.compile)
        check.begin("first call", times)
    except Stop as stop:
        stop.artefact = made if made.traced is not None else None
        raise
    made.events = {key: monitor.seconds(event, who.format(name), window.start, window.end)
                   for (key, event, who), window in zip(STAGE_EVENTS, (trace, lower, comp),
                                                     strict=True)}
    jax.clear_caches()
    made.jitted = jax.jit(fn, **opts)
    made.output, _ = timed_stage(check, "first call", times, "first_call_s",
                                 lambda: jax.block_until_ready(made.jitted(*args, **kwargs)),
                                 ask=False)
    return made


def timed_stage(check: Checkpoint, stage: str, times: dict[str, float], key: str,
                run: Callable[[], Any], python: bool = False,
                ask: bool = True) -> tuple[Any, Window]:
    """``run()`` timed as one interval (collector paused) into ``times[key]``; the
    checkpoint is asked (``ask``) and told before the interval, never inside it.
    Returns (its value, its :class:`Window`)."""
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


class CpuClock:
    """``timeit``'s clock (jitmagic's own wall clock, :data:`.clocks.wall`: ``timeit``'s
    default, ``time.perf_counter``, is the name a test framework patches) that also
    notes the process's CPU seconds of every timing it makes: ``timeit`` reads its clock
    once before and once after the loop, so the readings come in pairs, and ``spent``
    holds each pair's."""

    def __init__(self) -> None:
        self.spent: list[float] = []
        self._began: float | None = None

    def __call__(self) -> float:
        cpu = clocks.cpu()
        if self._began is None:
            self._began = cpu
        else:
            self.spent.append(cpu - self._began)
            self._began = None
        return clocks.wall()


class SteadyTimer(timeit.Timer):
    """A ``timeit.Timer`` on a :class:`CpuClock`, so that each steady-state sample has
    its CPU seconds beside its wall seconds."""

    def __init__(self, stmt: Callable[[], None]):
        self.clock = CpuClock()
        super().__init__(stmt, timer=self.clock)


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
    """``timeit``'s autorange idea, (loops, seconds per loop, CPU seconds per loop) of
    the timing that reached ``target_s``: grow the loop count
    until one timing takes ``target_s``. Instead of timeit's fixed 1-2-5 steps it
    jumps to the count the last timing predicts (at most 100× at once), so that
    calibration wastes a few calls rather than a second of the user's time.

    Bounded in calls as well as in time: each timing is made in chunks that ask
    ``check`` between them (:func:`timed_calls`), and the count stops growing at
    :data:`MOST_STEADY_CALLS`, so a clock that barely moves cannot make it grow for
    minutes; one that does not move at all is :class:`~.clocks.FrozenClockError`.
    """
    number, target_s = 1, leaders(check, "the steady-state target", target_s)
    while True:
        made = len(timer.clock.spent)
        t = timed_calls(timer, number, check)
        slowest = slowest_of(check, "the steady loop count", t)  # t for one process
        if slowest >= target_s or number >= MOST_STEADY_CALLS:
            return number, t / number, math.fsum(timer.clock.spent[made:]) / number
        if check:
            check.poll("steady state")
        predicted = math.ceil(number * 1.1 * target_s / max(slowest, 1e-9))
        number = min(MOST_STEADY_CALLS, max(2 * number, min(100 * number, predicted)))


def time_per_call(timer: SteadyTimer, loops: int | None, number: int | None,
                  check: Checkpoint | None = None,
                  target_s: float = STEADY_CEILING_S) -> tuple[int, float, float]:
    """One steady-state sample: (loop count, seconds per call, CPU seconds per call).

    The first sample (``loops`` None) fixes the loop count, ``number`` if given,
    else auto-ranged to ``target_s`` a sample; later samples reuse it, so that every
    sample of a row is comparable.
    """
    if loops is None:
        if number is None:
            return autorange(timer, target_s, check)
        timer.timeit(1)  # the first call after a compile takes a slower path
        loops = number
    made = len(timer.clock.spent)
    wall = timed_calls(timer, loops, check)
    return loops, wall / loops, math.fsum(timer.clock.spent[made:]) / loops


def timed_calls(timer: timeit.Timer, loops: int, check: Checkpoint | None = None) -> float:
    """Seconds for ``loops`` calls. With ``check``, timed in chunks of about
    :data:`POLL_S` (and at most :data:`POLL_CALLS` calls), asking ``check.poll`` between
    them, so a stop is seen soon however large ``loops`` is and however slowly the clock
    moves; the ``Stop``'s reason says where it stopped (a sample cut short is not kept).
    A chunk timed as no time at all is :class:`~.clocks.FrozenClockError`."""
    if check is None:
        t = timer.timeit(loops)
        clocks.advanced(t, loops)
        return t
    total, done, chunk = 0.0, 0, 1
    while done < loops:
        n = min(chunk, loops - done)
        t = timer.timeit(n)
        clocks.advanced(t, n)
        total, done = total + t, done + n
        if done < loops:
            check.poll("steady state")
        chunk = max(1, min(100 * n, POLL_CALLS, int(n * POLL_S / max(t, 1e-9))))
    return total


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
        # a property JAX adds to its Config at run time, unseen by mypy (jax.config.read
        # takes this one only by an exception JAX marks as temporary)
        "x64": bool(jax.config.jax_enable_x64),  # type: ignore[attr-defined]
        "cpu_tick_s": json_number(clocks.cpu_tick()),  # what CPU-time samples can resolve
        **(extra or {}),
    }


def _jaxlib_version() -> str:
    import jaxlib

    return getattr(jaxlib, "__version__", "unknown")

"""``--xla``: where XLA spends its compile, from one extra cold compile per variant under
JAX's profiler (the comparison's samples are untouched).

Per variant: caches cleared, the persistent cache off, the entry lowered, then
``Lowered.compile()`` timed inside ``jax.profiler.trace`` of a scratch folder (Python
tracer off, host tracer at the backend's level: :mod:`jitmagic.backends.profile`); the
``.xplane.pb`` is read by :mod:`~.xplane`. The session, the cache setting and the folder
are put back with Ctrl-C held. Where the user's own profiler session runs (JAX runs one
at a time), nothing is measured and the record says why (:data:`REFUSED`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import os
from collections.abc import Iterator
from typing import Any

import jax

from ..._compat import profiler_running
from ...backends import profile as compile_events
from ...backends import running
from ...interrupts import exits_held
from ...interrupts import interrupts_held
from ...model import parts
from ...model.causes.xla_passes import PROFILED
from ...model.causes.xla_passes import NamedTime
from ...model.causes.xla_passes import PassTime
from ...model.causes.xla_passes import ProfiledCompile
from ...model.causes.xla_passes import XlaPasses
from ...model.comparison import Comparison
from ...model.notes import Noted
from ...model.notes import Parts
from ..sampling.conditions import persistent_cache_off
from ..sampling.stages import cold_jit
from ..sampling.stages import timed_stage
from ..sampling.stops import Checkpoint
from ..sampling.stops import Stop
from ..scratch import scratch_folder
from ..variants.rows import Prepared
from .run import PartRun
from .xplane import CompileRead

#: The part's name, as progress shows it.
PART = parts.named("xla_passes").label
#: Why nothing was measured while the user's own profiler session runs.
REFUSED = ("not measured: your own jax.profiler trace is running; stop it "
           "(jax.profiler.stop_trace()) to see XLA's passes")
#: Why nothing was measured where JAX's profiler would not start for another reason.
NO_PROFILER = "not measured: JAX's profiler did not start ({})"
#: Why nothing was measured where the profiler started but wrote no profile.
NO_PROFILE = "not measured: JAX's profiler wrote no profile (.xplane.pb) for the compile"


class ProfilerBusy(Exception):
    """JAX's profiler gave nothing: its message is the report's reason."""


def add_xla_passes(result: Comparison, prepared: dict[str, Prepared],
                   check: Checkpoint | None = None) -> Comparison:
    """``result`` with its :class:`XlaPasses`: one profiled cold compile per variant that
    ran (flat only where nothing was nested). A stop keeps the compiles done and says why."""
    check = check or Checkpoint()
    check.report.at(PART)
    same = not prepared["nested"].variant.planned
    compiles: dict[str, ProfiledCompile] = {}
    notes: dict[str, Noted] = {}
    stopped, names = None, PROFILED[:1] if same else PROFILED
    try:
        if profiler_running():
            raise ProfilerBusy(REFUSED)
        for name in names:
            if compiles:  # a stop is said to come after the compile just profiled
                check(f"the {list(compiles)[-1]} variant's profiled compile")
            if not result.variants[name].ok:
                notes[name] = Parts("xla_variant_failed", name)
                continue
            check.report.at(PART, row=name, round=1, rounds=1)  # one profiled compile
            try:
                compiles[name] = profiled_compile(prepared[name], check)
            except (Stop, ProfilerBusy):
                raise
            except Exception as exc:  # the comparison ran it: say what went wrong, keep it
                notes[name] = Parts("xla_raised", type(exc).__name__, str(exc))
    except Stop as stop:
        left = [n for n in names if n not in compiles and n not in notes]
        stopped = f"{stop.reason}; no profiled compile of the {' and '.join(left)} variant" \
                  f"{'s' * (len(left) > 1)}"
    except ProfilerBusy as busy:
        return dataclasses.replace(result, xla_passes=XlaPasses(
            same_program=same, reason=REFUSED if profiler_running() else str(busy)))
    return dataclasses.replace(result, xla_passes=XlaPasses(compiles, same, None, notes,
                                                            stopped))


def placed_platform(args: tuple, kwargs: dict[str, Any]) -> str | None:
    """The platform of a target's devices the call's ``ShapeDtypeStruct`` arguments are
    placed on (``"tpu"``); None for arrays of this machine's backend."""
    for leaf in jax.tree_util.tree_leaves((args, kwargs)):
        if isinstance(leaf, jax.ShapeDtypeStruct) and leaf.sharding is not None:
            devices = getattr(leaf.sharding, "device_set", None) or ()
            return next((str(d.platform) for d in devices), None)
    return None


def profiled_compile(p: Prepared, check: Checkpoint) -> ProfiledCompile:
    """One cold compile of ``p`` under JAX's profiler: its seconds and what it reads as."""
    from jax.profiler import ProfileData

    from .xplane import read_compile  # looked up at each call: tests press Ctrl-C in it

    platform = placed_platform(p.args, p.kwargs) or running().platform  # --target: "tpu"
    times: dict[str, float] = {}
    with exits_held(scratch_folder("xla"), persistent_cache_off()) as (folder, _):
        _, jitted = cold_jit(p.variant.fn, p.args, p.kwargs, p.variant.jit_options)
        lowered, _ = timed_stage(check, "lowering", {}, "lower_s",
                                 lambda: jitted.lower(*p.args, **p.kwargs), python=True)
        with profiling(str(folder), compile_events.of(platform).host_tracer_level):
            timed_stage(check, "XLA compile (profiled)", times, "compile_s", lowered.compile)
        read = read_compile(ProfileData.from_file(_profile_file(str(folder))), platform)
    return compiled_as_read(times["compile_s"], read)


def compiled_as_read(compile_s: float, read: CompileRead) -> ProfiledCompile:
    """The record of a compile of ``compile_s`` seconds read as ``read``, biggest first."""
    passes = tuple(PassTime(name, max(0.0, s), runs) for name, (s, runs) in
                   sorted(read.passes.items(), key=lambda kv: (-kv[1][0], kv[0])))
    named = tuple(NamedTime(key, n.seconds, n.events, n.biggest) for key, n in
                  sorted(read.named.items(), key=lambda kv: (-kv[1].seconds, kv[0])))
    part = read.parts.get
    return ProfiledCompile(compile_s, part("hlo_passes"), part("codegen"), read.llvm_s,
                           passes, part("before_passes"), read.platform, part("serialize"),
                           part("deserialize"), named)


@contextlib.contextmanager
def profiling(folder: str, host_tracer_level: int = 1) -> Iterator[None]:
    """Within, a session of JAX's profiler writing to ``folder`` (:class:`ProfilerBusy`
    where it does not start), started and stopped with Ctrl-C held, so that a session once
    started is always stopped."""
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    options.host_tracer_level = host_tracer_level
    options.raise_error_on_start_failure = True
    started = False
    try:
        with interrupts_held():
            try:
                jax.profiler.start_trace(folder, profiler_options=options)
            except RuntimeError as exc:
                raise ProfilerBusy(NO_PROFILER.format(exc)) from None
            started = True
        yield
    finally:
        if started:
            with interrupts_held():
                jax.profiler.stop_trace()


def _profile_file(folder: str) -> str:
    """The ``.xplane.pb`` a session wrote under ``folder`` (``plugins/profile/<run>/``)."""
    found = sorted(glob.glob(os.path.join(folder, "**", "*.xplane.pb"), recursive=True))
    if not found:
        raise ProfilerBusy(NO_PROFILE)
    return found[-1]


def add_part(result: Comparison, run: PartRun) -> Comparison:
    """The table of parts' entry: XLA's passes."""
    return add_xla_passes(result, dict(run.prepared), run.check)

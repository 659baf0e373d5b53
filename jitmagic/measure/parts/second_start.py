"""A second start with a warm persistent compilation cache (``--cache``): per variant,
interleaved, a no-cache, a cold and a warm start; the user's settings put back (docs/cache.md)."""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jax

from ..._compat import unregister
from ...errors import UserCodeError, user_traceback
from ...interrupts import exits_held
from ...model import parts
from ...model.causes import second_start as model
from ...model.comparison import Comparison
from ...model.notes import Parts, Warned
from ..sampling import conditions
from ..sampling.monitor import CACHE_HIT_EVENT, Monitor
from ..sampling.rounds import Rounds
from ..sampling.runner import ColdSample, Sampler
from ..sampling.stages import cold_jit, timed_first_call
from ..sampling.stops import Checkpoint
from ..sampling.structure import ProgramFacts
from ..variants.rows import Prepared, VariantSubject
from .run import PartRun, part_rounds

#: The event JAX fires where a compile found no entry in the persistent cache.
CACHE_MISS_EVENT = "/jax/compilation_cache/cache_misses"
#: The event JAX fires for every compile that uses the persistent cache (a hit or a miss).
USES_CACHE_EVENT = "/jax/compilation_cache/compile_requests_use_cache"
#: What progress and the stop reasons call this part.
PART = parts.named("second_start").label
NO_CACHE, COLD, WARM = "no_cache", "cold", "warm"
#: Each sample's starts, in the order they run.
STARTS = (NO_CACHE, COLD, WARM)


def measure_second_start(prepared: dict[str, Prepared], pairs: int | Rounds,
                         check: Checkpoint) -> model.SecondStart:
    """``pairs`` of each variant's starts, interleaved, in a scratch cache folder."""
    user = user_cache()
    monitor, others = Monitor(), OtherThreads()
    # put back whole with Ctrl-C held: the settings, the listeners, the heap, the folder
    with exits_held(conditions.scratch_cache(), monitor.listening(), others.listening(),
                    conditions.frozen_heap()) as (folder, *_), check.catching_interrupts():
        subjects = {n: StartPair(p, folder=folder) for n, p in prepared.items()}
        runs = Sampler(dict(subjects), START_KEYS, steady=False)
        with suppress(UserCodeError):  # every variant failed: each row says why
            runs.measure(pairs, None, monitor, check, what=PART)
    rows = {n: model.CacheRow(n, tuple(p.starts[COLD]), tuple(p.starts[WARM]),
                              f"the {n} variant failed in the {PART}:\n"
                              f"{user_traceback(runs.errors[n])}" if n in runs.errors else None,
                              tuple(p.starts[NO_CACHE]))
            for n, p in subjects.items()}
    warnings = (Parts("other_threads_cached", others.compiles),) if others.compiles else ()
    taken = max((len(p.starts[COLD]) for p in subjects.values()), default=0)
    return model.SecondStart(rows, user, runs.stopped, warnings, rounds=taken,
                             rounds_ended=pairs.ended if isinstance(pairs, Rounds) else None)


#: What the sampler keeps of a pair (the record keeps every ``Start`` whole).
START_KEYS = tuple(f"{start}_first_call_s" for start in STARTS)


@dataclass
class StartPair(VariantSubject):
    """A variant as a row of the second start: a no-cache, a cold and a warm start per sample."""

    folder: Path = field(default_factory=Path)
    starts: dict[str, list[model.Start]] = field(
        default_factory=lambda: {start: [] for start in STARTS})

    def cold(self, monitor: Monitor, check: Checkpoint) -> ColdSample:
        conditions.emptied(self.folder)
        times = {}
        for start in STARTS:
            with conditions.persistent_cache_off() if start == NO_CACHE else nullcontext():
                self.starts[start].append(first_start(
                    self.prepared, monitor, check, f"{start.replace('_', '-')} first call"))
            times[f"{start}_first_call_s"] = self.starts[start][-1].seconds
        return ColdSample(times, lambda: None, None)

    def describe(self, cold: ColdSample) -> ProgramFacts:
        return ProgramFacts()  # the comparison read the program's structure


def first_start(p: Prepared, monitor: Monitor, check: Checkpoint, stage: str) -> model.Start:
    """One cold first call of the variant (the disk cache as it is), with JAX's events."""
    fn, args, kwargs = p.variant.fn, p.args, p.kwargs
    _, jitted = cold_jit(fn, args, kwargs, p.variant.jit_options)
    seen = len(monitor.events)
    _, times, stages, _ = timed_first_call(
        jitted, fn.__name__, lambda: jax.block_until_ready(jitted(*args, **kwargs)),
        monitor, check, stage)
    events = monitor.events[seen:]
    return model.Start(times["first_call_s"], times.get("first_call_cpu_s"), times.get("wait_s"),
                       hits=events.count(CACHE_HIT_EVENT), misses=events.count(CACHE_MISS_EVENT),
                       **stages)


class OtherThreads:
    """How many compiles of other threads used the persistent cache while it was jitmagic's."""

    def __init__(self) -> None:
        self.compiles = 0
        self._measuring = threading.get_ident()

    def _on_event(self, event: str, **kw: Any) -> None:
        if event == USES_CACHE_EVENT and threading.get_ident() != self._measuring:
            self.compiles += 1

    @contextmanager
    def listening(self) -> Iterator[OtherThreads]:
        jax.monitoring.register_event_listener(self._on_event)
        try:
            yield self
        finally:
            with suppress(AssertionError, ValueError, KeyError):  # never registered
                unregister("event_listener")(self._on_event)


def user_cache() -> model.UserCache:
    """The user's persistent-cache settings, as their JAX would cache this program."""
    settings = conditions.cache_settings()
    return model.UserCache(folder_set=bool(settings["jax_compilation_cache_dir"]),
                           enabled=bool(settings["jax_enable_compilation_cache"]),
                           min_compile_s=float(settings["jax_persistent_cache_min_compile_time_secs"]),
                           min_entry_bytes=int(settings["jax_persistent_cache_min_entry_size_bytes"]))


def add_part(result: Comparison, run: PartRun) -> Comparison:
    """The table of parts' entry: ``result`` with its ``second_start``."""
    if not run.options.cache or result.stopped:
        return result
    nested = run.prepared.get("nested")
    names = [n for n in model.VARIANTS if (n == "flat" or (nested and nested.variant.planned))
             and result.variants[n].ok]
    if not names:
        return dataclasses.replace(result, warned=(*result.warned, Warned("no_second_start")))
    measured = measure_second_start({n: run.prepared[n] for n in names},
                                    part_rounds(result, run.options), run.check)
    measured = dataclasses.replace(measured, compile_s={
        n: result.variants[n].compile_s for n in names
        if not math.isnan(result.variants[n].compile_s)})
    return dataclasses.replace(result, second_start=measured)

"""A second start with a warm persistent compilation cache (``--cache``), measured.

"My notebook takes 40 s to start every time: would JAX's persistent compilation cache
help, and would nesting still pay once it is warm?" After the comparison, for each
variant (flat, and nested where something was nested), interleaved, pair by pair:

* a *no-cache* start: the persistent cache off, ``jax.jit(f)(*args)`` from cleared
  caches until its result is ready (the comparison's first call, taken again beside the
  others: what a warm cache's saving is judged against, under the same load);
* a *cold* start: the cache pointed at a folder of jitmagic's own, emptied, then the
  same first call (it compiles and writes the entry, as a first start with the cache on
  does: an 8 MiB entry made it cost more than the compile);
* a *warm* start right after it: ``jax.clear_caches()`` (memory cleared, the disk kept),
  then the same first call, which reads the entry (as a second start of the program).

Each start records whether JAX fired its cache-hit or cache-miss event inside it and
the stage seconds of JAX's own duration events (trace, lower, compile: on a hit the
compile event is about the time to read the entry). While it runs the cache caches
every program (no minimum compile time or entry size); the user's settings, their
cache folder and JAX's cache object are left as they were
(:func:`~.sampling.conditions.scratch_cache`), and the folder is removed after, each put
back with Ctrl-C held (:func:`~jitmagic.interrupts.exits_held`: no number of presses
leaves a setting changed). JAX's cache settings are the process's: another thread's
compiles meanwhile go to that folder, not to the user's, and the record says so
(:class:`OtherThreads`). No IPython, no matplotlib here.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from contextlib import contextmanager
from contextlib import nullcontext
from contextlib import suppress
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import jax

from ..._compat import unregister
from ...errors import UserCodeError
from ...errors import user_traceback
from ...interrupts import exits_held
from ...model import parts
from ...model.causes.second_start import VARIANTS
from ...model.causes.second_start import CacheRow
from ...model.causes.second_start import SecondStart
from ...model.causes.second_start import Start
from ...model.causes.second_start import UserCache
from ...model.comparison import Comparison
from ...model.notes import Parts
from ...model.notes import Warned
from ...options import Options
from ..sampling.conditions import cache_settings
from ..sampling.conditions import emptied
from ..sampling.conditions import frozen_heap
from ..sampling.conditions import persistent_cache_off
from ..sampling.conditions import scratch_cache
from ..sampling.monitor import CACHE_HIT_EVENT
from ..sampling.monitor import Monitor
from ..sampling.rounds import Rounds
from ..sampling.runner import ColdSample
from ..sampling.runner import Sampler
from ..sampling.stages import cold_jit
from ..sampling.stages import timed_first_call
from ..sampling.stops import Checkpoint
from ..sampling.structure import ProgramFacts
from ..variants.rows import Prepared
from ..variants.rows import VariantSubject
from .run import PartRun
from .run import part_rounds

#: The event JAX fires where a compile found no entry in the persistent cache.
CACHE_MISS_EVENT = "/jax/compilation_cache/cache_misses"
#: The event JAX fires for every compile that uses the persistent cache (a hit or a miss).
USES_CACHE_EVENT = "/jax/compilation_cache/compile_requests_use_cache"
#: What progress and the stop reasons call this part.
PART = parts.named("second_start").label
NO_CACHE, COLD, WARM = "no_cache", "cold", "warm"
#: Each sample's starts, in the order they run.
STARTS = (NO_CACHE, COLD, WARM)


def add_second_start(result: Comparison, prepared: dict[str, Prepared], options: Options,
                     check: Checkpoint | None = None) -> Comparison:
    """``result`` with its ``second_start`` (``options.cache``), measured under ``check``
    on the variants the comparison ran without an error; as it was otherwise, or where
    the comparison stopped. A stop here marks the second start PARTIAL, not the
    comparison, which had finished."""
    if not options.cache or result.stopped:
        return result
    names = [n for n in measured_variants(result, prepared) if result.variants[n].ok]
    if not names:
        return dataclasses.replace(result, warned=(*result.warned, Warned("no_second_start")))
    measured = measure_second_start({n: prepared[n] for n in names},
                                    part_rounds(result, options), check or Checkpoint())
    compiled = {n: result.variants[n].compile_s for n in names}
    measured = dataclasses.replace(measured, compile_s={
        n: s for n, s in compiled.items() if not math.isnan(s)})
    return dataclasses.replace(result, second_start=measured)


def measured_variants(result: Comparison, prepared: dict[str, Prepared]) -> list[str]:
    """The variants to start twice: flat, and nested where it nests something (where it
    does not, the comparison measured the one program once, and so does this)."""
    nested = prepared.get("nested")
    return [n for n in VARIANTS
            if n == "flat" or (nested is not None and nested.variant.planned)]


def measure_second_start(prepared: dict[str, Prepared], pairs: int | Rounds,
                         check: Checkpoint) -> SecondStart:
    """``pairs`` (a count, or the one rule's rounds for a part:
    :func:`~.run.part_rounds`) cold and warm starts of each prepared variant, interleaved (flat,
    nested, nested, flat, ...) as rows of the one :class:`~.sampling.runner.Sampler`
    (its rounds, barriers, stops and progress), in a scratch cache folder; a stop
    (Ctrl-C, ``--timeout``) keeps the starts that finished and says why (``stopped``)."""
    user = user_cache()
    monitor, others = Monitor(), OtherThreads()
    # put back whole with Ctrl-C held: the settings, the listeners, the heap, the folder
    with exits_held(scratch_cache(), monitor.listening(), others.listening(),
                    frozen_heap()) as (folder, *_), check.catching_interrupts():
        subjects = {n: StartPair(p, folder=folder) for n, p in prepared.items()}
        runs = Sampler(dict(subjects), START_KEYS, steady=False)
        with suppress(UserCodeError):  # every variant failed: each row says why
            runs.measure(pairs, None, monitor, check, what=PART)
    rows = {n: CacheRow(n, tuple(p.starts[COLD]), tuple(p.starts[WARM]),
                        _failure(n, runs.errors[n]) if n in runs.errors else None,
                        tuple(p.starts[NO_CACHE]))
            for n, p in subjects.items()}
    warnings = (others.warning(),) if others.compiles else ()
    taken = max((len(p.starts[COLD]) for p in subjects.values()), default=0)
    return SecondStart(rows, user, runs.stopped, warnings, rounds=taken,
                       rounds_ended=pairs.ended if isinstance(pairs, Rounds) else None)


#: What the sampler keeps of a pair (the record keeps every :class:`Start` whole).
START_KEYS = tuple(f"{start}_first_call_s" for start in STARTS)


@dataclass
class StartPair(VariantSubject):
    """A variant as a row of the second start: each sample is one no-cache start, one
    cold start (the scratch folder emptied first) and the warm start after it, each kept
    in ``starts`` as it finishes; no steady state."""

    folder: Path = field(default_factory=Path)
    starts: dict[str, list[Start]] = field(
        default_factory=lambda: {start: [] for start in STARTS})

    def cold(self, monitor: Monitor, check: Checkpoint) -> ColdSample:
        emptied(self.folder)
        times = {}
        for start in STARTS:
            with _cache_for(start):
                self.starts[start].append(first_start(
                    self.prepared, monitor, check, f"{start.replace('_', '-')} first call"))
            times[f"{start}_first_call_s"] = self.starts[start][-1].seconds
        return ColdSample(times, lambda: None, None)

    def describe(self, cold: ColdSample) -> ProgramFacts:
        return ProgramFacts()  # the comparison read the program's structure


def _cache_for(start: str) -> AbstractContextManager[Any]:
    """The persistent cache switched off for a no-cache start (and put back, the scratch
    folder's, after it); as it is for the others."""
    return persistent_cache_off() if start == NO_CACHE else nullcontext()


def _failure(name: str, exc: BaseException) -> str:
    """The row's error as the record says it: the user's frames only."""
    return f"the {name} variant failed in the {PART}:\n{user_traceback(exc)}"


def first_start(p: Prepared, monitor: Monitor, check: Checkpoint, stage: str) -> Start:
    """One first call of the variant from cleared caches (the disk cache as it is), timed
    until its result is ready (:func:`~.sampling.stages.timed_first_call`, as every
    cold first call); JAX's cache events and stage events inside it."""
    fn, args, kwargs = p.variant.fn, p.args, p.kwargs
    _, jitted = cold_jit(fn, args, kwargs, p.variant.jit_options)
    seen = len(monitor.events)
    _, times, stages, _ = timed_first_call(
        jitted, fn.__name__, lambda: jax.block_until_ready(jitted(*args, **kwargs)),
        monitor, check, stage)
    events = monitor.events[seen:]
    return Start(times["first_call_s"], times.get("first_call_cpu_s"), times.get("wait_s"),
                 hits=events.count(CACHE_HIT_EVENT), misses=events.count(CACHE_MISS_EVENT),
                 **stages)


#: Said where other threads compiled while JAX's cache was the scratch folder.


class OtherThreads:
    """The compiles of threads other than the measuring one that use JAX's persistent
    cache while it is jitmagic's folder. JAX's cache settings are the process's: those
    compiles cannot be sent to the user's own folder, so the report says so."""

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

    def warning(self) -> Parts:
        """The note of the compiles other threads made while the second start measured."""
        return Parts("other_threads_cached", self.compiles)


def user_cache() -> UserCache:
    """The user's persistent-cache settings, as their JAX would cache this program."""
    settings = cache_settings()
    return UserCache(folder_set=bool(settings["jax_compilation_cache_dir"]),
                     enabled=bool(settings["jax_enable_compilation_cache"]),
                     min_compile_s=float(settings["jax_persistent_cache_min_compile_time_secs"]),
                     min_entry_bytes=int(settings["jax_persistent_cache_min_entry_size_bytes"]))


def add_part(result: Comparison, run: PartRun) -> Comparison:
    """The table of parts' entry (:data:`jitmagic.model.parts.PARTS`): the second start."""
    return add_second_start(result, dict(run.prepared), run.options, run.check)

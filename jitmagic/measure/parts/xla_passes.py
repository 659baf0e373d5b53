"""``--xla``: where XLA spends its compile, from one extra cold compile per variant under JAX's
profiler, read into parts that never overlap and add up to the compile; all set is put back
with Ctrl-C held, and nothing is measured where the user's own session runs (docs/xla.md)."""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import jax

from ..._compat import profiler_running
from ...backends import profile as compile_events
from ...backends import running
from ...backends.profile import MODULE_STAT, CompileEvents
from ...interrupts import exits_held, interrupts_held
from ...model import parts
from ...model.causes import xla_passes as model
from ...model.comparison import Comparison
from ...model.notes import Noted, Parts
from ..sampling.conditions import persistent_cache_off
from ..sampling.stages import cold_jit, timed_stage
from ..sampling.stops import Checkpoint, Stop
from ..scratch import scratch_folder
from ..variants.rows import Prepared
from .run import PartRun

#: The part's name, as progress shows it.
PART = parts.named("xla_passes").label
#: Why nothing was measured while the user's own profiler session runs.
REFUSED = ("not measured: your own jax.profiler trace is running; stop it "
           "(jax.profiler.stop_trace()) to see XLA's passes")


class ProfilerBusy(Exception):
    """JAX's profiler gave nothing: its message is the report's reason."""


def add_xla_passes(result: Comparison, prepared: dict[str, Prepared],
                   check: Checkpoint | None = None) -> Comparison:
    """``result`` with one profiled cold compile per variant that ran."""
    check = check or Checkpoint()
    check.report.at(PART)
    same = not prepared["nested"].variant.planned
    compiles: dict[str, model.ProfiledCompile] = {}
    notes: dict[str, Noted] = {}
    stopped, names = None, model.PROFILED[:1] if same else model.PROFILED
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
        return dataclasses.replace(result, xla_passes=model.XlaPasses(
            same_program=same, reason=REFUSED if profiler_running() else str(busy)))
    return dataclasses.replace(result, xla_passes=model.XlaPasses(compiles, same, None, notes,
                                                                  stopped))


def placed_platform(args: tuple, kwargs: dict[str, Any]) -> str | None:
    """The platform of a target the arguments are placed on (None: this machine's)."""
    for leaf in jax.tree_util.tree_leaves((args, kwargs)):
        if isinstance(leaf, jax.ShapeDtypeStruct) and leaf.sharding is not None:
            devices = getattr(leaf.sharding, "device_set", None) or ()
            return next((str(d.platform) for d in devices), None)
    return None


def profiled_compile(p: Prepared, check: Checkpoint) -> model.ProfiledCompile:
    """One cold compile of ``p`` under JAX's profiler: its seconds and what it reads as."""
    from jax.profiler import ProfileData

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


def compiled_as_read(compile_s: float, read: CompileRead) -> model.ProfiledCompile:
    """The record of a compile of ``compile_s`` seconds read as ``read``, biggest first."""
    passes = tuple(model.PassTime(name, max(0.0, s), runs) for name, (s, runs) in
                   sorted(read.passes.items(), key=lambda kv: (-kv[1][0], kv[0])))
    named = tuple(model.NamedTime(key, n.seconds, n.events, n.biggest) for key, n in
                  sorted(read.named.items(), key=lambda kv: (-kv[1].seconds, kv[0])))
    part = read.parts.get
    return model.ProfiledCompile(compile_s, part("hlo_passes"), part("codegen"), read.llvm_s,
                                 passes, part("before_passes"), read.platform, part("serialize"),
                                 part("deserialize"), named)


@contextlib.contextmanager
def profiling(folder: str, host_tracer_level: int = 1) -> Iterator[None]:
    """Within, a session of JAX's profiler writing to ``folder``, stopped with Ctrl-C held."""
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
                raise ProfilerBusy(f"not measured: JAX's profiler did not start ({exc})") \
                    from None
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
        raise ProfilerBusy("not measured: JAX's profiler wrote no profile (.xplane.pb) for "
                           "the compile")
    return found[-1]


def add_part(result: Comparison, run: PartRun) -> Comparison:
    """The table of parts' entry: XLA's passes."""
    return add_xla_passes(result, dict(run.prepared), run.check)


#: The parts read from events of their own, in the order that decides an overlap.
EVENT_PARTS = tuple(p for p in compile_events.PARTS if p not in ("before_passes", "rest"))


@dataclass
class Span:
    """One profile event with the events inside it (same thread), as a tree."""

    name: str
    start: int
    end: int
    module: str | None
    children: list[Span] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return (self.end - self.start) / 1e9

    @property
    def pipeline(self) -> bool:
        """Whether this is one run of an HLO pass pipeline."""
        return self.module is not None and self.name.endswith(f" ({self.module})")


@dataclass(frozen=True)
class Cover:
    """Sorted, disjoint stretches (ns) of the wall time some events ran, each instant once."""

    stretches: tuple[tuple[int, int], ...] = ()

    @classmethod
    def of(cls, pairs: Iterable[tuple[int, int]]) -> Cover:
        """The time any of ``pairs`` (start, end) covers."""
        merged: list[tuple[int, int]] = []
        for start, end in sorted(pairs):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            elif end > start:
                merged.append((start, end))
        return cls(tuple(merged))

    def __or__(self, other: Cover) -> Cover:
        return Cover.of(self.stretches + other.stretches)

    def __sub__(self, other: Cover) -> Cover:
        left: list[tuple[int, int]] = []
        for start, end in self.stretches:
            for cut_start, cut_end in other.stretches:
                if cut_end <= start or cut_start >= end:
                    continue
                if cut_start > start:
                    left.append((start, cut_start))
                start = max(start, cut_end)
            if end > start:
                left.append((start, end))
        return Cover(tuple(left))

    def __and__(self, other: Cover) -> Cover:
        return self - (self - other)

    @property
    def seconds(self) -> float:
        return sum(end - start for start, end in self.stretches) / 1e9


@dataclass(frozen=True)
class NamedRead:
    """A part the backend names: its seconds, how many events made it, the biggest one's name."""

    seconds: float
    events: int
    biggest: str


@dataclass(frozen=True)
class CompileRead:
    """What the profile says of one compile: by part, by pass, by named part, LLVM's."""

    platform: str
    parts: dict[str, float]
    passes: dict[str, tuple[float, int]]
    named: dict[str, NamedRead] = field(default_factory=dict)
    llvm_s: float | None = None


def read_compile(profile: Any, platform: str | None = "cpu") -> CompileRead:
    """The compile ``profile`` holds, read by the events of the backend ``platform``."""
    events = compile_events.of(platform)
    roots = [s for plane in profile.planes for line in plane.lines for s in _tree(line.events)]
    window = _window(roots, events)
    covers = _part_covers(roots, events, window)
    passes: dict[str, tuple[float, int]] = {}
    for p in _outermost(roots, lambda s: s.pipeline):
        _add_passes(p, passes)
    llvm = _found(roots, events.llvm)
    return CompileRead(
        events.platform, {part: c.seconds for part, c in covers.items()}, passes,
        _named(roots, events, covers, window),
        _cover(llvm, window).seconds if llvm else None)


def _tree(events: Iterable[Any]) -> list[Span]:
    """A line's events as trees, by time: an event inside another's interval is its child."""
    roots: list[Span] = []
    stack: list[Span] = []
    for e in sorted(events, key=lambda e: (e.start_ns, -e.duration_ns)):
        span = Span(e.name, e.start_ns, e.start_ns + e.duration_ns, _module(e))
        while stack and stack[-1].end < span.end:  # ended before this one ends: not a parent
            stack.pop()
        (stack[-1].children if stack else roots).append(span)
        stack.append(span)
    return roots


def _module(event: Any) -> str | None:
    """The ``module`` stat of a pipeline's event (None on any other event)."""
    value = dict(event.stats).get(MODULE_STAT) if event.name.endswith(")") else None
    return value if isinstance(value, str) else None


def _outermost(spans: Iterable[Span], wanted: Callable[[Span], bool]) -> Iterator[Span]:
    """The spans ``wanted`` picks, not looking inside the ones it picked."""
    for s in spans:
        if wanted(s):
            yield s
        else:
            yield from _outermost(s.children, wanted)


def _found(roots: list[Span], names: Callable[[str], bool]) -> list[Span]:
    """The outermost spans whose name is one of ``names``."""
    return list(_outermost(roots, lambda s: names(s.name)))


def _cover(spans: Iterable[Span], window: Cover | None) -> Cover:
    """The time ``spans`` ran, within ``window`` (the backend call) where there is one."""
    cover = Cover.of((s.start, s.end) for s in spans)
    return cover if window is None else cover & window


def _window(roots: list[Span], events: CompileEvents) -> Cover | None:
    """The backend call, from its first event's start to its last one's end (None: no event)."""
    calls = _found(roots, events.call)
    if not calls:
        return None
    return Cover(((min(s.start for s in calls), max(s.end for s in calls)),))


def _part_covers(roots: list[Span], events: CompileEvents,
                 window: Cover | None) -> dict[str, Cover]:
    """Each part's time; an instant two parts' events cover is the earlier part's."""
    covers: dict[str, Cover] = {}
    taken = Cover()
    for part in EVENT_PARTS:
        spans = _part_spans(roots, events, part)
        if spans:
            covers[part] = _cover(spans, window) - taken
            taken = taken | covers[part]
    xla = _found(roots, events.xla_start)
    if window is not None and xla:  # from the backend call's start to XLA's own compile
        covers["before_passes"] = Cover(((window.stretches[0][0],
                                          min(s.start for s in xla)),)) - taken
    return covers


def _part_spans(roots: list[Span], events: CompileEvents, part: str) -> list[Span]:
    """The outermost events of ``part``: every pipeline run is one of the HLO passes'."""
    names, pipelines = events.events(part), part == "hlo_passes"
    return list(_outermost(roots, lambda s: names(s.name) or (pipelines and s.pipeline)))


def _named(roots: list[Span], events: CompileEvents, covers: dict[str, Cover],
           window: Cover | None) -> dict[str, NamedRead]:
    """The backend's named parts that the profile holds, each within its part."""
    read: dict[str, NamedRead] = {}
    for n in events.named:
        spans = _found(roots, n.events)
        if spans and n.within in covers:
            biggest = max(spans, key=lambda s: (s.end - s.start, s.name))
            read[n.key] = NamedRead((_cover(spans, window) & covers[n.within]).seconds,
                                    len(spans), biggest.name)
    return read


def _add_passes(pipeline: Span, passes: dict[str, tuple[float, int]]) -> None:
    """Each pass of one pipeline run into ``passes`` (the pipelines inside count for theirs)."""
    for child in pipeline.children:
        if child.pipeline:
            _add_passes(child, passes)
            continue
        inner = list(_outermost(child.children, lambda s: s.pipeline))
        seconds, runs = passes.get(child.name, (0.0, 0))
        passes[child.name] = (seconds + child.seconds - sum(p.seconds for p in inner), runs + 1)
        for pipeline_inside in inner:
            _add_passes(pipeline_inside, passes)

"""XLA's compile read out of a JAX profile (``jax.profiler.ProfileData``): the seconds of
each part of the compile (before XLA's passes, serialization, the HLO passes, code
generation), of each HLO pass, and of the parts a backend names inside them.

A line's events nest by time (an event inside another's interval on the same line is its
child); lines may run at once, so a part is the wall time during which one of its events
ran, on any thread, and an instant two parts cover is the earlier part's
(:data:`~jitmagic.backends.profile.PARTS`): the parts never overlap and, with the rest,
add up to the compile. A pass's seconds are its event's less the pipelines nested in it
on its own thread, summed over its runs. The profile's layout: docs/xla.md.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from ...backends import profile as compile_events
from ...backends.profile import MODULE_STAT
from ...backends.profile import CompileEvents

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
    """Stretches of time (ns), sorted and disjoint: the wall time some events ran, on
    any thread, each instant once."""

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
    """A part the backend names, as read: its seconds inside its part, how many events
    made it, and the biggest one's name."""

    seconds: float
    events: int
    biggest: str


@dataclass(frozen=True)
class CompileRead:
    """What the profile says of one compile on ``platform``: seconds by part read,
    pass name → (seconds, runs), the backend's named parts read, LLVM's seconds (None:
    not read)."""

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
    if not event.name.endswith(")"):
        return None
    value = dict(event.stats).get(MODULE_STAT)
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
    """The backend call, from its first event's start to its last one's end (None where
    the profile holds none: every event counts then)."""
    calls = _found(roots, events.call)
    if not calls:
        return None
    return Cover(((min(s.start for s in calls), max(s.end for s in calls)),))


def _part_covers(roots: list[Span], events: CompileEvents,
                 window: Cover | None) -> dict[str, Cover]:
    """Each part's time, by :data:`~jitmagic.backends.profile.PARTS`: an instant two
    parts' events cover is the earlier part's. Parts with no event are left out."""
    covers: dict[str, Cover] = {}
    taken = Cover()
    for part in EVENT_PARTS:
        spans = _part_spans(roots, events, part)
        if spans:
            covers[part] = _cover(spans, window) - taken
            taken = taken | covers[part]
    before = _before(roots, events, window)
    if before is not None:
        covers["before_passes"] = before - taken
    return covers


def _part_spans(roots: list[Span], events: CompileEvents, part: str) -> list[Span]:
    """The outermost events of ``part``: every pipeline run is one of the HLO passes'."""
    names, pipelines = events.events(part), part == "hlo_passes"
    return list(_outermost(roots, lambda s: names(s.name) or (pipelines and s.pipeline)))


def _before(roots: list[Span], events: CompileEvents, window: Cover | None) -> Cover | None:
    """From the backend call's start to XLA's own compile (None: either not found)."""
    xla = _found(roots, events.xla_start)
    if window is None or not xla:
        return None
    return Cover(((window.stretches[0][0], min(s.start for s in xla)),))


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

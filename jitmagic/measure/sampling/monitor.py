"""JAX's own clock beside ours: ``jax.monitoring`` events recorded during a
measurement, and where they disagree with our timings beyond a tolerance."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from ..._compat import unregister as jax_unregister
from ...model.notes import Note, Warned
from ...model.stats.rule import median
from . import clocks

TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
LOWER_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
CACHE_HIT_EVENT = "/jax/compilation_cache/cache_hits"
#: How far JAX's own event may differ from our interval before we say so.
#: ``.lower()`` does a little more than its event covers, hence the wider bound.
TOLERANCE = {"trace_s": 0.10, "lower_s": 0.25, "compile_s": 0.10}
#: Below this absolute gap a relative disagreement is timer noise, not news.
TOLERANCE_ABS_S = 0.002


@dataclass
class Monitor:
    """Records ``jax.monitoring`` events while active; registers nothing after exit."""

    durations: list[tuple[float, str, float, str | None]] = field(default_factory=list)
    #: The process's CPU seconds as each duration event arrived: (time, event, fun_name,
    #: ``clocks.cpu()``), so a stage inside one interval has a CPU-time bound.
    stamps: list[tuple[float, str, str | None, float]] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    #: Told each duration event as it arrives (event, fun_name): see :meth:`calling`.
    _watch: Callable[[str, str | None], None] | None = None

    def _on_duration(self, event: str, duration_secs: float, **kw: Any) -> None:
        # named as jax.monitoring's EventDurationListenerWithMetadata names it
        now, cpu = clocks.wall(), clocks.cpu()
        self.durations.append((now, event, duration_secs, kw.get("fun_name")))
        self.stamps.append((now, event, kw.get("fun_name"), cpu))
        if self._watch is not None:
            self._watch(event, kw.get("fun_name"))

    @contextmanager
    def calling(self, watch: Callable[[str, str | None], None]) -> Iterator[None]:
        """Within: ``watch(event, fun_name)`` is called as each duration event arrives
        (so a first call can tell where JAX is inside it)."""
        outer, self._watch = self._watch, watch
        try:
            yield
        finally:
            self._watch = outer

    def _on_event(self, event: str, **kw: Any) -> None:
        self.events.append(event)

    @contextmanager
    def listening(self) -> Iterator[Monitor]:
        import jax  # here: the watch command imports this before the script imports jax

        jax.monitoring.register_event_duration_secs_listener(self._on_duration)
        jax.monitoring.register_event_listener(self._on_event)
        try:
            yield self
        finally:
            unregister(jax_unregister("event_duration_listener"), self._on_duration)
            unregister(jax_unregister("event_listener"), self._on_event)

    def seconds(self, event: str, fun_name: str, start: float, end: float) -> float:
        """JAX's own seconds for ``event`` on ``fun_name`` reported within [start, end]."""
        return sum(s for t, e, s, f in self.durations
                   if e == event and f == fun_name and start <= t <= end)

    def cpu_at(self, event: str, fun_name: str, start: float, end: float) -> float | None:
        """The process's CPU seconds when the last ``event`` on ``fun_name`` within
        [start, end] arrived (None: none did)."""
        return next((cpu for t, e, f, cpu in reversed(self.stamps)
                     if e == event and f == fun_name and start <= t <= end), None)


def unregister(remove: Callable, listener: Callable) -> None:
    """``remove(listener)`` (a ``jax.monitoring.unregister_*``), where it is registered."""
    with suppress(AssertionError, ValueError, KeyError):  # JAX asserts it was
        remove(listener)


def disagreements(entry: str, variant: str, stages: dict[str, list[float]],
                  events: dict[str, list[float]]) -> list[Note]:
    """Warnings where JAX's own clock disagrees with ours beyond the tolerance."""
    out: list[Note] = []
    for phase, tol in TOLERANCE.items():
        ours, theirs = median(stages.get(phase)), median(events.get(phase))
        if math.isnan(ours) or math.isnan(theirs):
            continue
        gap = abs(ours - theirs)
        if theirs == 0:
            out.append(Warned("no_stage_event", variant, phase, entry))
        elif gap > tol * ours and gap > TOLERANCE_ABS_S:
            out.append(Warned("clock_disagrees", variant, phase, ours, theirs))
    return out

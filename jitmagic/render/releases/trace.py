"""A comparison as Chrome trace events (``--trace FILE.json``) for Perfetto, in µs."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from ...model.causes.xla_passes import ProfiledCompile
from ...model.comparison import Comparison
from ...model.reports.releases import Bisection, Releases
from ...model.rows import STAGE_PHASES, VariantResult
from ...model.sweep import Sweep
from ..format import PHASE_LABELS
from . import PART_NAMES


def trace_json(r: Comparison | Sweep | Releases | Bisection) -> str:
    """The trace-event file's text: ``{"traceEvents": [...]}``."""
    if isinstance(r, Bisection):
        r = r.measured
    runs = [(f"jax {x.release}", c) for x in r.results if (c := x.measured)] \
        if isinstance(r, Releases) else [(f"{r.name}={v}", c) for v, c in zip(
            r.values, r.points, strict=False)] if isinstance(r, Sweep) else [(r.entry, r)]
    events = []
    for pid, (process, c) in enumerate(runs, 1):
        events.append(_named(pid, 0, "process_name", process))
        for tid, (variant, v) in enumerate(c.variants.items(), 1):
            events += [_named(pid, tid, "thread_name", variant), *_stages(pid, tid, v)]
            profiled = c.xla_passes.compiles.get(variant) if c.xla_passes else None
            if profiled is not None:
                at = tid + len(c.variants)
                events += [_named(pid, at, "thread_name",
                                  f"{variant}: XLA's compile, profiled once (--xla)"),
                           *_compile(pid, at, profiled)]
    return json.dumps({"traceEvents": events, "displayTimeUnit": "ms"})


def _stages(pid: int, tid: int, v: VariantResult) -> list[dict[str, Any]]:
    """The median first call holding the stages' medians."""
    stages = [(PHASE_LABELS[p], v.median(p)) for p in STAGE_PHASES]
    return _holding(pid, tid, 0.0, (PHASE_LABELS["first_call_s"], v.median("first_call_s")),
                    stages)[0]


def _compile(pid: int, tid: int, c: ProfiledCompile) -> list[dict[str, Any]]:
    """A profiled compile: before XLA's passes, the HLO passes, code generation."""
    before = _laid(pid, tid, 0.0, [(PART_NAMES["before_passes_s"], c.before_passes_s)])
    passes, end = _holding(pid, tid, c.before_passes_s or 0.0, ("HLO passes", c.hlo_passes_s),
                           [(p.name, p.seconds) for p in c.passes])
    return [*before, *passes, *_laid(pid, tid, end, [(PART_NAMES["codegen_s"], c.codegen_s)])]


def _holding(pid: int, tid: int, start: float, parent: tuple[str, float | None],
             parts: Sequence[tuple[str, float | None]]) -> tuple[list[dict[str, Any]], float]:
    """``parent`` holding ``parts`` where they fit, else after them; events and end (all
    laid in whole nanoseconds, so that nothing overlaps by a rounding)."""
    at, inside, size = round(start * 1e9), sum(_ns(s) for _, s in parts), _ns(parent[1])
    fits = inside <= size
    events = [*_laid(pid, tid, (at if fits else at + inside) / 1e9, [parent]),
              *_laid(pid, tid, start, parts)]
    return events, (at + (size if fits else inside + size)) / 1e9


def _ns(seconds: float | None) -> int:
    """``seconds`` in whole nanoseconds (0: unmeasured)."""
    return 0 if seconds is None or math.isnan(seconds) else round(seconds * 1e9)


def _laid(pid: int, tid: int, start: float, parts: Sequence[tuple[str, float | None]]
          ) -> list[dict[str, Any]]:
    """Complete events laid from ``start`` in whole nanoseconds; unmeasured parts left out."""
    events, at = [], round(start * 1e9)
    for name, seconds in parts:
        if seconds is None or math.isnan(seconds):
            continue
        events.append({"name": name, "ph": "X", "pid": pid, "tid": tid, "ts": at / 1e3,
                       "dur": _ns(seconds) / 1e3})
        at += _ns(seconds)
    return events


def _named(pid: int, tid: int, kind: str, name: str) -> dict[str, Any]:
    """A metadata event naming a process or a thread (a track)."""
    return {"name": kind, "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}

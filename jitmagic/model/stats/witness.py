"""Which clock decides a verdict: wall time on a quiet machine, the process's CPU time on a
busy one (docs/significance.md), busy as the cold first calls' waits for a CPU say."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any


class Clock(StrEnum):
    """The clocks a verdict can be decided on, saved by value (``Clock("cpu")`` reads too)."""

    WALL = "wall"
    CPU = "CPU"

    @classmethod
    def _missing_(cls, value: Any) -> Clock:
        for clock in cls:
            if isinstance(value, str) and value.lower() == clock.value.lower():
                return clock
        raise ValueError(f"a clock is {cls.WALL.value!r} or {cls.CPU.value!r}, not {value!r}")


WALL, CPU = Clock.WALL, Clock.CPU
#: Cold runs that waited for a CPU this share of their time or more ran on a busy machine.
BUSY_SHARE = 0.1
FIRST_CALL, WAIT = "first_call_s", "wait_s"
#: How busy the machine was in each cold first call: the wait, PSI "some", the load average.
CONTENTION_KEYS = (WAIT, "pressure_s", "load")


def cpu_key(key: str) -> str:
    """``trace_s`` → ``trace_cpu_s``: the CPU seconds beside a timed key."""
    return key[:-2] + "_cpu_s"


def waited_share(rows: Iterable[Mapping[str, Sequence[float]]]) -> float | None:
    """wait / (wait + CPU time) of ``rows``' cold first calls (None: not measured)."""
    waited = ran = 0.0
    for samples in rows:
        runs = list(zip(samples.get(WAIT, ()), samples.get(cpu_key(FIRST_CALL), ()),
                        strict=False))
        waited += math.fsum(w for w, _ in runs)
        ran += math.fsum(c for _, c in runs)
    return waited / (waited + ran) if waited + ran > 0 else None


def is_busy(share: float | None) -> bool:
    """Whether a :func:`waited_share` says the machine was busy (unmeasured: not busy)."""
    return share is not None and share >= BUSY_SHARE


#: Two reports' loads differ where one's threads got a CPU more than this many times less
#: of the time than the other's: across such loads the same code's CPU seconds moved
#: 1.37–1.54× (docs/significance.md#cpu-time-across-loads).
LOAD_APART = 1.5


def loads_differ(old: float | None, new: float | None) -> bool:
    """Whether two waited shares are of materially different loads (:data:`LOAD_APART`)."""
    if old is None or new is None:
        return False
    ran = sorted((1.0 - old, 1.0 - new))
    return ran[0] * LOAD_APART < ran[1]


def clock_for(rows: Sequence[Mapping[str, Sequence[float]]], *keys: str,
              busy: bool | None = None) -> Clock:
    """The one rule: CPU time where the machine was ``busy`` (by default as ``rows``' cold
    first calls' waits say) and every row has CPU samples of every key; else wall time."""
    busy = is_busy(waited_share(rows)) if busy is None else busy
    cpu = bool(rows) and all(has_cpu(r, k) for r in rows for k in keys or (FIRST_CALL,))
    return CPU if busy and cpu else WALL


def has_cpu(samples: Mapping[str, Sequence[float]], key: str) -> bool:
    """Whether every run of ``key`` has its CPU seconds beside it (and there are runs)."""
    return len(samples.get(cpu_key(key), ())) == len(samples.get(key, ())) > 0


def on(samples: Mapping[str, Sequence[float]], key: str, clock: Clock) -> list[float]:
    """The samples of ``key`` on ``clock``."""
    if not isinstance(clock, Clock):
        raise TypeError(f"a clock is a Clock, not {clock!r}")
    return list(samples.get(cpu_key(key) if clock is CPU else key, ()))


#: CPU-time samples are judged only where each side's median is this many ticks or more.
RESOLVED_TICKS = 10


def under_ticks(sides: Iterable[Sequence[float]], tick: float | None) -> bool:
    """Whether CPU-time samples ``sides`` are too few ticks long to judge."""
    if tick is None or not math.isfinite(tick) or tick <= 0:
        return False
    return any(xs and statistics.median(xs) < RESOLVED_TICKS * tick for xs in sides)

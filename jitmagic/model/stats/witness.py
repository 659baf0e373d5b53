"""Which clock decides a verdict: wall time on a quiet machine, the process's CPU time on
a busy one.

On a quiet machine the two agree, and wall time is what the user waits for. On a busy
one (a shared notebook server, a CI runner) wall time stretches by however long the
process waited for a CPU, and moves either way, while the CPU time the process spent
(every thread: XLA compiles in threads of its own, so it may exceed wall time) stays
near the quiet answer (docs/significance.md). How busy the machine was is itself
measured, run by run: the seconds the process's threads waited for a CPU during each
cold first call (``wait_s``), beside the CPU seconds they ran.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from enum import StrEnum
from typing import Any


class Clock(StrEnum):
    """The clocks a verdict can be decided on: the seconds waited for (wall) or the
    process's CPU seconds. Saved in reports by value ("wall", "CPU"); ``Clock("cpu")``
    reads as :attr:`CPU` too (a clock given by hand, as ``Comparison.difference`` takes)."""

    WALL = "wall"
    CPU = "CPU"

    @classmethod
    def _missing_(cls, value: Any) -> Clock:
        for clock in cls:
            if isinstance(value, str) and value.lower() == clock.value.lower():
                return clock
        raise ValueError(f"a clock is {cls.WALL.value!r} or {cls.CPU.value!r}, not {value!r}")


WALL, CPU = Clock.WALL, Clock.CPU
#: Cold runs whose threads waited for a CPU this share of the time they were ready to run
#: or more, together, ran on a busy machine (docs/significance.md has the measurements).
BUSY_SHARE = 0.1
FIRST_CALL, WAIT = "first_call_s", "wait_s"
#: How busy the machine was during each cold first call: the seconds this process's
#: threads waited for a CPU, the machine's CPU pressure stall (PSI "some") in the same
#: interval, and the load average at its end (each absent where the platform has none).
CONTENTION_KEYS = (WAIT, "pressure_s", "load")


def cpu_key(key: str) -> str:
    """The sample key of the process's CPU seconds beside a timed key: ``trace_s`` →
    ``trace_cpu_s``."""
    return key[:-2] + "_cpu_s"


def waited_share(rows: Iterable[Mapping[str, Sequence[float]]]) -> float | None:
    """The share of the time the threads of ``rows``' cold first calls were ready to run
    that they spent waiting for a CPU, all runs together: wait / (wait + CPU time). It
    does not depend on how many threads ran at once, as a share of wall time would
    (XLA compiles on several threads). None: the wait was not measured (macOS)."""
    waited = ran = 0.0
    for samples in rows:
        runs = list(zip(samples.get(WAIT, ()), samples.get(cpu_key(FIRST_CALL), ()),
                        strict=False))
        waited += math.fsum(w for w, _ in runs)
        ran += math.fsum(c for _, c in runs)
    return waited / (waited + ran) if waited + ran > 0 else None


def is_busy(share: float | None) -> bool:
    """Whether a :func:`waited_share` says the machine was busy (unmeasured: not busy,
    and wall time decides as before)."""
    return share is not None and share >= BUSY_SHARE


#: Two reports' loads differ where one's threads got a CPU more than this many times less
#: of the time they were ready to run than the other's (:func:`loads_differ`; 1 − waited
#: share). Measured (docs/significance.md#cpu-time-across-loads): two runs of the same
#: code minutes apart, their threads waiting 17–37% against 66–83% of the time (0.83–0.63
#: against 0.34–0.17 of it running), took 1.37–1.54× the CPU seconds in the quieter one,
#: as the pytest gate met it; so across such loads no clock compares like with like.
LOAD_APART = 1.5


def loads_differ(old: float | None, new: float | None) -> bool:
    """Whether two waited shares (:func:`waited_share`) are of materially different loads:
    the threads of one got a CPU more than :data:`LOAD_APART` times less of the time they
    were ready to run. Unmeasured on either side: not known to differ (False)."""
    if old is None or new is None:
        return False
    ran = sorted((1.0 - old, 1.0 - new))
    return ran[0] * LOAD_APART < ran[1]


def clock_for(rows: Sequence[Mapping[str, Sequence[float]]], key: str = FIRST_CALL) -> Clock:
    """The clock that decides ``key`` between ``rows``: CPU where the machine was busy
    and every row has as many CPU samples of ``key`` as wall samples, else wall."""
    if not is_busy(waited_share(rows)):
        return WALL
    return CPU if all(has_cpu(r, key) for r in rows) else WALL


def has_cpu(samples: Mapping[str, Sequence[float]], key: str) -> bool:
    """Whether every run of ``key`` has its CPU seconds beside it (and there are runs)."""
    return len(samples.get(cpu_key(key), ())) == len(samples.get(key, ())) > 0


def on(samples: Mapping[str, Sequence[float]], key: str, clock: Clock) -> list[float]:
    """The samples of ``key`` on ``clock``."""
    if not isinstance(clock, Clock):
        raise TypeError(f"a clock is a Clock, not {clock!r}")
    return list(samples.get(cpu_key(key) if clock is CPU else key, ()))


#: CPU-time samples are judged only where each side's median is this many of the CPU
#: clock's ticks or more: a sample is off by up to a tick, so under ten a ratio can be off
#: by more than a tenth, and three runs of one tick each read "no measurable difference"
#: (a TPU v5e host's lowering, 8 ms of wall time, read 10 ms on its 10 ms clock, flat and
#: nested alike, where wall time said 1.49×).
RESOLVED_TICKS = 10


def under_ticks(sides: Iterable[Sequence[float]], tick: float | None) -> bool:
    """Whether CPU-time samples ``sides`` are too few ticks long to judge: some side's
    median under :data:`RESOLVED_TICKS` of the clock's ``tick`` (seconds; None or NaN:
    not known, as in reports before it was recorded, and judged as before)."""
    if tick is None or not math.isfinite(tick) or tick <= 0:
        return False
    return any(xs and statistics.median(xs) < RESOLVED_TICKS * tick for xs in sides)

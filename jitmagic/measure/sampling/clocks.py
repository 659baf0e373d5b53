"""jitmagic's own clocks, read in one place: wall seconds (``time.perf_counter``'s) and
the process's CPU seconds (``time.process_time``'s, every thread).

Test suites freeze time (freezegun, ``mock.patch("time.perf_counter")``): the steady loop
count then grew without end and every run read as waiting for a CPU. So the clocks are
bound once, at import, where neither a later patch nor freezegun reaches them; a clock
already frozen at import is :class:`FrozenClockError` from :func:`check`.
"""

from __future__ import annotations

import functools
import math
import time

from ...errors import InputError

#: Wall seconds, as ``time.perf_counter()`` read when jitmagic was imported (a partial,
#: not the function itself, so freezegun's sweep of module attributes passes it by).
wall = functools.partial(time.perf_counter)
#: The process's CPU seconds (every thread, XLA's compile threads included), likewise.
cpu = functools.partial(time.process_time)

#: Reads of one value before the wall clock counts as frozen (a live one ticks in ns).
WALL_READS = 1000
#: Busy wall seconds without a CPU clock tick before it counts as frozen (a live one
#: ticks within 16 ms even on a coarse platform).
CPU_WATCH_S = 0.05

#: What to do about a frozen clock, said after which one it is.
FIX = ("a test framework (freezegun, unittest.mock.patch) froze it before jitmagic was "
       "imported, and jitmagic times with the clocks it found then: import jitmagic "
       "before time is frozen (at the top of conftest.py, for example), or measure "
       "outside the frozen block")


class FrozenClockError(InputError):
    """A clock jitmagic times with does not advance; the message names it and the fix."""


def check() -> None:
    """``FrozenClockError`` unless both clocks advance (within :data:`WALL_READS` reads,
    :data:`CPU_WATCH_S` of busy wall time)."""
    first = wall()
    for _ in range(WALL_READS):
        if wall() != first:
            break
    else:
        raise FrozenClockError(f"jitmagic cannot time this: the wall clock "
                               f"(time.perf_counter) read {first!r} {WALL_READS} times in "
                               f"a row; {FIX}")
    began, start = cpu(), wall()
    while cpu() == began:
        if wall() - start > CPU_WATCH_S:
            raise FrozenClockError(
                f"jitmagic cannot time this: the process's CPU clock (time.process_time) "
                f"stayed at {began!r} through {CPU_WATCH_S * 1000:.0f} ms of busy wall time, "
                f"so every run would read as waiting for a CPU; {FIX}")


@functools.cache
def cpu_tick() -> float:
    """The CPU clock's step in seconds, read once a process (NaN: no two steps within
    :data:`CPU_WATCH_S`): under 1 µs on Linux, 10 ms on a TPU v5e host under gVisor."""
    start = wall()
    seen = [cpu()]
    while len(seen) < 3:
        now = cpu()
        if now != seen[-1]:
            seen.append(now)
        elif wall() - start > CPU_WATCH_S:
            return math.nan
    return seen[2] - seen[1]


def advanced(seconds: float, calls: int) -> None:
    """``FrozenClockError`` where ``calls`` calls were timed as no time at all (a clock
    that stopped after :func:`check`)."""
    if calls > 0 and seconds <= 0:
        raise FrozenClockError(f"jitmagic cannot time this: {calls:,} calls read 0 s on "
                               f"the wall clock (time.perf_counter); {FIX}")

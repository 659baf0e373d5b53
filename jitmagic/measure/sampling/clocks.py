"""jitmagic's own clocks, read in one place: wall seconds (``time.perf_counter``'s) and
the process's CPU seconds (``time.process_time``'s, every thread).

Test suites freeze time (freezegun, ``unittest.mock.patch("time.perf_counter", ...)``):
with a frozen wall clock the steady state's loop count grew without end and a Ctrl-C was
seen a minute late; with a frozen CPU clock every run read as waiting for a CPU the whole
time. So the clocks are bound here once, at import, and held where neither a later patch
of the ``time`` module nor freezegun (which replaces every module attribute that *is* one
of ``time``'s functions) reaches them; the front ends and the measuring code read only
these. A clock that was already frozen when jitmagic was imported is caught by
:func:`check` before a measurement times anything, and said so (:class:`FrozenClockError`)
instead of spinning or claiming a busy machine. Nothing here imports JAX.
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

#: How many reads of the wall clock may return one value before it counts as frozen
#: (two reads in a row differ on a live clock: it ticks in nanoseconds, or 100 ns).
WALL_READS = 1000
#: How long (wall seconds) the CPU clock is watched for a tick, busy, before it counts as
#: frozen: a live one ticks within microseconds here, within 16 ms on a coarse platform.
CPU_WATCH_S = 0.05

#: What to do about a frozen clock, said after which one it is.
FIX = ("a test framework (freezegun, unittest.mock.patch) froze it before jitmagic was "
       "imported, and jitmagic times with the clocks it found then: import jitmagic "
       "before time is frozen (at the top of conftest.py, for example), or measure "
       "outside the frozen block")


class FrozenClockError(InputError):
    """A clock jitmagic times with does not advance, so nothing it timed would be true;
    the message names the clock and what to do."""


def check() -> None:
    """``FrozenClockError`` unless both clocks advance: the wall clock within
    :data:`WALL_READS` reads, the CPU clock within :data:`CPU_WATCH_S` of busy wall time
    (on a live machine: a few reads, microseconds)."""
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
    """The smallest step the process's CPU clock was seen to take, in seconds (NaN where
    it did not step twice within :data:`CPU_WATCH_S`): under a microsecond on Linux, 10 ms
    on a TPU v5e host under gVisor, where a 20 ms stage reads 10, 20 or 30 ms. Read once a
    process, busy for at most two steps."""
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
    """``FrozenClockError`` where ``calls`` calls (one or more) were timed as
    ``seconds`` of no time at all: a clock that stopped after :func:`check` (a loop that
    grows until its timing reaches a target would otherwise grow without end)."""
    if calls > 0 and seconds <= 0:
        raise FrozenClockError(f"jitmagic cannot time this: {calls:,} calls read 0 s on "
                               f"the wall clock (time.perf_counter); {FIX}")

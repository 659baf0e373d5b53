"""Clocks a test framework freezes (freezegun, ``unittest.mock.patch``): jitmagic reads
its own (``jitmagic.measure.sampling.clocks``, bound at import), so a patch of
``time.perf_counter`` or ``time.process_time`` made later reaches no measurement, which
then finishes with true figures; a clock frozen before jitmagic was imported is said, not
spun on or read as a busy machine; and the steady state's loop is bounded in calls, so a
clock that barely moves can neither make it grow for minutes nor hide a stop.

Real measurements, no timing asserted: the one bound on time (a child given 120 s) is
there to catch the hang a frozen wall clock used to cause (minutes of steady state)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap
from unittest import mock

import jax.numpy as jnp
import pytest

import jitmagic
from jitmagic.measure.sampling import clocks
from jitmagic.measure.sampling.stages import MOST_STEADY_CALLS, POLL_CALLS, SteadyTimer, autorange
from jitmagic.measure.sampling.stops import Checkpoint, Stop


def tiny(x):
    return x * 2 + 1


#: A child that measures ``tiny`` with ``time.perf_counter`` frozen, the steady state
#: auto-ranged (no ``number``): before jitmagic read its own clock, its loop count grew
#: 100× a timing for minutes.
FROZEN_WALL = textwrap.dedent("""
    import json
    from unittest import mock
    import jax.numpy as jnp
    import jitmagic

    def tiny(x):
        return x * 2 + 1

    with mock.patch("time.perf_counter", lambda: 1.0):
        c = jitmagic.compare(tiny, jnp.ones(4), repeat=1, progress=False)
    print(json.dumps({"stopped": c.stopped, "wall_s": c.wall_s,
                      "samples": c.flat.samples}))
""")


@pytest.mark.slow
def test_a_wall_clock_patched_after_import_leaves_the_measurement_true():
    done = subprocess.run([sys.executable, "-c", FROZEN_WALL], capture_output=True,
                          text=True, timeout=120)  # it used to run for minutes
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["stopped"] is None and report["wall_s"] > 0
    samples = report["samples"]
    for phase in ("trace_s", "lower_s", "compile_s", "first_call_s", "execute_s"):
        assert samples[phase] and all(s > 0 for s in samples[phase]), phase
    # the first call holds its stages: the clock that timed it moved with them
    assert samples["first_call_s"][0] > samples["compile_s"][0]


def test_a_cpu_clock_patched_after_import_is_no_busy_machine():
    with mock.patch("time.process_time", lambda: 1.0):
        c = jitmagic.compare(tiny, jnp.ones(4), repeat=1, number=2, progress=False)
    samples = c.flat.samples
    cpu = {k: v for k, v in samples.items() if k.endswith("_cpu_s")}
    assert {"first_call_cpu_s", "execute_cpu_s"} <= set(cpu)
    assert all(s > 0 for v in cpu.values() for s in v), cpu  # frozen, all read 0
    assert "100% of the time" not in str(c)  # no run waited for a CPU all its time


@pytest.mark.parametrize(("clock", "named"), [("wall", "time.perf_counter"),
                                              ("cpu", "time.process_time")])
def test_a_clock_frozen_before_import_is_said_not_timed_with(monkeypatch, clock, named):
    monkeypatch.setattr(clocks, clock, lambda: 1.0)  # as if bound to a frozen clock
    with pytest.raises(clocks.FrozenClockError) as raised:
        jitmagic.compare(tiny, jnp.ones(4), repeat=1, progress=False)
    message = str(raised.value)
    assert "jitmagic cannot time this: " in message and f"({named})" in message
    assert "import jitmagic before time is frozen" in message


class Crawling:
    """A wall clock that moves a picosecond a read: a calibration loop that grows until
    its timing reaches a target would grow without end on it."""

    def __init__(self) -> None:
        self.reads = itertools.count()

    def __call__(self) -> float:
        return next(self.reads) * 1e-12


class Watched(Checkpoint):
    """A checkpoint that notes how many calls had been made at each ``poll``."""

    def __init__(self, calls: list[int]) -> None:
        super().__init__()
        self.calls, self.at = calls, []

    def poll(self, stage: str, times: dict[str, float] | None = None) -> None:
        self.at.append(self.calls[0])
        super().poll(stage, times)


def test_the_steady_state_is_bounded_in_calls_on_a_clock_that_barely_moves(monkeypatch):
    monkeypatch.setattr(clocks, "wall", Crawling())
    calls = [0]
    runaway = 5 * MOST_STEADY_CALLS  # before: 100× more calls a timing, without end

    def stmt() -> None:
        calls[0] += 1
        if calls[0] > runaway:
            raise RuntimeError("the steady state ran away")

    check = Watched(calls)
    loops, per_call, _ = autorange(SteadyTimer(stmt), 0.2, check)
    assert loops == MOST_STEADY_CALLS and per_call > 0
    gaps = [b - a for a, b in itertools.pairwise([0, *check.at])]
    assert max(gaps) <= POLL_CALLS  # a stop is asked for at least every POLL_CALLS calls
    assert calls[0] <= 3 * MOST_STEADY_CALLS


def test_a_stop_during_a_crawling_steady_state_is_seen_within_a_chunk(monkeypatch):
    monkeypatch.setattr(clocks, "wall", Crawling())
    calls = [0]
    check = Watched(calls)

    def stmt() -> None:
        calls[0] += 1
        if calls[0] == 200_000:
            check.interrupted = True  # Ctrl-C, while the calls run

    with pytest.raises(Stop, match="interrupted by the user"):
        autorange(SteadyTimer(stmt), 0.2, check)
    assert calls[0] <= 200_000 + POLL_CALLS  # before: the whole timing of 10^6 calls

"""How busy the machine was during a run: the process's CPU time, its threads' wait for
a CPU, the machine's CPU pressure and its load average.

Wall time stretches under load; the CPU time of every thread stays near the quiet
answer, and the wait says how far wall time can be trusted. Sources:
``/proc/self/task/*/schedstat`` (per thread: ns on a CPU, ns waiting for one),
``/proc/pressure/cpu`` (Linux PSI "some" stall total, µs) and ``os.getloadavg()``. A
source missing or malformed (macOS, a container) reads as None.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from . import clocks

TASKS = Path("/proc/self/task")
PRESSURE = Path("/proc/pressure/cpu")


@dataclass(frozen=True)
class Reading:
    """One moment's counters in seconds (None where the source is missing)."""

    cpu_s: float
    wait_s: float | None
    pressure_s: float | None


def read(busy: bool = True) -> Reading:
    """The counters now (each read under a millisecond); without ``busy``, CPU alone."""
    return Reading(clocks.cpu(), *((_waited(), _pressure()) if busy else (None, None)))


def _waited() -> float | None:
    """Seconds this process's live threads have waited for a CPU, summed."""
    total, seen = 0, False
    try:
        tasks = list(TASKS.iterdir())
    except OSError:
        return None
    for task in tasks:
        try:
            fields = (task / "schedstat").read_text().split()
            total += int(fields[1])
            seen = True
        except (OSError, IndexError, ValueError):  # ended meanwhile, or not this format
            continue
    return total / 1e9 if seen else None


def _pressure() -> float | None:
    """The machine's CPU "some" stall total, in seconds (Linux's PSI)."""
    try:
        for line in PRESSURE.read_text().splitlines():
            if line.startswith("some "):
                fields = dict(part.split("=", 1) for part in line.split()[1:])
                return int(fields["total"]) / 1e6
    except (OSError, KeyError, ValueError):
        return None
    return None


def load_average() -> float | None:
    """The one-minute load average (None where the platform has none)."""
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return None


def since(before: Reading, after: Reading, busy: bool = True) -> dict[str, float]:
    """What one run took of each counter, by sample key: ``cpu_s``; with ``busy`` also
    ``wait_s`` and ``pressure_s`` where both readings have them and it did not go
    backwards, and ``load`` at its end."""
    out = {"cpu_s": max(0.0, after.cpu_s - before.cpu_s)}
    if not busy:
        return out
    for key in ("wait_s", "pressure_s"):
        a, b = getattr(before, key), getattr(after, key)
        if a is not None and b is not None and b >= a:
            out[key] = b - a
    if (load := load_average()) is not None:
        out["load"] = load
    return out

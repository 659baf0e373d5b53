"""Whether the runs a report calls cold were cold: on a TPU a compiler does less with each
repeat of a program in one process (docs/measuring.md); runs that were not are left out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ... import backends
from .rule import median
from .witness import CONTENTION_KEYS, CPU, FIRST_CALL, WALL, cpu_key, on

#: A run whose XLA compile took less than this share of its series' cold reference, on
#: wall and on CPU time, was not cold (a cold TPU series stays within ±20% of its median).
WARM_SHARE = 0.7
#: The stage whose work a warm compiler skips.
COMPILE = "compile_s"
#: The samples of a cold run, one per run, that a warm run's are left out of.
COLD_KEYS = tuple(k for stage in ("trace_s", "lower_s", COMPILE, FIRST_CALL)
                  for k in (stage, cpu_key(stage))) + CONTENTION_KEYS


def reference(xs: Sequence[float]) -> float:
    """A series' cold compile: the slower of its first run and its median."""
    return max(xs[0], median(list(xs)))


def warm_runs(samples: Mapping[str, Sequence[float]],
              platform: str | None) -> tuple[int, ...]:
    """The runs (0-based) whose XLA compile fell under :data:`WARM_SHARE` of
    :func:`reference` on both clocks, on a backend that keeps work between compiles."""
    if platform is None or not backends.named(platform).keeps_work:
        return ()
    wall, cpu = on(samples, COMPILE, WALL), on(samples, COMPILE, CPU)
    if len(wall) < 2 or len(cpu) != len(wall) or min(wall + cpu) <= 0:
        return ()
    cold_wall, cold_cpu = reference(wall), reference(cpu)
    return tuple(i for i in range(len(wall))
                 if wall[i] < WARM_SHARE * cold_wall and cpu[i] < WARM_SHARE * cold_cpu)


def cold_only(samples: Mapping[str, Sequence[float]],
              platform: str | None) -> dict[str, list[float]]:
    """``samples`` without the :func:`warm_runs`' entries of :data:`COLD_KEYS`."""
    warm = set(warm_runs(samples, platform))
    return {key: [x for i, x in enumerate(xs) if not (warm and key in COLD_KEYS
                                                     and i in warm)]
            for key, xs in samples.items()}


def warm_extra(compile_s: float, samples: Mapping[str, Sequence[float]],
               platform: str | None) -> bool:
    """Whether an extra compile after the runs (``--xla``'s) was not cold, on wall time."""
    if platform is None or not backends.named(platform).keeps_work:
        return False
    wall = on(samples, COMPILE, WALL)
    return bool(wall) and compile_s < WARM_SHARE * reference(wall)

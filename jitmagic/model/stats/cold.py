"""Whether the runs a report calls cold were cold: each compile is checked, not assumed.

A cold run starts from cleared caches and a fresh lowering. On a CPU its XLA compile
then does all the work again. On a TPU v5e the compiler does less with each repeat of a
program in one process, and ``jax.clear_caches()`` does not undo it: a 24-layer MLP
compiled in 3.84 s, then 3.10, 2.80, ... 1.87 s, its CPU time falling with its wall
time, while three fresh processes agreed to 0.3% (3.85 s); GPUs keep autotuning results
between compiles in the same way (docs/measuring.md). A run whose compile fell well
below its series' cold reference on both clocks did less work, not less waiting (a busy
machine stretches wall time but not CPU time): it was not cold, the report says so, and
the verdict leaves it out.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence

from ... import backends
from .rule import median
from .witness import CONTENTION_KEYS
from .witness import CPU
from .witness import FIRST_CALL
from .witness import WALL
from .witness import cpu_key
from .witness import on

#: A run whose XLA compile took less than this share of its series' cold reference
#: (:func:`reference`), on wall and on CPU time, was not cold (the TPU MLP's compiles in
#: one process fell to 0.49-0.64 of the first; the seed's nested compile right after the
#: process's first flat one took 0.96-1.06 s against 3.3-3.9 s for every other; a cold
#: series on a TPU stays within about ±20% of its median).
WARM_SHARE = 0.7
#: The stage whose work a warm compiler skips.
COMPILE = "compile_s"
#: The samples of a cold run, one per run: a warm run's are left out of a verdict
#: (:func:`cold_only`); the steady state timed after it is no less steady.
COLD_KEYS = tuple(k for stage in ("trace_s", "lower_s", COMPILE, FIRST_CALL)
                  for k in (stage, cpu_key(stage))) + CONTENTION_KEYS


def reference(xs: Sequence[float]) -> float:
    """A series' cold compile, to judge each run by: the slower of its first run and its
    median. Neither alone: a compiler that keeps work makes the runs after the first
    ever cheaper (the median falls with them), and the first run itself can be the warm
    one (on a TPU v5e, the seed's nested compile right after the process's first flat
    one, in every order tried: benchmarks/tpu_order.py)."""
    return max(xs[0], median(list(xs)))


def warm_runs(samples: Mapping[str, Sequence[float]],
              platform: str | None) -> tuple[int, ...]:
    """The runs (0-based, in the order taken) of one variant's ``samples``, measured on
    JAX's ``platform``, whose XLA compile fell under :data:`WARM_SHARE` of the series'
    :func:`reference` on both clocks. None are where CPU time was not measured (wall
    time alone cannot tell less work from less waiting), where the platform is not known
    (an older report), or on a backend that keeps no work between compiles (a CPU: its
    first compile in a process is only slower from one-time set-up, which is no warmth)."""
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
    """``samples`` without the :func:`warm_runs`' entries of :data:`COLD_KEYS`: what a
    verdict on the cold first call reads. A warm run is no sample of a cold start, and
    kept it would pass for the fastest of them (the rule reads the fastest runs), so it
    is left out, said so under the verdict, and ``-r auto`` takes more runs instead."""
    warm = set(warm_runs(samples, platform))
    return {key: [x for i, x in enumerate(xs) if not (warm and key in COLD_KEYS
                                                     and i in warm)]
            for key, xs in samples.items()}


def warm_extra(compile_s: float, samples: Mapping[str, Sequence[float]],
               platform: str | None) -> bool:
    """Whether an extra compile after the runs (``--xla``'s profiled one) of the program
    whose runs are ``samples`` was not cold: under :data:`WARM_SHARE` of the runs'
    :func:`reference`, on a backend that keeps work between compiles. Wall time only,
    as the profiler records it; a profiled compile is slower than a plain one, never
    faster, so one that fast did less work. On a TPU v5e the flat seed's profiled
    compile after a comparison took 1.17 s against 4.14-4.97 s cold."""
    if platform is None or not backends.named(platform).keeps_work:
        return False
    wall = on(samples, COMPILE, WALL)
    return bool(wall) and compile_s < WARM_SHARE * reference(wall)

"""Several processes' samples of one variant, as one: the slowest process's, run by run.

Under ``jax.distributed`` every process runs the same cold runs in step, and a training
step waits for the slowest of them. So :func:`slowest` makes a variant's headline
samples from every process's: for each cold run, the run of the process whose first call
took longest, its trace, lowering and compile with it (so that the stages and the rest
still add up to that first call, as they do for one process); for each steady-state
sample, the slowest process's. The variant keeps every process's own samples beside
(``VariantResult.per_process``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .saved.schema import items
from .saved.schema import mapping
from .saved.schema import seconds
from .stats.cold import COLD_KEYS
from .stats.witness import FIRST_CALL

#: One process's samples, by sample key (``trace_s``, ...), a list of seconds each.
Samples = dict[str, list[float]]


def slowest(per_process: Sequence[Samples]) -> Samples:
    """The slowest process's samples, run by run (see the module's docstring); a key that
    is not part of a cold run takes the largest sample of each run. Only runs every
    process has are merged; a cold run that some process stopped before its first call
    (``--timeout``) takes each stage's largest sample. The keys of a cold run
    (:data:`~.stats.cold.COLD_KEYS`) are the first call's, its stages, their CPU seconds
    and how busy the process's machine was."""
    if not per_process:
        return {}
    keys = dict.fromkeys(k for p in per_process for k in p)
    out = {k: [max(run) for run in zip(*(p.get(k, []) for p in per_process), strict=False)]
           for k in keys}
    firsts = list(zip(*(p.get(FIRST_CALL, []) for p in per_process), strict=False))
    for run, calls in enumerate(firsts):
        who = max(range(len(calls)), key=lambda i: calls[i])
        for k in COLD_KEYS:
            if k in out and run < len(out[k]):
                out[k][run] = per_process[who][k][run]
    return out


def read_per_process(value: Any, where: str) -> tuple[Samples, ...]:
    """``per_process`` as a report holds it: a list of sample objects, one per process."""
    decoded = items(mapping(items(seconds)))(value, where)
    return tuple({k: list(xs) for k, xs in p.items()} for p in decoded)

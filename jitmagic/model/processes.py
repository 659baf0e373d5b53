"""Several processes' samples of one variant, as one: under ``jax.distributed`` a step
waits for the slowest process, so a variant's headline samples are the slowest's, run by
run (``VariantResult.per_process`` keeps every process's own)."""

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
    """The slowest process's samples, run by run: each cold run's keys all from the process
    whose first call took longest (so they still add up to it), any other key the largest
    sample of each run; only runs every process has are merged."""
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

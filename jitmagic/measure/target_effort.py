"""``--effort`` with ``--target``: the flat program compiled for the target at XLA's lower
effort settings for a TPU, against the default, compile only.

The settings are the TPU's own (:func:`jitmagic.backends.effort.for_backend`, through
``--effort``'s :func:`~.parts.effort.candidates`: JAX's effort level O0, the one that
changed a TPU v5e's compiled program), each probed once on a tiny program compiled for
the target (one libtpu refuses is left out, said). Rows are the comparison's sampler's
(default, then each setting, in turn), each run a fresh lowering for the target
(untimed: no compiler option changes it) and its XLA compile timed with the row's
``compiler_options``, on wall and CPU time, in 3 to 5 rounds (more only while the one
rule leaves a setting undecided against the default). Nothing is called: what a
setting costs each call is not measurable without the TPU, and the report says so.
The user's config and ``XLA_FLAGS`` are never changed (the options go to each compile).
"""

from __future__ import annotations

import dataclasses
from contextlib import suppress
from typing import Any

import jax
import numpy as np

from ..backends import TPU
from ..errors import UserCodeError
from ..model.causes.effort import DEFAULT
from ..model.comparison import Comparison
from ..model.notes import Placed
from ..model.rows import PHASES
from ..model.stats.rule import difference
from ..model.target import TARGET
from ..model.target import EffortRow
from ..model.target import target_of
from ..options import AUTO
from .parts.effort import MOST_EFFORT_ROUNDS
from .parts.effort import baseline_of
from .parts.effort import candidates
from .sampling.conditions import frozen_heap
from .sampling.conditions import persistent_cache_off
from .sampling.monitor import Monitor
from .sampling.rounds import Rounds
from .sampling.runner import ColdSample
from .sampling.runner import Sampler
from .sampling.stages import cold_jit
from .sampling.stages import timed_stage
from .sampling.stops import Checkpoint
from .sampling.structure import ProgramFacts
from .variants.rows import Prepared
from .variants.rows import VariantSubject

#: What progress calls this part.
PART = "effort for the target"


@dataclasses.dataclass
class CompileAtSetting(VariantSubject):
    """One row: the flat program lowered afresh for the target, untimed, then compiled
    with ``compiler_options`` (timed)."""

    compiler_options: dict[str, Any] = dataclasses.field(default_factory=dict)

    def cold(self, monitor: Monitor, check: Checkpoint) -> ColdSample:
        v = self.prepared.variant
        opts = {k: o for k, o in v.jit_options.items() if k != "compiler_options"}
        _, jitted = cold_jit(v.fn, self.args, self.kwargs, opts or None)
        lowered = jitted.lower(*self.args, **self.kwargs)
        times: dict[str, float] = {}
        timed_stage(check, "XLA compile at a setting", times, "compile_s",
                    lambda: lowered.compile(compiler_options=self.compiler_options or None))
        return ColdSample(times, jitted, None)

    def describe(self, cold: ColdSample) -> ProgramFacts:
        return ProgramFacts()


def accepted(device: Any, baseline: dict[str, Any]
             ) -> tuple[list[Any], list[Placed]]:
    """(the TPU's settings libtpu takes, a note for each it refused), each probed on a
    tiny program compiled for ``device``."""
    from jax.sharding import SingleDeviceSharding

    spec = jax.ShapeDtypeStruct((8,), np.float32, sharding=SingleDeviceSharding(device))
    lowered = jax.jit(lambda x: x + 1).lower(spec)
    keep, notes = [], []
    for s in candidates(TPU):
        try:
            lowered.compile(compiler_options={**baseline, **s.options})
        except Exception as exc:  # libtpu's refusal: said, the rest measured
            why = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            notes.append(Placed("target_setting_refused", s.name, why))
            continue
        keep.append(s)
    return keep, notes


def _rounds(runs: Sampler) -> Rounds:
    """3 rounds, then up to 5 while the rule leaves a setting's compile undecided."""
    def decided() -> bool:
        default = runs.samples[DEFAULT].get("compile_s", [])
        return all(difference(default, s.get("compile_s", [])).decided
                   for n, s in runs.samples.items() if n != DEFAULT and n not in runs.errors)

    return Rounds(AUTO, decided, cap=MOST_EFFORT_ROUNDS)


def add_target_effort(result: Comparison, flat: Prepared, device: Any,
                      check: Checkpoint) -> Comparison:
    """``result`` with the effort rows in its ``--target`` record (its ``env``)."""
    record = target_of(result.env)
    if record is None or result.stopped or not result.flat.ok:
        return result
    baseline = baseline_of(flat)
    chosen, notes = accepted(device, baseline)
    rows = {DEFAULT: baseline, **{s.name: {**baseline, **s.options} for s in chosen}}
    lines = {DEFAULT: "the default", **{s.name: s.config for s in chosen}}
    runs = Sampler({n: CompileAtSetting(flat, compiler_options=o) for n, o in rows.items()},
                   PHASES, noun="setting", steady=False)
    with persistent_cache_off(), frozen_heap(), check.catching_interrupts(), \
            suppress(UserCodeError):  # every row failed: each says why
        runs.measure(_rounds(runs), None, Monitor(), check, what=PART)
    effort = {n: EffortRow(n, lines[n], tuple(runs.samples[n].get("compile_s", [])),
                           tuple(runs.samples[n].get("compile_cpu_s", [])),
                           runs.describe_failure(n) if n in runs.errors else None)
              for n in rows}
    made = dataclasses.replace(record, effort=effort, effort_notes=tuple(notes))
    return dataclasses.replace(result, env={**result.env, TARGET: made.to_dict()},
                               stopped=result.stopped or runs.stopped)

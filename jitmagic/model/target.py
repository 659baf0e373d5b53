"""``--target TOPOLOGY``: a comparison compiled for a TPU this machine lacks (no first call),
held in the comparison's ``env`` under :data:`TARGET`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .notes import Noted, read_notes
from .progress import ChildEnd, Said
from .rows import STAGE_PHASES as STAGES
from .saved import schema
from .stats.cold import cold_only
from .stats.rule import Difference, difference
from .stats.witness import CPU, WAIT, WALL, Clock, clock_for, is_busy, on

#: The key of the record in a comparison's ``env`` (where its numbers came from).
TARGET = "target"
#: How arguments were placed on the topology's devices (:attr:`TargetCompile.placement`).
ONE_DEVICE, REPLICATED, YOURS = "one device", "replicated", "your shardings"


@dataclass(frozen=True)
class Memory(schema.Saved):
    """XLA's memory analysis of one variant's program for one device of the target."""

    argument_bytes: int = schema.saved(schema.count, 0)
    output_bytes: int = schema.saved(schema.count, 0)
    alias_bytes: int = schema.saved(schema.count, 0)
    temp_bytes: int = schema.saved(schema.count, 0)
    code_bytes: int = schema.saved(schema.count, 0)

    @property
    def total_bytes(self) -> int:
        """What the program holds on a device at once, at most."""
        return (self.argument_bytes + self.output_bytes - self.alias_bytes
                + self.temp_bytes + self.code_bytes)


@dataclass(frozen=True)
class EffortRow(schema.Saved):
    """``--effort`` with ``--target``: the flat program's compile at one effort setting."""

    name: str = schema.saved(schema.text)  # "default", "jax_optimization_level=O0"
    #: What sets it: 'jax.config.update("jax_optimization_level", "O0")'.
    line: str = schema.saved(schema.text)
    compile_s: tuple[float, ...] = schema.saved(schema.items(schema.seconds),
                                                (), missing=schema.REQUIRED)
    compile_cpu_s: tuple[float, ...] = schema.saved(schema.items(schema.seconds),
                                                    (), missing=schema.REQUIRED)
    error: str | None = schema.saved(schema.optional(schema.text), None)

    @property
    def samples(self) -> dict[str, list[float]]:
        return {"compile_s": list(self.compile_s), "compile_cpu_s": list(self.compile_cpu_s)}


@dataclass(frozen=True)
class TargetCompile(schema.Saved):
    """What a comparison was compiled for, and on what (see the module's docstring)."""

    topology: str = schema.saved(schema.text)  # "v5e:2x2"
    devices: int = schema.saved(schema.count)  # chips, or cores where each is a device
    device_kind: str = schema.saved(schema.text)  # as JAX names it: "TPU v5 lite"
    host: str = schema.saved(schema.text)  # this host, whose seconds these are: "2-core x86_64 CPU"
    placement: str = schema.saved(schema.text)  # ONE_DEVICE, REPLICATED or YOURS
    #: One device's HBM (None: not known for this kind).
    hbm_bytes: int | None = schema.saved(schema.optional(schema.count), None)
    memory: dict[str, Memory] = field(default_factory=dict)  # by variant
    #: By variant, the runs (0-based) whose compile was not cold.
    warm: dict[str, tuple[int, ...]] = field(default_factory=dict)
    libtpu: str = schema.saved(schema.text, "")  # libtpu's version
    placement_notes: tuple[Noted, ...] = ()  # non-array arguments, shardings not taken
    #: ``--effort``: the default and each setting for the target, by name.
    effort: dict[str, EffortRow] = field(default_factory=dict)
    effort_notes: tuple[Noted, ...] = ()  # the settings left out, and why

    WHERE = TARGET
    FIELDS = (("memory", "memory", schema.mapping(Memory.from_dict), {}),
              ("warm", "warm", schema.mapping(schema.items(schema.count)), {}),
              ("placement_notes", "placement_notes", read_notes, ()),
              ("effort", "effort", schema.mapping(EffortRow.from_dict), {}),
              ("effort_notes", "effort_notes", read_notes, ()))

    def fits(self, variant: str) -> bool | None:
        """Whether ``variant``'s program fits one device's HBM (None: not known)."""
        memory = self.memory.get(variant)
        if memory is None or self.hbm_bytes is None:
            return None
        return memory.total_bytes <= self.hbm_bytes


def waited_share(rows: Sequence[Mapping[str, Sequence[float]]]) -> float | None:
    """wait / (wait + the stages' CPU time), all runs together (None: not measured)."""
    waited = math.fsum(w for r in rows for w in r.get(WAIT, ()))
    ran = math.fsum(x for r in rows for x in to_compiled(r, CPU))
    return waited / (waited + ran) if any(r.get(WAIT) for r in rows) and waited + ran > 0 \
        else None


def target_clock(flat: Mapping[str, Sequence[float]],
                 nested: Mapping[str, Sequence[float]]) -> Clock:
    """:func:`clock_for` both rows' stages, busy as :func:`waited_share` says."""
    return clock_for([flat, nested], *STAGES, busy=is_busy(waited_share([flat, nested])))


def to_compiled(samples: Mapping[str, Sequence[float]], clock: Clock = WALL) -> list[float]:
    """Each run's trace + lower + XLA compile on ``clock`` (runs missing a stage left out)."""
    columns = [on(samples, stage, clock) for stage in STAGES]
    return [sum(run) for run in zip(*columns, strict=False)] if all(columns) else []


#: A target comparison's verdict's key: each run's trace + lower + compile.
TARGET_COMPILE = "target_compile"


def compile_difference(flat: Mapping[str, Sequence[float]],
                       nested: Mapping[str, Sequence[float]],
                       clock: Clock | None = None) -> Difference:
    """Nested against flat on each cold run's trace + lower + compile, by the one rule."""
    clock = clock or target_clock(flat, nested)
    return difference(*(to_compiled(cold_only(s, "tpu"), clock) for s in (flat, nested)))


def stage_difference(flat: Mapping[str, Sequence[float]],
                     nested: Mapping[str, Sequence[float]], stage: str,
                     clock: Clock = WALL) -> Difference:
    """Nested against flat on one stage, by the one rule."""
    return difference(on(flat, stage, clock), on(nested, stage, clock))


def target_of(env: Mapping[str, Any]) -> TargetCompile | None:
    """The ``--target`` record in a comparison's ``env`` (None: none, or unreadable)."""
    found = env.get(TARGET)
    if not isinstance(found, dict):
        return None
    try:
        return TargetCompile.from_dict(found)
    except ValueError:  # ReportSchemaError: a report edited by hand
        return None


@dataclass(frozen=True)
class TopologyRefused(Said):
    """``--target``'s first compile for a topology, in a child process, did not finish."""

    topology: str
    end: ChildEnd

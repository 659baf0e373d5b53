"""``--target TOPOLOGY``: flat and nested traced, lowered and compiled for a TPU slice this machine
does not have, never run (issue 52), by libtpu's compile-only client started in this process;
the arguments placed by the user's shardings where they fit, else replicated."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.metadata
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding

from ..backends import TPU
from ..backends import target as tpu
from ..errors import InputError, UserCodeError
from ..model.causes.effort import DEFAULT
from ..model.comparison import Comparison
from ..model.notes import Note, Placed
from ..model.progress import Finished
from ..model.rows import PHASES
from ..model.stats.cold import warm_runs
from ..model.stats.rule import difference
from ..model.stats.witness import CONTENTION_KEYS, CPU
from ..model.target import (
    ONE_DEVICE,
    REPLICATED,
    TARGET,
    YOURS,
    EffortRow,
    Memory,
    TargetCompile,
    TopologyRefused,
    compile_difference,
    target_clock,
    target_of,
)
from ..options import AUTO, Options
from .children import Entry, run_child, stage
from .parts import add_parts
from .parts.effort import MOST_EFFORT_ROUNDS, baseline_of, candidates
from .parts.run import PartRun
from .sampling import clocks, contention, fresh
from .sampling.monitor import Monitor
from .sampling.rounds import Rounds, rounds_for
from .sampling.runner import ColdSample, Sampler
from .sampling.stages import cold_jit, environment, staged_programs, timed_stage
from .sampling.stops import Checkpoint, first_line
from .sampling.structure import ProgramFacts, same_compiled, structure
from .variants.rows import Prepared, VariantSubject, nothing_to_nest, variant_results


def topology_devices(topology: tpu.Topology) -> list[Any]:
    """The devices of ``topology`` from libtpu's compile-only client, else ``InputError``."""
    checked_in_child(topology)
    said: list[str] = []
    try:
        with tpu.libtpu_environment(), tpu.native_stderr_kept(said):
            return _described(topology)
    except Exception as exc:  # libtpu's own words: an unknown layout, a lock it cannot take
        raise InputError(f"--target {topology.name}: libtpu could not describe it: "
                         f"{first_line(exc)}") from None


def _described(topology: tpu.Topology) -> list[Any]:
    from jax.experimental import topologies

    return list(topologies.get_topology_desc(
        platform="tpu", topology_name=topology.name, chip_config_name="default",
        chips_per_host_bounds=topology.host_bounds, num_slices=1).devices)


#: The topologies a child process compiled for unharmed: this process compiles for them.
_CHECKED: set[str] = set()
#: Seconds a child gets to start libtpu and compile a small program for a topology.
CHECK_S = 300.0


def checked_in_child(topology: tpu.Topology) -> None:
    """Compile for ``topology`` in a child first: libtpu aborts the process on some layouts."""
    if topology.name in _CHECKED:
        return
    given = dataclasses.asdict(topology)
    end = run_child(Entry(__name__, compiles_for.__name__), given, timeout_s=CHECK_S,
                    env={**tpu.START_ENV, "JAX_PLATFORMS": "cpu"})
    if not isinstance(end, Finished):
        raise InputError(str(TopologyRefused(topology.name, end)))
    _CHECKED.add(topology.name)


def compiles_for(topology: dict[str, Any]) -> int:
    """In a child: a small program compiled for ``topology``; the number of devices."""
    stage("describing the topology")
    devices = _described(tpu.Topology(topology["name"], topology["kind"],
                                      tuple(topology["chips"])))
    stage("compiling a small program for it")
    _small_program(devices[0]).compile()
    return len(devices)


def _small_program(device: Any) -> Any:
    """A small program of jitmagic's own, lowered for ``device``."""
    spec = jax.ShapeDtypeStruct((8,), np.float32, sharding=SingleDeviceSharding(device))
    return jax.jit(lambda x: x * 2 + 1).lower(spec)


class _Placer:
    """Puts arrays on a topology's devices as ``ShapeDtypeStruct``, noting how."""

    def __init__(self, devices: list[Any]) -> None:
        self.devices, self.one = devices, len(devices) == 1
        self.everywhere = SingleDeviceSharding(devices[0]) if self.one else \
            NamedSharding(Mesh(np.array(devices), ("target",)), PartitionSpec())
        self.kinds: set[str] = set()
        self.notes: list[Note] = []

    def spec(self, x: Any, given: Any = None) -> Any:
        """``x``'s sharding: ``given``, else its own where its mesh fits, else replicated."""
        if not (hasattr(x, "shape") and hasattr(x, "dtype")):
            return x
        sharding = given if given is not None else getattr(x, "sharding", None)
        mesh: Any = getattr(sharding, "mesh", None)
        size = getattr(getattr(mesh, "devices", None), "size", 0)
        if not self.one and isinstance(sharding, NamedSharding) and size == len(self.devices):
            ours = Mesh(np.array(self.devices).reshape(mesh.devices.shape), mesh.axis_names)
            self.kinds.add(YOURS)
            return jax.ShapeDtypeStruct(x.shape, x.dtype,
                                        sharding=NamedSharding(ours, sharding.spec))
        if isinstance(sharding, NamedSharding) and size > 1:
            self.notes.append(Placed("target_replicated", size, len(self.devices)))
        self.kinds.add(ONE_DEVICE if self.one else REPLICATED)
        return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=self.everywhere,
                                    weak_type=bool(getattr(x, "weak_type", False)))

    def by_prefix(self, prefix: Any, arg: Any) -> Any:
        """``arg``'s leaves placed by ``prefix``, the user's ``in_shardings`` for it (None: their
        own)."""
        def is_given(s: Any) -> bool:
            return s is None or isinstance(s, Sharding)

        if is_given(prefix):
            return jax.tree_util.tree_map(lambda x: self.spec(x, prefix), arg)
        try:
            return jax.tree_util.tree_map(
                lambda s, sub: jax.tree_util.tree_map(lambda x: self.spec(x, s), sub),
                prefix, arg, is_leaf=is_given)
        except (ValueError, TypeError):  # not a prefix of the argument: by the arrays
            self.notes.append(Placed("target_shardings_unmatched", "structure"))
            return jax.tree_util.tree_map(self.spec, arg)


def placed(args: tuple, kwargs: dict[str, Any], devices: list[Any], given: Any = None,
           ) -> tuple[tuple, dict[str, Any], str, tuple[Note, ...]]:
    """The call's arguments as ``ShapeDtypeStruct`` on ``devices``: (args, kwargs, how, notes)."""
    placer = _Placer(devices)
    per_arg = given if isinstance(given, tuple) else (given,) * len(args)
    if len(per_arg) != len(args):
        placer.notes.append(Placed("target_shardings_unmatched", "number"))
        per_arg = (None,) * len(args)
    new_args = tuple(placer.by_prefix(s, a) for s, a in zip(per_arg, args, strict=True))
    new_kwargs = jax.tree_util.tree_map(placer.spec, kwargs)
    kind = YOURS if YOURS in placer.kinds else ONE_DEVICE if placer.one else REPLICATED
    return new_args, dict(new_kwargs), kind, tuple(dict.fromkeys(placer.notes))


@dataclasses.dataclass
class TargetSubject(VariantSubject):
    """A variant as a sampler row: trace, lowering and compile for the target, timed."""

    def cold(self, monitor: Monitor, check: Checkpoint) -> ColdSample:
        opts, jitted = cold_jit(self.prepared.variant.fn, self.args, self.kwargs,
                                self.prepared.variant.jit_options)
        times: dict[str, float] = {}
        before = contention.read()
        made, _ = staged_programs(check, jitted, self.args, self.kwargs, times,
                                  "XLA compile for the target")
        waited = contention.since(before, contention.read())  # how busy the machine was
        times.update({k: v for k, v in waited.items() if k in CONTENTION_KEYS})
        return ColdSample(times, jitted, None, artefact=made, stages_from="staged")

    def describe(self, cold: ColdSample) -> ProgramFacts:
        return structure(cold.artefact)


def measure_for_target(prepared: dict[str, Prepared], options: Options, *,
                       start: float, check: Checkpoint) -> Comparison:
    """Flat and nested compiled for ``options.target`` in ``-r``'s rounds, then its parts."""
    topology = tpu.parse(str(options.target))
    devices = topology_devices(topology)
    flat = prepared["flat"]
    args, kwargs, placement, notes = placed(flat.args, flat.kwargs, devices,
                                            flat.variant.plan.in_shardings)
    targeted = {n: dataclasses.replace(p, args=args, kwargs=kwargs, batch=None)
                for n, p in prepared.items()}
    same = not prepared["nested"].variant.planned
    runs = Sampler({n: TargetSubject(p) for n, p in targeted.items()
                    if not (same and n == "nested")}, PHASES, steady=False)
    check.report.entry = check.report.entry or flat.variant.plan.name
    check.report.tell(f"starting libtpu's compiler for {topology.name}")
    with tpu.native_stderr_kept([]):  # the client's one-time set-up, untimed
        _small_program(devices[0]).compile()
    # a compile for a TPU takes seconds, as on the TPU: the accelerator's budget
    budgeted = dataclasses.replace(options, budget=options.budget or TPU.budget_s)
    rounds = rounds_for(budgeted, lambda: _decided(runs), busy=lambda: _busy(runs))
    runs.measure_cold(rounds, None, check)
    variants = variant_results(runs)
    if same:
        variants["nested"] = nothing_to_nest(prepared["nested"].variant)
    record = _record(topology, devices, placement, notes, runs, variants)
    result = Comparison(
        entry=flat.variant.plan.name, variants=variants, outputs_match=None,
        wall_s=clocks.wall() - start,  # sampled here: the session's, where the backend remembers
        env=environment({TARGET: record.to_dict(), **fresh.where_sampled({})}),
        warned=tuple(runs.warnings(flat.variant.plan.name)), stopped=runs.stopped,
        repeats_ended=rounds.ended, same_compiled=None if same else same_compiled(runs.shape))
    parts = dataclasses.replace(options, target=None, effort=False)  # this host's effort
    result = add_parts(result, PartRun(targeted, {}, None, parts, check))
    if options.effort and not result.stopped_anywhere:
        result = add_target_effort(result, targeted["flat"], devices[0], check)
    return result


def _decided(runs: Sampler) -> bool:
    """Whether the runs so far settle flat against nested on trace + lower + compile."""
    if len(runs.subjects) < 2 or runs.errors:
        return True
    return compile_difference(runs.samples["flat"], runs.samples["nested"]).decided


def _busy(runs: Sampler) -> bool:
    """Whether the runs so far were taken on a busy machine (CPU time then decides)."""
    rows = [runs.samples[n] for n in runs.subjects]
    return len(rows) == 2 and target_clock(*rows) == CPU


def _record(topology: tpu.Topology, devices: list[Any], placement: str,
            notes: tuple[Note, ...], runs: Sampler, variants: dict[str, Any]) -> TargetCompile:
    chip = topology.chip
    memory = {n: m for n, r in runs.last.items()
              if (m := _memory(r.artefact.compiled if r.artefact else None)) is not None}
    libtpu = ""
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        libtpu = importlib.metadata.version("libtpu")
    return TargetCompile(
        topology=topology.name, devices=len(devices),
        device_kind=str(getattr(devices[0], "device_kind", topology.kind)),
        host=tpu.host_kind(), placement=placement,
        hbm_bytes=chip.hbm_bytes if chip else None, memory=memory,
        warm={n: w for n, v in variants.items() if (w := warm_runs(v.samples, "tpu"))},
        libtpu=libtpu, placement_notes=notes)


def _memory(compiled: Any) -> Memory | None:
    """XLA's memory analysis of a program compiled for the target (None: none given)."""
    try:
        stats = compiled.memory_analysis() if compiled is not None else None
    except Exception:  # noqa: BLE001 (a client without memory analysis: left out)
        return None
    if stats is None:
        return None
    return Memory(**{key: int(getattr(stats, f"{name}_size_in_bytes", 0) or 0) for key, name in (
        ("argument_bytes", "argument"), ("output_bytes", "output"),
        ("alias_bytes", "alias"), ("temp_bytes", "temp"), ("code_bytes", "generated_code"))})


@dataclasses.dataclass
class CompileAtSetting(VariantSubject):
    """``--effort``'s row for the target: lowered afresh untimed, compiled at its setting, timed."""

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


def accepted(device: Any, baseline: dict[str, Any]) -> tuple[list[Any], list[Placed]]:
    """(the TPU's effort settings libtpu takes, a note for each it refused)."""
    lowered = _small_program(device)
    keep, notes = [], []
    for s in candidates(TPU):
        try:
            lowered.compile(compiler_options={**baseline, **s.options})
        except Exception as exc:  # libtpu's refusal: said, the rest measured
            notes.append(Placed("target_setting_refused", s.name, first_line(exc)[:200]))
            continue
        keep.append(s)
    return keep, notes


def add_target_effort(result: Comparison, flat: Prepared, device: Any,
                      check: Checkpoint) -> Comparison:
    """``result`` with ``--effort``'s rows in its ``--target`` record (compile only)."""
    record = target_of(result.env)
    if record is None or result.stopped or not result.flat.ok:
        return result
    baseline = baseline_of(flat)
    chosen, notes = accepted(device, baseline)
    rows = {DEFAULT: baseline, **{s.name: {**baseline, **s.options} for s in chosen}}
    lines = {DEFAULT: "the default", **{s.name: s.config for s in chosen}}
    runs = Sampler({n: CompileAtSetting(flat, compiler_options=o) for n, o in rows.items()},
                   PHASES, noun="setting", steady=False)

    def decided() -> bool:
        default = runs.samples[DEFAULT].get("compile_s", [])
        return all(difference(default, s.get("compile_s", [])).decided
                   for n, s in runs.samples.items() if n != DEFAULT and n not in runs.errors)

    with contextlib.suppress(UserCodeError):  # every row failed: each says why
        runs.measure_cold(Rounds(AUTO, decided, cap=MOST_EFFORT_ROUNDS), None, check,
                          what="effort for the target")
    effort = {n: EffortRow(n, lines[n], tuple(runs.samples[n].get("compile_s", [])),
                           tuple(runs.samples[n].get("compile_cpu_s", [])),
                           runs.describe_failure(n) if n in runs.errors else None)
              for n in rows}
    made = dataclasses.replace(record, effort=effort, effort_notes=tuple(notes))
    return dataclasses.replace(result, env={**result.env, TARGET: made.to_dict()},
                               stopped=result.stopped or runs.stopped)

"""Which events of a JAX profile make one XLA compile on each backend, and how ``--xla``
splits the compile by them: the one place that names a backend's profile events.

A compile is split into parts that never overlap, so that their shares add up to it:
the time before XLA's passes, the program serialized for a plugin and read back by it,
the HLO passes, code generation, and the rest (what no event covers). Each part is the
wall time during which at least one of its events ran, on any thread; where a later part
in :data:`PARTS` overlaps an earlier one, the earlier one has it. Inside the HLO passes
and code generation, :class:`Named` parts are the ones worth a name of their own (a TPU's
main fusion pass, a GPU's autotuning).

Every backend: jaxlib's ``backend_compile_and_load`` spans the backend compile on the
calling thread; each run of an HLO pass pipeline is an event ``<pipeline> (<module>)``
with a ``module`` stat. Each backend's own events are named below, with where they were
read (JAX 0.10.2): the CPU's and a TPU v5e's from profiles (``tests/fixtures/tpu-v5e``),
the GPU's from XLA's sources.

Nothing here imports JAX.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import named as backend_named

#: The parts a compile is split into, in the order that decides an overlap: an instant
#: two parts' events cover belongs to the earlier one. ``before_passes`` is what is left
#: of the time from the backend call's start to XLA's compile; ``rest`` what no part has.
PARTS = ("hlo_passes", "codegen", "serialize", "deserialize", "before_passes", "rest")
#: The parts every backend's compile has.
ALWAYS = ("before_passes", "hlo_passes", "codegen", "rest")
#: The parts in the order they run, as a report lists them: the program is serialized
#: and read back at the start of the time before XLA's passes.
IN_ORDER = ("serialize", "deserialize", "before_passes", "hlo_passes", "codegen", "rest")
#: The stat an HLO pass pipeline's event carries: the module it runs on.
MODULE_STAT = "module"
#: The name XLA gives its HLO verifier, which runs between passes (shown as a pass).
VERIFIER = "RunInvariantCheckers"


@dataclass(frozen=True, slots=True)
class Names:
    """Event names: exact ones, and ones known by how they start or end."""

    exact: frozenset[str] = frozenset()
    starts: tuple[str, ...] = ()
    ends: tuple[str, ...] = ()

    def __call__(self, name: str) -> bool:
        """Whether ``name`` is one of these."""
        return name in self.exact or name.startswith(self.starts) or name.endswith(self.ends)

    def __bool__(self) -> bool:
        return bool(self.exact or self.starts or self.ends)


def names(*exact: str, starts: tuple[str, ...] = (), ends: tuple[str, ...] = ()) -> Names:
    """:class:`Names` of ``exact`` names, and of names that start or end so."""
    return Names(frozenset(exact), starts, ends)


#: No event: a part the backend's profile does not have.
NONE = names()
#: jaxlib's event around the whole backend compile (every backend).
CALL = names("backend_compile_and_load")


@dataclass(frozen=True, slots=True)
class Named:
    """A part of the compile with a name of its own, inside one of :data:`PARTS`
    (``within``): its seconds are the time its events ran, within that part's."""

    #: How a record keeps it (``"main_fusion"``).
    key: str
    #: How the user reads it ("the main fusion pass").
    label: str
    within: str
    events: Names


@dataclass(frozen=True, slots=True)
class CompileEvents:
    """One backend's events of a compile, by part (see :data:`PARTS`)."""

    platform: str
    #: The host tracer level that records every event named here (1: critical only).
    host_tracer_level: int
    #: XLA's own compile: the time before it starts (less serialization and loading) is
    #: "before XLA's passes", the module handed to XLA and converted to HLO.
    xla_start: Names
    #: Events that are HLO passes as a whole, beside every pipeline run.
    hlo_passes: Names
    codegen: Names
    serialize: Names = NONE
    deserialize: Names = NONE
    #: LLVM's compile to machine code, inside code generation (CPU).
    llvm: Names = NONE
    named: tuple[Named, ...] = ()
    #: jaxlib's event around the whole backend compile, on the calling thread.
    call: Names = CALL

    def events(self, part: str) -> Names:
        """The events of ``part`` (one of :data:`PARTS` but before_passes and rest)."""
        return getattr(self, part)

    @property
    def parts(self) -> tuple[str, ...]:
        """The parts this backend's compile is split into, in the order they run
        (:data:`IN_ORDER`)."""
        return tuple(p for p in IN_ORDER if p in ALWAYS or self.events(p))

    def named_as(self, key: str) -> Named | None:
        """The named part kept as ``key`` (None: not one of this backend's)."""
        return next((n for n in self.named if n.key == key), None)


#: The PJRT C API's events around a plugin's compile (TPU; GPU plugins go the same way).
_SERIALIZE = names("PjRtCApiClient::SerializeProgram")
_DESERIALIZE = names("PJRT_Client_Compile::Deserialize")

CPU = CompileEvents(
    "cpu", host_tracer_level=1,
    xla_start=names("PjRtCpuClient::Compile"),
    hlo_passes=NONE,
    codegen=names(ends=("::RunBackend",)),
    llvm=names("JitCompiler::Compile"))

#: Code generation's parts run on several threads at once; they and the HLO passes are at
#: host tracer level 2 (level 1 held the pipelines and serialization: 86% of a compile).
TPU = CompileEvents(
    "tpu", host_tracer_level=2,
    xla_start=names("TpuCompiler::Compile"),
    hlo_passes=names("XLA::TPU run hlo passes"),
    codegen=names("XLA::TPU run backend"),
    serialize=_SERIALIZE, deserialize=_DESERIALIZE,
    named=(Named("main_fusion", "the main fusion pass", "hlo_passes",
                 names(starts=("Main fusion (",))),
           Named("buffer_assignment", "memory space and buffer assignment", "codegen",
                 names("XLA::TPU memory space and buffer assignment")),
           Named("kernels", "kernels lowered and emitted", "codegen",
                 names("XLA::TPU lowering and optimization",
                       starts=("XLA::TPU emitting for ",))),
           Named("code_generator", "the code generator", "codegen",
                 names("XLA::TPU code generator"))))

GPU = CompileEvents(
    "gpu", host_tracer_level=2,
    xla_start=names(starts=("HLO Transforms:",)),
    hlo_passes=names(starts=("HLO Transforms:",)),
    codegen=names("GpuCompiler::CompileToBackendResult"),
    serialize=_SERIALIZE, deserialize=_DESERIALIZE,
    named=(Named("autotuning", "autotuning", "hlo_passes",
                 names("autotuner", "triton-autotuner", "gemm-fusion-autotuner",
                       "gemm-algorithm-picker", "gpu-conv-algorithm-picker")),
           Named("ptxas", "PTX compiled to machine code (ptxas)", "codegen",
                 names("PTX->CUBIN"))))

#: Every backend's events, by JAX's platform name.
KNOWN = {e.platform: e for e in (CPU, TPU, GPU)}


def of(platform: str | None) -> CompileEvents:
    """The compile events of JAX's platform ``platform`` (``"cuda"`` reads as the GPU's).
    None (a report older than the backend it names) reads as the CPU's, the only backend
    read before; an unknown platform has only what every backend has: its pipelines."""
    name = backend_named(platform or "cpu").platform
    return KNOWN.get(name) or CompileEvents(name, host_tracer_level=2, xla_start=NONE,
                                            hlo_passes=NONE, codegen=NONE)

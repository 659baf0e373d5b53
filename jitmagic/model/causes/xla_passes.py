"""Where XLA spends the compile (``--xla``): one extra profiled cold compile per variant,
split into its parts (before XLA's passes, the program serialized and read back by a
plugin, the HLO passes, code generation, the rest), raw seconds, on the backend it ran on.

Measured by :mod:`jitmagic.measure.parts.xla_passes` (which reads the profile too),
shown by :mod:`jitmagic.render.causes.xla_passes`. A profiled compile is an extra run,
never one of the comparison's samples; one per variant is one sample, so its figures are
shares of that compile, not a speed comparison between the variants. A figure the
profile did not hold is None ("not read"), never 0. The records hold facts (seconds,
counts, XLA's names, JAX's platform name and the keys of
:mod:`jitmagic.backends.profile`); their words are made in :mod:`jitmagic.render`.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

from ..notes import Noted
from ..notes import read_noted
from ..saved.schema import REQUIRED
from ..saved.schema import Saved
from ..saved.schema import count
from ..saved.schema import fail
from ..saved.schema import flag
from ..saved.schema import items
from ..saved.schema import mapping
from ..saved.schema import optional
from ..saved.schema import positive_seconds
from ..saved.schema import seconds
from ..saved.schema import text

#: The variants a profiled compile is of (flat only where nothing was nested).
PROFILED = ("flat", "nested")


@dataclass(frozen=True)
class PassTime(Saved):
    """One HLO pass, by XLA's name: its seconds summed over its ``runs`` in one compile."""

    name: str
    seconds: float
    runs: int


PassTime.FIELDS = (("name", "name", text, REQUIRED),
                   ("seconds", "seconds", seconds, REQUIRED),
                   ("runs", "runs", count, REQUIRED))


@dataclass(frozen=True)
class NamedTime(Saved):
    """A part of the compile that the backend names inside a bigger one, by its key in
    :mod:`jitmagic.backends.profile` (``"main_fusion"``): its seconds (wall time, inside
    that part), how many events made it, and the biggest one's name, as XLA gave it
    (``Main fusion (jit_g)``)."""

    key: str
    seconds: float
    events: int
    biggest: str


NamedTime.FIELDS = (("key", "key", text, REQUIRED),
                    ("seconds", "seconds", seconds, REQUIRED),
                    ("events", "events", count, REQUIRED),
                    ("biggest", "biggest", text, REQUIRED))


@dataclass(frozen=True)
class ProfiledCompile(Saved):
    """One variant's extra cold compile, under JAX's profiler.

    ``compile_s``: our own interval around ``Lowered.compile()``; ``backend``: JAX's
    platform name of the backend it compiled for (None: a report written before it was
    kept, whose profile was read by the CPU's events). The parts, which never overlap:
    ``before_passes_s``, from jaxlib's backend compile to XLA's own (the StableHLO
    module handed to XLA and converted to HLO), less ``serialize_s`` and
    ``deserialize_s``, the program serialized for a plugin (TPU) and read back by it;
    ``hlo_passes_s``, the HLO passes; ``codegen_s``, code generation, ``llvm_s`` of it
    LLVM's compile to machine code (CPU). ``passes``: every pass, most seconds first;
    ``named``: the parts the backend names inside those (the TPU's main fusion pass).
    None: the profile held no such event.
    """

    compile_s: float
    hlo_passes_s: float | None
    codegen_s: float | None
    llvm_s: float | None
    passes: tuple[PassTime, ...] = ()
    before_passes_s: float | None = None
    backend: str | None = None
    serialize_s: float | None = None
    deserialize_s: float | None = None
    named: tuple[NamedTime, ...] = ()

    @property
    def top_passes(self) -> tuple[tuple[str, float], ...]:
        """(pass name, seconds) of every pass, biggest first."""
        return tuple((p.name, p.seconds)
                     for p in sorted(self.passes, key=lambda p: (-p.seconds, p.name)))

    @property
    def read_s(self) -> float:
        """The seconds of every part read (the rest aside): they never overlap."""
        return sum(p for p in (self.before_passes_s, self.serialize_s, self.deserialize_s,
                               self.hlo_passes_s, self.codegen_s) if p is not None)

    @property
    def rest_s(self) -> float | None:
        """The compile's seconds that no part read covers (Python, PjRt, loading the
        executable); None where the time before the passes, the HLO passes or code
        generation was not read."""
        if None in (self.before_passes_s, self.hlo_passes_s, self.codegen_s):
            return None
        return max(0.0, self.compile_s - self.read_s)

    def named_as(self, key: str) -> NamedTime | None:
        """The named part kept as ``key`` (None: not read)."""
        return next((n for n in self.named if n.key == key), None)

    def share(self, seconds: float | None) -> float | None:
        """``seconds`` as a share of this compile (None where not read)."""
        return None if seconds is None else seconds / self.compile_s


@dataclass(frozen=True)
class XlaPasses(Saved):
    """``--xla``: each variant's profiled compile (``compiles``, by variant; flat only
    where nothing was nested, ``same_program``). ``reason``: why nothing was measured
    (the user's own profiler session was running), with no figures; ``noted``: why a
    variant has none, by variant (``notes`` says it); ``stopped``: why a stop (Ctrl-C,
    ``--timeout``) cut it short."""

    compiles: dict[str, ProfiledCompile] = field(default_factory=dict)
    same_program: bool = False
    reason: str | None = None
    noted: dict[str, Noted] = field(default_factory=dict)
    stopped: str | None = None

    @property
    def notes(self) -> dict[str, str]:
        """Why a variant has no profiled compile, in words, by variant."""
        return {variant: str(note) for variant, note in self.noted.items()}

    def of(self, variant: str) -> ProfiledCompile | None:
        """``variant``'s profiled compile (the flat one's where nothing was nested)."""
        if self.same_program and variant == "nested":
            variant = "flat"
        return self.compiles.get(variant)

    @property
    def compile_s(self) -> dict[str, float]:
        """Per variant, the profiled compile's seconds (an extra compile, not a sample)."""
        return {v: c.compile_s for v in PROFILED if (c := self.of(v)) is not None}

    @classmethod
    def from_dict(cls, d: Any, where: str = "") -> XlaPasses:
        got = super().from_dict(d, where)
        unknown = set(got.compiles) - set(PROFILED)
        if unknown:
            fail(f"{where or cls.WHERE}.compiles", "the variants flat and nested",
                 ", ".join(sorted(unknown)))
        return got


ProfiledCompile.FIELDS = (
    ("compile_s", "compile_s", positive_seconds, REQUIRED),
    ("backend", "backend", optional(text), None),
    ("before_passes_s", "before_passes_s", optional(seconds), None),
    ("serialize_s", "serialize_s", optional(seconds), None),
    ("deserialize_s", "deserialize_s", optional(seconds), None),
    ("hlo_passes_s", "hlo_passes_s", optional(seconds), None),
    ("codegen_s", "codegen_s", optional(seconds), None),
    ("llvm_s", "llvm_s", optional(seconds), None),
    ("passes", "passes", items(PassTime.from_dict), ()),
    ("named", "named", items(NamedTime.from_dict), ()),
)
XlaPasses.WHERE = "xla_passes"
XlaPasses.SPARSE = frozenset({"reason", "stopped", "notes"})
XlaPasses.FIELDS = (
    ("compiles", "compiles", mapping(ProfiledCompile.from_dict), REQUIRED),
    ("same_program", "same_program", flag, False),
    ("reason", "reason", optional(text), None),
    ("stopped", "stopped", optional(text), None),
    ("notes", "noted", mapping(read_noted), {}),
)

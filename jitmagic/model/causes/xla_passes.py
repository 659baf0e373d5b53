"""Where XLA spends the compile (``--xla``): one extra profiled cold compile per variant,
split into its parts (None: not read, never 0); shares, not a speed comparison."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..notes import Noted, read_noted
from ..saved import schema
from ..saved.schema import fail

#: The variants a profiled compile is of (flat only where nothing was nested).
PROFILED = ("flat", "nested")


@dataclass(frozen=True)
class PassTime(schema.Saved):
    """One HLO pass, by XLA's name: its seconds summed over its ``runs`` in one compile."""

    name: str = schema.saved(schema.text)
    seconds: float = schema.saved(schema.seconds)
    runs: int = schema.saved(schema.count)


@dataclass(frozen=True)
class NamedTime(schema.Saved):
    """A part of the compile the backend names inside a bigger one: seconds, events, biggest."""

    key: str = schema.saved(schema.text)
    seconds: float = schema.saved(schema.seconds)
    events: int = schema.saved(schema.count)
    biggest: str = schema.saved(schema.text)


@dataclass(frozen=True)
class ProfiledCompile(schema.Saved):
    """One variant's extra cold compile under JAX's profiler, and its parts (None: no event)."""

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
        """The compile's seconds no part read covers (None: a main part was not read)."""
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
class XlaPasses(schema.Saved):
    """``--xla``: each variant's profiled compile, and why any was not measured."""

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
    ("compile_s", "compile_s", schema.positive_seconds, schema.REQUIRED),
    ("backend", "backend", schema.optional(schema.text), None),
    *schema.same(schema.optional(schema.seconds), None, "before_passes_s", "serialize_s",
                 "deserialize_s", "hlo_passes_s", "codegen_s", "llvm_s"),
    ("passes", "passes", schema.items(PassTime.from_dict), ()),
    ("named", "named", schema.items(NamedTime.from_dict), ()),
)
XlaPasses.WHERE = "xla_passes"
XlaPasses.SPARSE = frozenset({"reason", "stopped", "notes"})
XlaPasses.FIELDS = (
    ("compiles", "compiles", schema.mapping(ProfiledCompile.from_dict), schema.REQUIRED),
    ("same_program", "same_program", schema.flag, False),
    *schema.same(schema.optional(schema.text), None, "reason", "stopped"),
    ("notes", "noted", schema.mapping(read_noted), {}),
)

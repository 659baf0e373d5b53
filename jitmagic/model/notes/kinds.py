"""The kinds of :class:`~jitmagic.model.notes.Note`, each the facts of one thing the
measuring notes (its sentence: :mod:`jitmagic.render.notes`)."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

from .note import Note
from .note import kind

# A comparison's warnings (``Comparison.warned``).


@kind("cache_switched_off")
@dataclass(frozen=True)
class CacheSwitchedOff(Note):
    """The user's persistent compilation cache was off while measuring, on again after."""


@kind("cache_served")
@dataclass(frozen=True)
class CacheServed(Note):
    """A compile was served from JAX's persistent cache: compile times may be too low."""


@kind("waited")
@dataclass(frozen=True)
class Waited(Note):
    """The measurement waited ``seconds`` for another thread's to finish."""

    seconds: float


@kind("part_moved")
@dataclass(frozen=True)
class PartMoved(Note):
    """``--option`` not measured: it needs JAX's private ``name``, which JAX ``version``
    lacks."""

    option: str  # as written on the command line: "second-start"
    name: str
    version: str


@kind("one_example")
@dataclass(frozen=True)
class OneExample(Note):
    """With ``--in-axes``, flat and nested were measured on one example of the batch."""


@kind("staged_run")
@dataclass(frozen=True)
class StagedRun(Note):
    """JAX reported no stage inside ``variant``'s first call: they were timed apart."""

    variant: str


@kind("effort_flat_failed")
@dataclass(frozen=True)
class EffortFlatFailed(Note):
    """``--effort`` was not measured: the flat variant failed."""


@kind("advice_flat_failed")
@dataclass(frozen=True)
class AdviceFlatFailed(Note):
    """No attribution or advice: they trace the flat variant, which failed."""


@kind("advice_stopped")
@dataclass(frozen=True)
class AdviceStopped(Note):
    """No attribution or advice: the measurement stopped (``reason``, as the stop says)."""

    reason: str


@kind("no_second_start")
@dataclass(frozen=True)
class NoSecondStart(Note):
    """No second start: every variant failed in the comparison."""


@kind("part_not_measured")
@dataclass(frozen=True)
class PartNotMeasured(Note):
    """The part named ``part`` (:data:`~jitmagic.model.parts.PARTS`) was not measured:
    ``error``, the scratch folder's, as raised."""

    part: str
    error: str


@kind("one_process_only")
@dataclass(frozen=True)
class OneProcessOnly(Note):
    """The part named ``part`` runs in one process only: left out, as ``processes``
    processes share the measurement."""

    part: str
    processes: int


@kind("no_stage_event")
@dataclass(frozen=True)
class NoStageEvent(Note):
    """JAX reported no event of ``phase`` ("compile_s") for ``entry`` in ``variant``'s
    runs, though it was timed (was it served from a cache?)."""

    variant: str
    phase: str
    entry: str


@kind("clock_disagrees")
@dataclass(frozen=True)
class ClockDisagrees(Note):
    """``variant``'s ``phase`` measured ``ours_s`` (the median) where JAX's own event
    says ``theirs_s``, beyond the tolerance."""

    variant: str
    phase: str
    ours_s: float
    theirs_s: float


# Outputs that differ (a comparison's, the orderings', a variant's of the constants).


@kind("leaf_differs")
@dataclass(frozen=True)
class LeafDiffers(Note):
    """The first leaf where two outputs differ beyond rounding: ``path`` (dotted; "" is
    the whole output); ``structure`` where the structures differ there ("shape": two
    leaves of ``shapes``; "node": two nodes, each of type ``nodes`` ("" a leaf, of dtype
    ``dtypes`` and shape ``shapes``) and static data ``statics`` (its ``repr``; "" none)),
    else None and its largest difference ``worst`` (``nonfinite``: NaN or infinities in
    different places, ``worst`` then of the finite values); ``others``: how many other
    leaves differ. Each tuple holds the reference's side, then the other's (empty where
    ``structure`` does not use it)."""

    path: str
    structure: str | None
    worst: float
    nonfinite: bool
    others: int
    nodes: tuple[str, ...] = field(default=(), kw_only=True)
    dtypes: tuple[str, ...] = field(default=(), kw_only=True)
    shapes: tuple[tuple[int, ...], ...] = field(default=(), kw_only=True)
    statics: tuple[str, ...] = field(default=(), kw_only=True)


@kind("outputs_differ")
@dataclass(frozen=True)
class OutputsDiffer(LeafDiffers):
    """The outputs of ``reference`` and ``other`` differ (at the leaf described)."""

    reference: str
    other: str


@kind("outputs_uncompared")
@dataclass(frozen=True)
class OutputsUncompared(Note):
    """The outputs of ``reference`` and ``other`` could not be compared: ``error``, the
    exception's type and first line ("TypeError: no comparing me")."""

    reference: str
    other: str
    error: str


@kind("compare_raised")
@dataclass(frozen=True)
class CompareRaised(Note):
    """Comparing two outputs raised ``error`` (its type's name): ``message``."""

    error: str
    message: str


# The orderings' warnings (``Orderings.warned``).


@kind("ordering_failed")
@dataclass(frozen=True)
class OrderingFailed(Note):
    """The ordering ``ordering`` failed: ``traceback``, the user's code's, as raised."""

    ordering: str
    traceback: str


# A sweep's warnings (``Sweep.warned``).


@kind("sweep_unchanged")
@dataclass(frozen=True)
class SweepUnchanged(Note):
    """The swept ``name`` did not change the program: every value built ``eqns`` jaxpr
    equations (flat; None: not counted)."""

    name: str
    eqns: int | None


# A ``--target`` record's notes (``TargetCompile.placement_notes``, ``effort_notes``).


@kind("target_replicated")
@dataclass(frozen=True)
class TargetReplicated(Note):
    """An argument sharded over ``sharded`` devices was replicated over the target's
    ``devices``."""

    sharded: int
    devices: int


@kind("target_shardings_unmatched")
@dataclass(frozen=True)
class TargetShardingsUnmatched(Note):
    """The user's jit's ``in_shardings`` did not match the arguments' ``what``:
    "structure" or "number"."""

    what: str


@kind("target_setting_refused")
@dataclass(frozen=True)
class TargetSettingRefused(Note):
    """libtpu refused the effort setting ``setting`` (``why``: its error's first line)."""

    setting: str
    why: str

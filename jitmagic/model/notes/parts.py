"""The kinds of :class:`~jitmagic.model.notes.Note` the parts after the comparison keep:
``--effort``'s settings left out and why its out-of-line row was not measured
(``Effort.omitted``), and what the big constants passed
as arguments noted of a variant (``ConstantVariant.noted``); their sentences:
:mod:`jitmagic.render.notes`."""

from __future__ import annotations

from dataclasses import dataclass

from .note import Note
from .note import kind

# --effort: a setting left out.


@kind("setting_already_on")
@dataclass(frozen=True)
class SettingAlreadyOn(Note):
    """The setting ``setting`` was left out: the user's jit already compiles with it."""

    setting: str


@kind("setting_refused")
@dataclass(frozen=True)
class SettingRefused(Note):
    """The backend (``backend``, as it is labelled) refused ``setting``: left out
    (``why``: its error's first line)."""

    setting: str
    backend: str
    why: str


# --effort: why the out-of-line row was not measured.


@kind("out_of_line_no_helper")
@dataclass(frozen=True)
class OutOfLineNoHelper(Note):
    """Out of line was not measured: the comparison nests no helper."""


@kind("out_of_line_no_nested")
@dataclass(frozen=True)
class OutOfLineNoNested(Note):
    """Out of line was not measured: the comparison has no nested variant."""


@kind("out_of_line_raised")
@dataclass(frozen=True)
class OutOfLineRaised(Note):
    """Out of line was not measured: tracing it raised ``error`` (its type's name;
    ``message``: its first 200 characters)."""

    error: str
    message: str


@kind("out_of_line_none_kept")
@dataclass(frozen=True)
class OutOfLineNoneKept(Note):
    """Out of line was not measured: its one trace kept no helper out of line;
    ``refused``: each helper it refused, a ``StaysInline`` (none: no call of a helper)."""

    refused: tuple[Note, ...]


# --xla: why a variant has no profiled compile (``XlaPasses.noted``).


@kind("xla_variant_failed")
@dataclass(frozen=True)
class XlaVariantFailed(Note):
    """``variant`` was not profiled: it failed in the comparison."""

    variant: str


@kind("xla_raised")
@dataclass(frozen=True)
class XlaRaised(Note):
    """The profiled compile raised ``error`` (its type's name): ``message``."""

    error: str
    message: str


# --cache: the second start's warnings (``SecondStart.warned``).


@kind("other_threads_cached")
@dataclass(frozen=True)
class OtherThreadsCached(Note):
    """``compiles`` compiles of another thread used JAX's persistent cache while the
    second start measured (they went to jitmagic's folder)."""

    compiles: int


# --lines: why a table has no hits, calls or time (``LineTable.noted``).


@kind("no_line_hook")
@dataclass(frozen=True)
class NoLineHook(Note):
    """No line hook ran: ``why`` is "not_asked" (none was asked for), "no_tool_id" (every
    ``sys.monitoring`` tool id was taken) or "no_monitoring" (Python ``python`` has no
    ``sys.monitoring``)."""

    why: str
    python: str  # "3.11"


# The big constants passed as arguments, of one variant.


@kind("captured_not_array")
@dataclass(frozen=True)
class CapturedNotArray(Note):
    """The program captures a value that is not an array of numbers (``what``: "tracer",
    a value leaked from another trace; "objects", a NumPy array of dtype object; else
    "other", of the type ``type_name``): left captured, not passed."""

    what: str
    type_name: str


@kind("constant_stuck")
@dataclass(frozen=True)
class ConstantStuck(Note):
    """A constant of ``nbytes`` is read inside a ``stuck_in`` (through a jit call
    there): the replay cannot pass it, so it stays captured."""

    nbytes: int
    stuck_in: str  # the primitive: "scan"


@kind("small_constants")
@dataclass(frozen=True)
class SmallConstants(Note):
    """``small`` of the ``total`` bytes of constants are in constants under ``lift``
    bytes each, which stay captured."""

    small: int
    total: int
    lift: int


@kind("constants_unmatched")
@dataclass(frozen=True)
class ConstantsUnmatched(Note):
    """``variant``'s program inputs could not be matched to the call's arguments."""

    variant: str


@kind("no_constant_passed")
@dataclass(frozen=True)
class NoConstantPassed(Note):
    """No constant of ``variant``'s could be passed as an argument."""

    variant: str


@kind("constants_still_captured")
@dataclass(frozen=True)
class ConstantsStillCaptured(Note):
    """``variant``'s passed program still captures ``count`` constants of ``nbytes``,
    where ``expected`` were left after passing the others."""

    variant: str
    count: int
    nbytes: int
    expected: int

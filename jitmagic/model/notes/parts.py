"""The kinds of :class:`~jitmagic.model.notes.Note` the parts after the comparison keep:
``--effort``'s settings left out (``Effort.omitted``) and what the big constants passed
as arguments noted of a variant (``ConstantVariant.noted``); their sentences:
:mod:`jitmagic.render.notes`."""

from __future__ import annotations

from dataclasses import dataclass

from . import Note
from . import kind

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

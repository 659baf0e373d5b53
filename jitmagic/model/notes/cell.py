"""The kinds of :class:`~jitmagic.model.notes.Note` the cell (or file) adds to a result's
warnings as it runs it: the precision its arguments compute in, a Ctrl-C held, what it
printed, how often it ran, a swept name that does not reach the code, and the JAX
settings a file set too late (their sentences: :mod:`jitmagic.render.notes`)."""

from __future__ import annotations

from dataclasses import dataclass

from .note import Note
from .note import kind


@kind("x64_narrow")
@dataclass(frozen=True)
class X64Narrow(Note):
    """``jax_enable_x64`` is on, but every floating argument is 32-bit or narrower."""


@kind("put_back_held")
@dataclass(frozen=True)
class PutBackHeld(Note):
    """Ctrl-C came while the cell's changes were put back: it waited until they were."""


@kind("printed")
@dataclass(frozen=True)
class Printed(Note):
    """The measured code printed ``lines`` lines while it was traced ``traces`` times."""

    lines: int
    traces: int


@kind("cell_ran")
@dataclass(frozen=True)
class CellRan(Note):
    """The ``source`` ("cell" or "file") ran ``times`` times, once per sweep value."""

    source: str
    times: int


@kind("sweep_name_unread")
@dataclass(frozen=True)
class SweepNameUnread(Note):
    """The code never reads the swept ``name``: every value measures the same program."""

    name: str


@kind("sweep_name_assigned")
@dataclass(frozen=True)
class SweepNameAssigned(Note):
    """The cell assigns the swept ``name`` (at ``line``) before reading it."""

    name: str
    line: int


@kind("late_settings")
@dataclass(frozen=True)
class LateSettings(Note):
    """The file (``file``, its base name) set JAX's ``settings`` to ``values`` (each a
    ``repr``; "": removed) after jax was imported: ``imported_by`` "before" (an earlier
    import in the process) or "jitmagic" (before line ``line``; 0: its first
    definition)."""

    file: str
    settings: tuple[str, ...]
    values: tuple[str, ...]
    imported_by: str
    line: int

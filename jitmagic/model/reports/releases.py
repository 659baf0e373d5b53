"""One cell measured under several JAX releases (``--jax 0.9.0,0.10.2``): what each
release gave, and each change between one release and the next by the one rule.

A release's outcome is its :class:`~jitmagic.model.comparison.Comparison` (the child
measured it), or why there is none, a finding in itself: :class:`NotInstalled` (no
environment could be made: no wheel, offline), or how its child ended
(:class:`~jitmagic.model.progress.TimedOut`, ``Crashed``, ``Failed``, ``CouldNotStart``).
The changes are :func:`jitmagic.model.diff.diff` between consecutive measured releases,
in the order given: each stage judged by
:func:`jitmagic.model.stats.rule.difference`, the program's figures exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..comparison import Comparison
from ..diff import Diff
from ..diff import diff
from ..progress import ChildEnd


@dataclass(frozen=True)
class NotInstalled:
    """A release no environment could be made for, and the installer's reason."""

    release: str
    reason: str


#: What one release gave.
Outcome = Comparison | NotInstalled | ChildEnd


@dataclass(frozen=True)
class ReleaseResult:
    """One release: ``release`` as its column is headed (``0.9.0``; the user's own is
    ``current``), ``version`` the JAX it ran (None where none ran), ``folder`` its
    environment (None: the user's own Python), ``outcome`` what it gave."""

    release: str
    outcome: Outcome
    version: str | None = None
    folder: str | None = None

    @property
    def measured(self) -> Comparison | None:
        """Its comparison, where the child measured one."""
        return self.outcome if isinstance(self.outcome, Comparison) else None


@dataclass(frozen=True)
class Change:
    """``new`` against ``old`` (two releases' labels), by :func:`~.diff.diff`."""

    old: str
    new: str
    diff: Diff


@dataclass(frozen=True)
class Releases:
    """The cell under each release, in the order asked, and where the environments live."""

    results: tuple[ReleaseResult, ...]
    cache: str

    @property
    def changes(self) -> tuple[Change, ...]:
        """Each measured release against the measured one before it."""
        measured = [(r.release, r.measured) for r in self.results if r.measured is not None]
        return tuple(Change(a, b, diff(old, new, force=True))
                     for (a, old), (b, new) in zip(measured, measured[1:], strict=False)
                     if old is not None and new is not None)

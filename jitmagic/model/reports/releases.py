"""One cell measured under several JAX releases (``--jax 0.9.0,0.10.2``), and their diffs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..comparison import Comparison
from ..diff import Diff, diff
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
    """One release as its column is headed, the JAX it ran, its environment, what it gave."""

    release: str
    outcome: Outcome
    version: str | None = None
    folder: str | None = None

    @property
    def measured(self) -> Comparison | None:
        """Its comparison, where the child measured one."""
        return self.outcome if isinstance(self.outcome, Comparison) else None


#: The parts of a profiled compile (``--xla``) besides its HLO passes, by their field.
PARTS = ("before_passes_s", "codegen_s")
#: How many of XLA's passes a change names, those that moved most.
MOST_PASSES = 3


@dataclass(frozen=True)
class Change:
    """``new`` against ``old``; with ``--xla``, the flat program's passes that moved most."""

    old: str
    new: str
    diff: Diff
    passes: tuple[tuple[str, float, float], ...] = ()


def passes_moved(old: Comparison, new: Comparison) -> tuple[tuple[str, float, float], ...]:
    """The :data:`MOST_PASSES` parts of the flat profiled compile that moved most."""
    a, b = (c.xla_passes.of("flat") if c.xla_passes else None for c in (old, new))
    if a is None or b is None:
        return ()
    seconds = [{p.name: p.seconds for p in c.passes}
               | {part: getattr(c, part) or 0.0 for part in PARTS} for c in (a, b)]
    moved = [(name, seconds[0].get(name, 0.0), seconds[1].get(name, 0.0))
             for name in seconds[0].keys() | seconds[1].keys()]
    return tuple(sorted(moved, key=lambda m: (-abs(m[2] - m[1]), m[0]))[:MOST_PASSES])


@dataclass(frozen=True)
class Releases:
    """The cell under each release, in the order asked, and where the environments live."""

    results: tuple[ReleaseResult, ...]
    cache: str
    #: Ctrl-C ended the run: ``results`` are the releases measured before it.
    stopped: bool = False

    @property
    def changes(self) -> tuple[Change, ...]:
        """Each measured release against the measured one before it."""
        measured = [(r.release, r.measured) for r in self.results if r.measured is not None]
        return tuple(Change(a, b, diff(old, new, force=True), passes_moved(old, new))
                     for (a, old), (b, new) in zip(measured, measured[1:], strict=False)
                     if old is not None and new is not None)


@dataclass(frozen=True)
class Bisection:
    """``--bisect A..B``: the releases walked, each slower stage's (phase, first release
    slower than A), and the releases measured to find them."""

    walked: tuple[str, ...]
    found: tuple[tuple[str, str], ...]
    measured: Releases


def bisect(walked: Sequence[str], measure: Callable[[str], ReleaseResult], cache: str
           ) -> Bisection:
    """Halve ``walked`` for each flat stage slower in its last release than its first, each
    release measured once; a release that gave no comparison counts as slower."""
    results: dict[str, ReleaseResult] = {}

    def measured(i: int) -> Comparison | None:
        if walked[i] not in results:
            results[walked[i]] = measure(walked[i])
        return results[walked[i]].measured

    first, last = measured(0), measured(-1)
    moved = [] if first is None or last is None else sorted(
        (s for s in diff(first, last, force=True).regressions(1.0) if s.variant == "flat"),
        key=lambda s: -s.new_over_old)
    found = []
    for phase in (s.phase for s in moved):
        good, bad = 0, len(walked) - 1
        while bad - good > 1:
            mid = (good + bad) // 2
            new = measured(mid)
            slower = new is None or first is not None and diff(first, new, force=True).stage(
                "flat", phase).slower_by(1.0)
            good, bad = (good, mid) if slower else (mid, bad)
        found.append((phase, results[walked[bad]].release))
    return Bisection(tuple(walked), tuple(found), Releases(
        tuple(results[r] for r in walked if r in results), cache))

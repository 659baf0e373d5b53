"""``--effort`` in two reports: NEW against OLD, setting by setting (the table of parts'
diff of the effort part, :data:`~jitmagic.model.parts.PARTS`).

For the default and each setting both reports measured, XLA's compile and a call, NEW
against OLD by the one rule on one clock for the whole table (:func:`effort_clock`), as
:func:`~jitmagic.model.diff.diff` judges a comparison's stages; and each setting against
its own report's default, in OLD and in NEW. Informational: no gate judges it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from typing import Protocol

from ..saved.schema import facts
from ..stage_diff import StageDiff
from ..stats.rule import Difference
from ..stats.rule import difference
from ..stats.rule import json_number
from ..stats.rule import median
from ..stats.witness import CPU
from ..stats.witness import WALL
from ..stats.witness import Clock
from ..stats.witness import has_cpu
from ..stats.witness import is_busy
from ..stats.witness import on
from ..stats.witness import waited_share
from .effort import COMPILE
from .effort import DEFAULT
from .effort import EXECUTE
from .effort import Effort


class Reported(Protocol):
    """What an effort diff reads of a report (a :class:`~jitmagic.model.comparison.Comparison`)."""

    @property
    def busy(self) -> bool: ...

    def part(self, name: str) -> Any: ...


@dataclass(frozen=True)
class SettingRatios:
    """One setting against its own report's default, in OLD and in NEW (default/setting,
    as the effort section's ratios read: above 1 the setting is faster), by the one rule
    on the effort diff's clock: whether what the setting saves or costs has moved."""

    setting: str
    old_compile: Difference
    new_compile: Difference
    old_execute: Difference
    new_execute: Difference

    def to_dict(self) -> dict[str, Any]:
        return {"setting": self.setting, **{
            f"{side}_{what}_ratio": json_number(d.ratio) for side, what, d in (
                ("old", "compile", self.old_compile), ("new", "compile", self.new_compile),
                ("old", "execute", self.old_execute), ("new", "execute", self.new_execute))}}


@dataclass(frozen=True)
class EffortDiff:
    """``--effort`` in both reports: for the default and each setting both measured (in
    OLD's order), XLA's compile and a call, NEW against OLD by the one rule, on one
    ``clock`` for the whole table (:func:`effort_clock`). Each is a :class:`StageDiff`
    whose ``variant`` is the setting's name and ``phase`` ``compile_s`` or ``execute_s``.
    Informational: no gate judges it. ``only_old``/``only_new``: the settings one report
    measured and the other did not (another JAX, another backend, no Equinox)."""

    clock: Clock
    stages: tuple[StageDiff, ...]
    only_old: tuple[str, ...] = ()
    only_new: tuple[str, ...] = ()
    #: Each setting in both (not the default) against its own report's default.
    ratios: tuple[SettingRatios, ...] = ()

    @property
    def settings(self) -> list[str]:
        """The rows compared, the default first."""
        return list(dict.fromkeys(s.variant for s in self.stages))

    def stage(self, setting: str, phase: str) -> StageDiff:
        return next(s for s in self.stages if s.variant == setting and s.phase == phase)

    def to_dict(self) -> dict[str, Any]:
        return facts(self, "clock", "stages", "only_old", "only_new", "ratios")


def effort_diff(old: Reported, new: Reported) -> EffortDiff | None:
    """``--effort``, NEW against OLD, where both reports measured it (None otherwise):
    the default and each setting in both, XLA's compile and a call, by the one rule on
    :func:`effort_clock`'s clock (``before`` OLD, ``after`` NEW, as
    :func:`~jitmagic.model.diff.stage_diff`)."""
    a, b = old.part("effort"), new.part("effort")
    if not (isinstance(a, Effort) and isinstance(b, Effort)):
        return None
    both = [DEFAULT, *(n for n in a.rows if n in b.rows)]
    pairs = {n: (_effort_samples(a, n), _effort_samples(b, n)) for n in both}
    clock = effort_clock(old, new, list(pairs.values()))
    stages = []
    for name, (x, y) in pairs.items():
        for phase in (COMPILE, EXECUTE):
            before, after = on(x, phase, clock), on(y, phase, clock)
            stages.append(StageDiff(name, phase, difference(before, after), median(before),
                                    median(after), clock))
    return EffortDiff(clock, tuple(stages), tuple(n for n in a.rows if n not in b.rows),
                      tuple(n for n in b.rows if n not in a.rows),
                      tuple(setting_ratios(n, pairs, clock) for n in both[1:]))


def setting_ratios(name: str, pairs: dict[str, tuple[dict[str, tuple[float, ...]],
                                                      dict[str, tuple[float, ...]]]],
                   clock: Clock) -> SettingRatios:
    """Setting ``name`` against the default of its own report, in OLD and in NEW, on
    ``clock`` (``pairs``: each row's samples, OLD's and NEW's)."""
    def against(side: int, phase: str) -> Difference:
        return difference(on(pairs[DEFAULT][side], phase, clock),
                          on(pairs[name][side], phase, clock))
    return SettingRatios(name, against(0, COMPILE), against(1, COMPILE),
                         against(0, EXECUTE), against(1, EXECUTE))


def _effort_samples(e: Effort, name: str) -> dict[str, tuple[float, ...]]:
    return e.default if name == DEFAULT else e.rows[name].samples


def effort_clock(old: Reported, new: Reported,
                 pairs: list[tuple[dict[str, tuple[float, ...]], dict[str, tuple[float, ...]]]]
                 ) -> Clock:
    """The one clock of the effort table between two reports, as
    :func:`~jitmagic.model.diff.judged_clock` chooses a stage's: CPU time where either
    report was measured on a busy machine (its comparison, or its effort rows' cold runs)
    and every row measured on both sides has CPU seconds of the compile and the calls
    for every run; else wall time."""
    sides = [[x for x, _ in pairs], [y for _, y in pairs]]
    busy = old.busy or new.busy or any(is_busy(waited_share(rows)) for rows in sides)
    measured = [r for rows in sides for r in rows if r.get(COMPILE)]
    cpu = measured and all(has_cpu(r, k) for r in measured
                           for k in (COMPILE, EXECUTE))
    return CPU if busy and cpu else WALL

"""The effort record (``--effort``): the flat program compiled at XLA's lower effort
settings beside the default, judged by the one rule per setting."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..notes import Noted, read_noted, read_notes, said_in
from ..rows import OUTPUT_KINDS
from ..saved import schema
from ..stats.cold import warm_runs
from ..stats.rule import FASTER, SAME, SLOWER, Difference, difference, median
from ..stats.verdicts import ROUNDS_ENDED
from ..stats.witness import FIRST_CALL, WAIT, Clock, clock_for, cpu_key, on
from .cause import NOT_MEASURED, SAVING, UNMEASURABLE, Cause, Compared, Named
from .cause import NOTHING as NOTHING_CAUSE
from .cause import UNDECIDED as UNDECIDED_CAUSE


class RowName(StrEnum):
    """The rows that are no setting (saved by value, as a row's name)."""

    DEFAULT = "default"
    OUT_OF_LINE = "out of line"


DEFAULT, OUT_OF_LINE = RowName.DEFAULT, RowName.OUT_OF_LINE
COMPILE, EXECUTE = "compile_s", "execute_s"
#: The sample keys a row keeps, on both clocks, and the cold call's wait for a CPU.
KEYS = tuple(k for key in (COMPILE, FIRST_CALL, EXECUTE) for k in (key, cpu_key(key))) + (WAIT,)
#: How a setting's outputs may compare with the default's and still let it be used.
MATCHING = ("exact", "rounding")


class Came(StrEnum):
    """What a setting came to (:meth:`Outcome.verdict`; saved by value in ``verdicts``)."""

    USE = "use it"
    USE_BELOW = "pays below the break-even"
    NO_GAIN = "nothing to gain"
    NO_EFFECT = "no measurable effect"
    UNDECIDED = "inconclusive"
    CHANGES_RESULTS = "changes the results"
    NOT_COMPARED = "outputs not compared"
    UNCHANGED = "changes nothing"
    FAILED = "failed"


(USE, USE_BELOW, NO_GAIN, NO_EFFECT, UNDECIDED, CHANGES_RESULTS, NOT_COMPARED, UNCHANGED,
 FAILED) = tuple(Came)


@dataclass(frozen=True)
class Setting(schema.Saved):
    """One lower-effort setting: its compiler options, and how a user writes it."""

    name: str = schema.saved(schema.text)
    options: dict[str, Any] = schema.saved(schema.mapping(schema.scalar))
    config: str | None = schema.saved(schema.optional(schema.text), None)
    keyword: bool = schema.saved(schema.flag, True)
    acts_on: str | None = schema.saved(schema.optional(schema.text), None)

    WHERE = "setting"


@dataclass(frozen=True)
class EffortRow(schema.Saved):
    """One setting's raw samples (:data:`KEYS`), whether it changed the program, how its
    outputs compared; the out-of-line row's helpers ``kept`` and ``refused``."""

    setting: Setting = schema.saved(Setting.from_dict)
    samples: dict[str, tuple[float, ...]] = schema.saved(
        schema.mapping(schema.items(schema.seconds)), {})
    reached: bool | None = schema.saved(schema.optional(schema.flag), None)
    outputs: str | None = schema.saved(schema.optional(schema.one_of(*OUTPUT_KINDS)), None)
    max_abs_diff: float | None = schema.saved(schema.optional(schema.number), None)
    #: Where the outputs differ (the first leaf), or why they could not be compared.
    outputs_found: Noted | None = schema.saved(schema.optional(read_noted),
                                               None, key="outputs_detail")
    error: str | None = schema.saved(schema.optional(schema.text), None)
    kept: dict[str, int] = schema.saved(schema.mapping(schema.integer), {})
    refused: dict[str, Noted] = schema.saved(schema.mapping(read_noted), {})

    WHERE = "row"

    @property
    def name(self) -> str:
        return self.setting.name

    @property
    def outputs_detail(self) -> str | None:
        """Where the outputs differ from the default's, in words (None: nowhere)."""
        return None if self.outputs_found is None else str(self.outputs_found)


@dataclass(frozen=True)
class Outcome:
    """One setting against the default by the one rule, and medians (default, setting)."""

    clock: Clock
    compile: Difference
    execute: Difference
    compile_s: tuple[float, float]
    execute_s: tuple[float, float]

    @property
    def saved_s(self) -> float:
        """Seconds of XLA compile the setting saves (medians; negative: it costs)."""
        return self.compile_s[0] - self.compile_s[1]

    @property
    def lost_s(self) -> float:
        """Seconds a call loses at the setting (medians; negative: it gains)."""
        return self.execute_s[1] - self.execute_s[0]

    @property
    def break_even(self) -> float | None:
        """After how many calls the default pays back the compile saved (None: never)."""
        if self.compile.kind != FASTER or self.execute.kind != SLOWER or self.lost_s <= 0:
            return None
        return self.saved_s / self.lost_s

    def verdict(self, row: EffortRow) -> Came:
        """What the setting came to (:class:`Came`), from the outputs and the rule's outcomes."""
        if row.error is not None:
            return FAILED
        if row.outputs not in MATCHING:
            return CHANGES_RESULTS if row.outputs == "mismatch" else NOT_COMPARED
        if row.reached is False:
            return UNCHANGED
        if self.compile.kind == SAME:  # out of line is no setting of the backend's
            return NO_GAIN if row.name == OUT_OF_LINE else NO_EFFECT
        if self.compile.kind == SLOWER:
            return NO_GAIN
        if self.compile.kind != FASTER:
            return UNDECIDED
        if self.execute.kind in (SAME, FASTER):
            return USE
        return USE_BELOW if self.break_even is not None else UNDECIDED


@dataclass(frozen=True)
class Effort(schema.Saved):
    """XLA's effort settings measured beside the default: ``Comparison.effort``."""

    entry: str = schema.saved(schema.text)
    default: dict[str, tuple[float, ...]] = schema.saved(
        schema.mapping(schema.items(schema.seconds)))
    rows: dict[str, EffortRow] = schema.saved(schema.mapping(EffortRow.from_dict))
    baseline: dict[str, Any] = schema.saved(schema.mapping(schema.scalar), {})
    omitted: tuple[Noted, ...] = schema.saved(read_notes, (), key="left_out")
    stopped: str | None = schema.saved(schema.optional(schema.text), None)
    warnings: tuple[str, ...] = schema.saved(schema.items(schema.text), ())
    default_error: str | None = schema.saved(schema.optional(schema.text), None)
    backend: str | None = schema.saved(schema.optional(schema.text), None)
    rounds: int = schema.saved(schema.count, 0)
    rounds_ended: str | None = schema.saved(ROUNDS_ENDED, None)

    WHERE = "effort"
    FIELDS = (("verdicts", "verdicts", None, None),)

    def __getitem__(self, name: str) -> EffortRow:
        return self.rows[name]

    left_out = said_in("omitted")

    @property
    def series(self) -> dict[str, dict[str, tuple[float, ...]]]:
        """Each row's raw samples by its name: ``"default"``, then each setting's."""
        return {"default": self.default, **{n: r.samples for n, r in self.rows.items()}}

    @property
    def warm_runs(self) -> dict[str, tuple[int, ...]]:
        """Per row of :attr:`series` with any, the runs whose compile was not cold."""
        found = {name: warm_runs(samples, self.backend) for name, samples in self.series.items()}
        return {name: runs for name, runs in found.items() if runs}

    def clock(self) -> Clock:
        """The one clock every row is compared with the default on (:func:`record_clock`)."""
        return record_clock([self.default, *(r.samples for r in self.rows.values())])

    def default_s(self) -> tuple[float, float]:
        """The default's medians (XLA's compile, a call) on :meth:`clock`."""
        clock = self.clock()
        return median(on(self.default, COMPILE, clock)), median(on(self.default, EXECUTE, clock))

    def outcome(self, row: EffortRow) -> Outcome:
        """``row`` against the default by the one rule (see :class:`Outcome`)."""
        clock = self.clock()
        pair = [(on(self.default, k, clock), on(row.samples, k, clock))
                for k in (COMPILE, EXECUTE)]
        medians = [(median(a), median(b)) for a, b in pair]
        return Outcome(clock, difference(*pair[0]), difference(*pair[1]), *medians)

    def recommended(self) -> list[EffortRow]:
        """The settings worth using, the most compile saved first."""
        chosen = [(self.outcome(r), r) for r in self.rows.values()]
        good = [(o, r) for o, r in chosen if o.verdict(r) in (USE, USE_BELOW)]
        return [r for o, r in sorted(good, key=lambda p: -p[0].saved_s)]

    @property
    def verdicts(self) -> dict[str, Came]:
        """What each setting came to (written, never read back)."""
        return {k: self.outcome(r).verdict(r) for k, r in self.rows.items()}


def record_clock(rows: Sequence[Mapping[str, Sequence[float]]]) -> Clock:
    """The one clock of an effort record whose rows (the default's first) hold these."""
    return clock_for(measured_rows(rows), COMPILE, EXECUTE)


def measured_rows(rows: Sequence[Mapping[str, Sequence[float]]]
              ) -> list[Mapping[str, Sequence[float]]]:
    """The default's samples and each row's that has a compile sample."""
    return [rows[0], *(r for r in rows[1:] if r.get(COMPILE))]


# --- the causes it adds to "why the first call is slow" --------------------------------

CAUSE = Named.EFFORT
HELPERS_CAUSE = Named.OUT_OF_LINE


def causes(c: Compared) -> Iterator[Cause]:
    """XLA's effort, and the helpers kept out of line, as causes of a slow first call."""
    e = c.part("effort")
    if e is None:
        yield Cause(CAUSE, NOT_MEASURED, option="--effort", maker="not run", of=c)
        return
    if e.default_error is not None or not e.rows:
        yield Cause(CAUSE, UNMEASURABLE, maker="effort", case="none measured", of=c)
        return
    settings = [r for r in e.rows.values() if r.name != OUT_OF_LINE]
    if settings:
        yield _cause(c, e, settings, CAUSE)
    if OUT_OF_LINE in e.rows:
        yield _cause(c, e, [e.rows[OUT_OF_LINE]], HELPERS_CAUSE)


def _cause(c: Compared, e: Effort, rows: list[EffortRow], name: str) -> Cause:
    """The cause ``name`` of ``rows``: a saving where one is worth using."""
    best = [r for r in e.recommended() if r in rows]
    detail = (e, tuple(rows))
    if not best:
        kinds = {e.outcome(r).verdict(r) for r in rows}
        kind = UNDECIDED_CAUSE if UNDECIDED in kinds else NOTHING_CAUSE
        return Cause(name, kind, maker="effort", case="none worth", of=c, detail=detail)
    return Cause(name, SAVING, e.outcome(best[0]).saved_s, maker="effort", case="use",
                 of=c, detail=detail)

"""Why the first call is slow: the flat first call's stages and what each fix measured,
sorted by :func:`causes` into :data:`KINDS`; derived from the record, never stored."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Protocol

from ..lines import Lines, LineTable
from ..rows import VariantResult
from ..shown import worded
from ..stats.rule import FASTER, INCONCLUSIVE, Difference, median
from ..stats.verdicts import Verdict
from ..stats.witness import FIRST_CALL, Clock, on
from .constant_arguments import BIG_BYTES, CAPTURED, PASSED, ConstantArguments, and_list
from .second_start import SecondStart, samples
from .xla_passes import XlaPasses


class Compared(Protocol):
    """A comparison as its causes and verdict read it (they cannot import it)."""

    @property
    def entry(self) -> str: ...

    @property
    def flat(self) -> VariantResult: ...

    @property
    def nested(self) -> VariantResult: ...

    @property
    def stopped(self) -> str | None: ...

    @property
    def repeats_ended(self) -> str | None: ...

    @property
    def same_compiled(self) -> bool | None: ...

    @property
    def lines(self) -> Lines | None: ...

    @property
    def xla_passes(self) -> XlaPasses | None: ...

    @property
    def constant_arguments(self) -> ConstantArguments | None: ...

    @property
    def second_start(self) -> SecondStart | None: ...

    @property
    def stopped_anywhere(self) -> str | None: ...

    @property
    def verdict(self) -> Verdict: ...

    def difference(self, phase: str, clock: Clock | None = None) -> Difference: ...

    def clock_of(self, phase: str) -> Clock: ...

    def judged(self, name: str) -> VariantResult: ...

    def part(self, name: str) -> Any: ...


class Kind(StrEnum):
    """What a cause is (saved by value in a report's ``why``)."""

    SAVING = "saving"
    STAGE = "stage"
    UNDECIDED = "inconclusive"
    NOTHING = "nothing to gain"
    UNMEASURABLE = "not measurable"
    NOT_MEASURED = "not measured"


class Named(StrEnum):
    """The causes' names (saved by value under ``cause``), and a loop's name's prefixes."""

    TRACING = "Python tracing"
    LOWERING = "lowering to StableHLO"
    COMPILE = "XLA compile"
    LINES = "which lines build the program"
    XLA = "where XLA spends its compile"
    CONSTANTS = "big constants"
    SECOND_START = "a second start"
    NESTING = "helpers inlined on every call"
    NO_ONE_STAGE = "no one stage"
    EFFORT = "XLA's optimization effort"
    OUT_OF_LINE = "helpers kept out of line"
    PYTHON_LOOP = "the Python loop at line "
    JAX_LOOP = "the `jax.lax."


KINDS = SAVING, STAGE, UNDECIDED, NOTHING, UNMEASURABLE, NOT_MEASURED = tuple(Kind)


@dataclass(frozen=True)
class Cause:
    """One cause of a slow first call: a saving's or a stage's ``seconds`` (else NaN), the
    ``option`` that measures it, and what the renderer's words are made of."""

    name: str
    kind: Kind
    seconds: float = math.nan
    option: str = ""
    maker: str = ""
    case: str = ""
    of: Any = field(default=None, compare=False, repr=False)
    detail: Any = field(default=None, compare=False, repr=False)

    @property
    def measured(self) -> bool:
        return self.kind != NOT_MEASURED

    @property
    def said(self) -> str:
        """What was measured, as the report says it."""
        return self._words()[0]

    @property
    def fix(self) -> str:
        """What to do, as the report says it (empty where nothing follows)."""
        return self._words()[1]

    def _words(self) -> tuple[str, str]:
        return worded("cause", self) or ("", "")

    def to_dict(self) -> dict[str, Any]:
        """Its facts, as a report saves them (its words are not saved)."""
        return {"cause": self.name, "kind": self.kind, "measured": self.measured,
                "seconds": None if math.isnan(self.seconds) else self.seconds,
                "option": self.option or None}


Maker = Callable[[Compared], Iterator[Cause]]


def causes(c: Compared, parts: tuple[Maker, ...] = ()) -> tuple[Cause, ...]:
    """The causes of ``c``'s slow first call, kind by kind, the most seconds first."""
    found = [cause for make in (stages, nesting, loops, *parts) for cause in make(c)]
    return tuple(sorted(found, key=lambda x: (KINDS.index(x.kind),
                                              -x.seconds if not math.isnan(x.seconds) else 0)))


def judged(c: Compared, name: str, d: Difference, clock: Clock,
           samples: tuple[dict[str, list[float]], dict[str, list[float]]],
           maker: str) -> Cause:
    """A measured fix as the rule judged it: a saving only where it calls it faster."""
    if d.kind != FASTER:
        kind = UNDECIDED if d.kind == INCONCLUSIVE else NOTHING
        return Cause(name, kind, maker=maker, case="judged", of=c)
    before, after = (median(on(x, FIRST_CALL, clock)) for x in samples)
    return Cause(name, SAVING, before - after, maker=maker, case="judged", of=c)


def clock_of(c: Compared) -> Clock:
    """The one clock the section's seconds are on: the one that decides the first call."""
    return c.clock_of(FIRST_CALL)


#: The stages of the flat first call, as the section names them.
STAGES = (("trace_s", Named.TRACING), ("lower_s", Named.LOWERING),
          ("compile_s", Named.COMPILE))


def stages(c: Compared) -> Iterator[Cause]:
    """The flat first call's stages; ``--lines`` and ``--xla`` where they did not run."""
    for phase, name in STAGES:
        seconds = median(on(c.flat.samples, phase, clock_of(c)))
        if not math.isnan(seconds):
            yield Cause(name, STAGE, seconds, maker="stage", case=phase, of=c)
    if c.lines is None:
        yield Cause(Named.LINES, NOT_MEASURED, option="--lines", maker="not run", of=c)
    if c.xla_passes is None:
        yield Cause(Named.XLA, NOT_MEASURED, option="--xla", maker="not run", of=c)


def constants(c: Compared) -> Iterator[Cause]:
    """What passing captured constants as arguments saved, where they were big enough."""
    name, count, size = Named.CONSTANTS, c.flat.constants, c.flat.constant_bytes
    variant = c.constant_arguments.variants.get("flat") if c.constant_arguments else None
    if count is None or size is None:
        case = "not counted"
    elif size < BIG_BYTES:
        case = "small"
    elif variant is None or not variant.measured:
        case = "not passed"
    elif not variant.constants:
        case = "none passable"
    else:
        forms = variant.samples
        yield judged(c, name, variant.difference, variant.clock,
                     (forms[CAPTURED], forms[PASSED]), "constants")
        return
    kind = {"small": NOTHING, "none passable": UNMEASURABLE}.get(case, NOT_MEASURED)
    yield Cause(name, kind, maker="constants", case=case, of=c)


def second_start(c: Compared) -> Iterator[Cause]:
    """What JAX's persistent compilation cache saves on the next start (``--cache``)."""
    name, measured = Named.SECOND_START, c.second_start
    row = measured.rows.get("flat") if measured is not None else None
    if measured is None or row is None or not row.warm:
        yield Cause(name, NOT_MEASURED, option="--cache", maker="not run", of=c)
    elif not row.read:
        yield Cause(name, UNMEASURABLE, maker="second start", case="not read", of=c)
    else:
        yield judged(c, name, row.difference, row.clock(),
                     (samples(row.baseline), samples(row.warm)), "second start")


# --- nesting: what it saved, split over the stages it was measured in ------------------

#: The cause, whatever nesting saved: the flat program inlines the helpers on every call.
NAME = Named.NESTING
#: Where the part of a saving that no stage's significant difference holds is said to be.
NO_ONE_STAGE = Named.NO_ONE_STAGE
#: A remainder under this share of the saving is left unsaid (medians never add up exactly).
SMALL_REST = 0.05


def nesting(c: Compared) -> Iterator[Cause]:
    """What nesting the helpers saved on the first call, split over the stages."""
    nested = c.nested
    if not nested.helpers:
        case = "none nested" if nested.inline else "no helper"
        yield Cause(NAME, UNMEASURABLE if nested.inline else NOTHING, maker="nesting",
                    case=case, of=c)
        return
    first, clock = c.difference(FIRST_CALL), clock_of(c)
    if math.isnan(first.ratio):
        yield Cause(NAME, NOT_MEASURED, maker="nesting", case="not run", of=c)
        return
    cause = judged(c, NAME, first, clock, (c.flat.samples, nested.samples), "nesting")
    if first.significant and first.kind != FASTER:
        cause = Cause(NAME, NOTHING, maker="nesting", case="costs", of=c)
    if cause.kind == SAVING:
        places = split(cause.seconds, stage_parts(c))[0]
        cause = replace(cause, name=f"{NAME} (saved in {and_list(places)})")
    yield cause


def stage_parts(c: Compared) -> list[tuple[str, float, str]]:
    """(name, flat minus nested median, phase) of each stage nesting changed by the rule."""
    clock, out = clock_of(c), list[tuple[str, float, str]]()
    for phase, label in STAGES:
        if c.difference(phase, clock).significant:
            flat, nested = (median(on(v.samples, phase, clock)) for v in (c.flat, c.nested))
            out.append((label, flat - nested, phase))
    return out


def split(total: float, parts: list[tuple[str, float, str]]) -> tuple[list[str], float]:
    """Where a saving of ``total`` seconds lies: (the places, what no one stage holds)."""
    rest = total - sum(seconds for _, seconds, _ in parts)
    places = [label for label, s, _ in parts if s > 0]
    if parts and rest >= SMALL_REST * total:
        places.append(NO_ONE_STAGE)
    return places or [NO_ONE_STAGE], rest


# --- loops that multiply the program, as ``--lines`` found them: never rewritten, so never
# measured -----------------------------------------------------------------------------


def is_rewrite(x: Cause) -> bool:
    """Whether ``x`` is a loop's rewrite that was not measured (one of :func:`loops`')."""
    return x.kind == NOT_MEASURED and x.name.startswith((Named.PYTHON_LOOP, Named.JAX_LOOP))


def flat_table(c: Compared) -> LineTable | None:
    """The flat variant's per-line table, where ``--lines`` made one."""
    return c.lines.tables.get("flat") if c.lines is not None else None


def loops(c: Compared) -> Iterator[Cause]:
    """Each unrolled scan, and the Python loop that builds most of the program."""
    table = flat_table(c)
    if table is None:
        return
    for x in table.unrolled():
        steps = f", {x.length:,} steps" if x.length is not None else ""
        yield Cause(f"{Named.JAX_LOOP}{x.primitive}` at line {x.line} (unroll={x.unroll}"
                    f"{steps})", NOT_MEASURED, maker="loop", case="unrolled", of=c, detail=x)
    found = table.python_loop()
    if found is not None:
        row, share = found
        loop = table.loop_line(row)
        yield Cause(f"{Named.PYTHON_LOOP}{row.line if loop is None else loop}", NOT_MEASURED,
                    maker="loop", case="python", of=c, detail=found)

"""The constants-as-arguments record: for each variant whose captured constants add up to
:data:`BIG_BYTES` or more, both forms' cold first calls, judged by the one rule."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..notes import Noted, read_notes, said_in
from ..rows import OUTPUT_KINDS
from ..saved import schema
from ..saved.schema import fail
from ..stats.rule import Difference, difference, median
from ..stats.units import fmt_bytes
from ..stats.verdicts import ROUNDS_ENDED
from ..stats.witness import FIRST_CALL, Clock, clock_for, on

#: The two forms each measured variant is compiled in: as traced, and the biggest passed.
FORMS = CAPTURED, PASSED = ("captured", "passed")
#: A variant whose captured array constants add up to this many bytes or more is measured.
BIG_BYTES = 2**20
COMPARED = FIRST_CALL


_line = schema.fixed(schema.text, schema.count, named="a [file, line] pair")
_pair = schema.fixed(schema.count, schema.count, named="a [count, bytes] pair")  # (count, bytes)


def _samples(value: Any, where: str) -> dict[str, dict[str, list[float]]]:
    """Raw samples by form (only :data:`FORMS`), then by key: lists of seconds."""
    for form in schema.obj(value, where):
        if form not in FORMS:
            fail(f"{where}.{form}", f"a form ({' or '.join(FORMS)})", form)
    read = schema.mapping(schema.mapping(schema.items(schema.seconds)))(value, where)
    return {f: {k: list(v) for k, v in s.items()} for f, s in read.items()}


@dataclass(frozen=True)
class LiftedConstant(schema.Saved):
    """One constant passed as an argument, where it is read and the name that holds it."""

    nbytes: int = schema.saved(schema.count, key="bytes")
    shape: tuple[int, ...] = schema.saved(schema.items(schema.count), missing=())
    dtype: str = schema.saved(schema.text)
    lines: tuple[tuple[str, int], ...] = schema.saved(schema.items(_line), ())
    name: str | None = schema.saved(schema.optional(schema.text), None)
    matched: str | None = schema.saved(schema.optional(schema.text), None)

    WHERE = "constant"

    @property
    def line_numbers(self) -> tuple[int, ...]:
        """The lines that read it, by number."""
        return tuple(dict.fromkeys(line for _, line in self.lines))


def subject(constants: tuple[LiftedConstant, ...]) -> str:
    """``line 12 captures `BIG` (4.0 MiB)``; for several constants, each with its size."""
    lines = sorted({n for c in constants for n in c.line_numbers})
    where = ("line " if len(lines) == 1 else "lines ") + and_list([str(n) for n in lines]) \
        if lines else "the program"
    verb = "captures" if len(lines) <= 1 else "capture"
    return f"{where} {verb} {and_list([_constant(c) for c in constants])}"


def _constant(c: LiftedConstant) -> str:
    """`` `BIG` (4.0 MiB)``, or ``a float32[1048576] array (4.0 MiB)`` without a name."""
    what = f"`{c.name}`" if c.name else f"a {c.dtype}[{','.join(map(str, c.shape))}] array"
    return f"{what} ({fmt_bytes(c.nbytes)})"


def and_list(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


@dataclass(frozen=True)
class ConstantVariant(schema.Saved):
    """One variant measured both ways: the constants passed, each form's samples and program."""

    variant: str = schema.saved(schema.text)
    constants: tuple[LiftedConstant, ...] = schema.saved(schema.items(LiftedConstant.from_dict),
                                                         missing=())
    samples: dict[str, dict[str, list[float]]] = schema.saved(_samples, missing={})
    #: The variant's captured constants, as (count, bytes), before any was passed.
    captured_constants: tuple[int, int] = schema.saved(_pair)
    constants_left: tuple[int, int] | None = schema.saved(schema.optional(_pair), None)
    eqns: dict[str, int] = schema.saved(schema.mapping(schema.count), {})
    #: How the two forms' outputs matched (None: not compared), their largest difference.
    outputs_kind: str | None = schema.saved(schema.optional(schema.one_of(*OUTPUT_KINDS)), None)
    max_abs_diff: float | None = schema.saved(schema.optional(schema.number), None)
    error: str | None = schema.saved(schema.optional(schema.text), None)
    noted: tuple[Noted, ...] = schema.saved(read_notes, (), key="notes")

    WHERE = "variant"

    notes = said_in("noted")

    @property
    def measured(self) -> bool:
        """Whether both forms have cold first calls."""
        return all(self.samples.get(f, {}).get(COMPARED) for f in FORMS)

    @property
    def clock(self) -> Clock:
        """The clock the forms are compared on: CPU time on a busy machine, else wall."""
        return clock_for([self.samples.get(f, {}) for f in FORMS], COMPARED)

    def first_calls(self, form: str) -> list[float]:
        """A form's cold first calls, on ``clock``."""
        return on(self.samples.get(form, {}), COMPARED, self.clock)

    @property
    def difference(self) -> Difference:
        """Passed against captured, by the one rule."""
        return difference(self.first_calls(CAPTURED), self.first_calls(PASSED))

    @property
    def saved_s(self) -> float:
        """Seconds passing the constants saves on the cold first call (negative: it costs)."""
        return median(self.first_calls(CAPTURED)) - median(self.first_calls(PASSED))

    @property
    def saved_interval(self) -> tuple[float, float]:
        """The saving's interval in seconds, c·(1 − 1/r) of the captured median c."""
        d, captured = self.difference, median(self.first_calls(CAPTURED))
        return captured * (1 - 1 / d.low), captured * (1 - 1 / d.high)

    def stage_median(self, form: str, key: str) -> float:
        """A form's median of one stage's seconds (NaN: not measured)."""
        return median(self.samples.get(form, {}).get(key))


@dataclass(frozen=True)
class ConstantArguments(schema.Saved):
    """Every measured variant's big constants passed as arguments, and the part's notes."""

    entry: str = schema.saved(schema.text)
    variants: dict[str, ConstantVariant] = schema.saved(schema.mapping(ConstantVariant.from_dict))
    noted: tuple[Noted, ...] = schema.saved(read_notes, (), key="notes")
    stopped: str | None = schema.saved(schema.optional(schema.text), None)
    wall_s: float = schema.saved(schema.number_or_nan, math.nan)
    rounds: int = schema.saved(schema.count, 0)
    rounds_ended: str | None = schema.saved(ROUNDS_ENDED, None)

    WHERE = "constant_arguments"

    def __getitem__(self, variant: str) -> ConstantVariant:
        return self.variants[variant]

    notes = said_in("noted")

"""What the causes and the verdicts read of a comparison, as a typed Protocol: the
comparison derives its causes, so they cannot import it, and mypy still checks them."""

from __future__ import annotations

from typing import Any
from typing import Protocol

from ..lines import Lines
from ..rows import VariantResult
from ..stats.rule import Difference
from ..stats.verdicts import Verdict
from ..stats.witness import Clock
from .constant_arguments import ConstantArguments
from .second_start import SecondStart
from .xla_passes import XlaPasses


class Compared(Protocol):
    """A comparison as its causes and its verdict read it."""

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

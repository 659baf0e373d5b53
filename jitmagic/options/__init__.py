"""What to measure and how: :class:`Options`, the record every front end's options make; the
options are rows of one table (:mod:`.table`), whose checks (:mod:`.values`) it runs."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from ..backends import target as tpu
from ..errors import InputError
from .table import COMPARE, OPTION_SPECS, OptionSpec
from .values import ADVISE_FEWEST, AUTO

#: The parts ``--why`` turns on: every cause of a slow first call that has an option.
WHY_PARTS = ("lines", "cache", "xla", "effort")


@dataclasses.dataclass(frozen=True)
class Options:
    """The options of the magic, the command and ``compare``, checked on construction."""

    repeat: int | str = AUTO
    #: None: the running backend's (:data:`jitmagic.backends.Backend.budget_s`).
    budget: float | None = None
    number: int | None = None
    nest: tuple[str, ...] | None = None
    mine: tuple[str, ...] = ()
    timeout: float | None = None
    vmap: bool = False
    batch: int | None = None
    in_axes: Any = None
    attribute: bool = False
    advise: bool = False
    sweep: tuple[str, tuple[Any, ...]] | None = None
    lines: bool = False
    xla: bool = False
    cache: bool = False
    effort: bool = False
    why: bool = False
    quiet: bool = False
    target: str | None = None

    def __post_init__(self) -> None:
        defaults = {f.name: f.default for f in dataclasses.fields(self)}
        for option in OPTION_SPECS:
            if option.name not in defaults:
                continue
            value = getattr(self, option.name)
            if value is None and defaults[option.name] is not None:  # None is not "unset"
                raise InputError(f"{option.label} takes no None: leave it out for its "
                                 f"default ({defaults[option.name]!r})")
            if value is not None and option.check:
                object.__setattr__(self, option.name, option.check(option, value))
        if self.batch is not None or self.in_axes is not None:
            object.__setattr__(self, "vmap", True)
        for name, why in tpu.REFUSED.items() if self.target else ():
            if getattr(self, name) not in (None, False):
                raise InputError(f"--target compiles without running, so it cannot take "
                                 f"--{name.replace('_', '-')}: {why}.")
        if self.why:
            for part in WHY_PARTS:
                object.__setattr__(self, part, True)
        if self.advise and self.repeat != AUTO and int(self.repeat) < ADVISE_FEWEST:
            raise InputError(f"--advise needs at least {ADVISE_FEWEST} cold runs per variant "
                             f"to tell a saving from noise: use -r auto (the default) or -r "
                             f"{ADVISE_FEWEST} or more, not -r {self.repeat}.")

    @classmethod
    def from_namespace(cls, parsed: argparse.Namespace) -> Options:
        return cls(**{name: getattr(parsed, name) for name in fields()})


def fields() -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(Options)}


def argument_keywords(spec: OptionSpec, tool: str) -> dict[str, Any]:
    """``add_argument`` keywords of ``spec`` for ``tool``, its default the field's."""
    field = fields().get(spec.name) if tool == COMPARE else None
    return spec.parser_keywords(tool, None if field is None else field.default)

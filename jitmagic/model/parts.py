"""The one table of parts: what a comparison can measure after flat against nested.

Each :class:`Part` is one entry of :data:`PARTS`, in the order the parts are measured:
its record's key (in :class:`~jitmagic.model.comparison.Comparison` and in the saved
JSON), how progress names it, the options that ask for it, how its record is read
back, the causes it adds to "why the first call is slow", how it is measured and
shown, and what it does under several processes. The pipeline, the record's save and
load, the report's sections, the causes and the ``--processes`` check all read this
table, so a new part is one entry here plus its own modules.

model/ is the bottom layer: it cannot import the measuring and rendering code above it.
So an entry names its measuring and its showing function by import path
(``"jitmagic.measure.parts.second_start:add_part"``); the measuring layer resolves the one
(:meth:`Part.measurer`), the rendering layer the other (:meth:`Part.renderer`), and a
test checks each path lies in its layer. A measurer takes the comparison so far and the
measurement's own inputs (``measure.parts.PartRun``) and returns the comparison with
its record; a renderer takes the comparison and whether to draw charts and returns its
section as ``(text, html)``, or None where it has nothing to show.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from . import notes
from .advice import Advice
from .attribution import Attribution
from .causes import why
from .causes.constant_arguments import ConstantArguments
from .causes.effort import Effort
from .causes.effort import causes as effort_causes
from .causes.second_start import SecondStart
from .causes.xla_passes import XlaPasses
from .lines import checked_lines
from .orderings import Orderings

#: Under ``--processes N``: the part runs in every process, in step with the others (or
#: deciding nothing on a process's own clock, as XLA's passes: one profiled compile each).
LOCKSTEP = "lockstep"
#: Under ``--processes N``: the part is refused up front where an option asks for it, and
#: left out with a note where the comparison found it wanted.
ONE_PROCESS = "one process"


@dataclass(frozen=True)
class Part:
    """One part a comparison can add (see the module's docstring for each field's use)."""

    name: str  # the record's key in the comparison and in the saved JSON
    label: str  # how progress and notes name it ("second start")
    #: The :class:`~jitmagic.options.Options` fields any of which asks for it; none: the
    #: comparison itself finds it wanted (big captured constants), its measurer decides.
    asked_by: tuple[str, ...]
    read: Callable[[Any, str], Any]  # the saved record back, checked (``from_dict``)
    #: ``"module:function"`` that measures it; None where another part's measurer
    #: fills it too (the advice, with the attribution).
    measure: str | None
    #: ``"module:function"`` that shows it; None where another part's section shows it.
    render: str | None
    shown: int  # its section's place in the report (smaller first)
    processes: str = ONE_PROCESS  # :data:`LOCKSTEP` or :data:`ONE_PROCESS`
    #: What it adds to the causes of the first call (:mod:`.causes.why`); None: nothing.
    causes: Callable[[Any], Iterator[why.Cause]] | None = None
    #: Whether its record feeds the causes (its own, or the stages' hints: the loop
    #: ``--lines`` finds, XLA's passes): a sweep then shows its last value's causes.
    in_why: bool = False
    #: ``"module:function"`` that diffs its records, NEW against OLD, where both reports
    #: measured it (``(old, new) -> record or None``, :func:`jitmagic.model.diff.diff`),
    #: and the one that shows that diff (``(diff) -> blocks``, the diff's report); None:
    #: a diff does not compare this part.
    diff: str | None = None
    shows_diff: str | None = None

    def asked(self, options: Any) -> bool:
        """Whether ``options`` ask for this part (a found part: whether it may run)."""
        return not self.asked_by or any(getattr(options, o, None) for o in self.asked_by)

    def flags(self) -> tuple[str, ...]:
        """The options that ask for it, as the command line writes them."""
        return tuple(f"--{o.replace('_', '-')}" for o in self.asked_by)

    def measurer(self) -> Callable[..., Any] | None:
        """The function that measures this part, imported where it is first needed."""
        return None if self.measure is None else resolve(self.measure)

    def renderer(self) -> Callable[..., tuple[str, str] | None] | None:
        """The function that shows this part's section, imported where first needed."""
        return None if self.render is None else resolve(self.render)

    def differ(self) -> Callable[[Any, Any], Any] | None:
        """The function that diffs this part's records, imported where first needed."""
        return None if self.diff is None else resolve(self.diff)

    def diff_renderer(self) -> Callable[[Any], list[Any]] | None:
        """The function that shows this part's diff, imported where first needed."""
        return None if self.shows_diff is None else resolve(self.shows_diff)


def resolve(path: str) -> Callable[..., Any]:
    """The function ``"package.module:name"`` names."""
    module, _, name = path.partition(":")
    found = getattr(importlib.import_module(module), name)
    if not callable(found):
        raise TypeError(f"{path} is not a function")
    return found


_M, _R = "jitmagic.measure", "jitmagic.render"

#: Every part, in the order they are measured: orderings first (their batch is checked
#: before anything is timed), the per-line tables last (untimed, on what came before).
PARTS: tuple[Part, ...] = (
    Part("orderings", "orderings", ("vmap",), Orderings.from_dict,
         f"{_M}.parts.orderings:add_part", f"{_R}.orderings:section", shown=5),
    Part("attribution", "attribution", ("attribute", "advise"), Attribution.from_dict,
         f"{_M}.parts.advice:add_part", f"{_R}.attribution:section", shown=6),
    Part("advice", "advice", ("advise",), Advice.from_dict, None, None, shown=6),
    Part("constant_arguments", "constants passed as arguments", (),
         ConstantArguments.from_dict, f"{_M}.parts.constants.arguments:add_part",
         f"{_R}.causes.constant_arguments:section", shown=2, causes=why.constants, in_why=True),
    Part("second_start", "second start", ("cache",), SecondStart.from_dict,
         f"{_M}.parts.second_start:add_part", f"{_R}.causes.second_start:section", shown=3,
         causes=why.second_start, in_why=True),
    Part("xla_passes", "XLA passes", ("xla",), XlaPasses.from_dict,
         f"{_M}.parts.xla_passes:add_part", f"{_R}.causes.xla_passes:section", shown=4,
         processes=LOCKSTEP, in_why=True),
    Part("effort", "effort", ("effort",), Effort.from_dict, f"{_M}.parts.effort:add_part",
         f"{_R}.causes.effort:section", shown=4, causes=effort_causes, in_why=True,
         diff="jitmagic.model.causes.effort_diff:effort_diff",
         shows_diff=f"{_R}.causes.effort:diff_blocks"),
    Part("lines", "lines", ("lines",), checked_lines,
         f"{_M}.parts.lines:add_part", f"{_R}.lines:section", shown=1, in_why=True),
)


notes.KEYS["part"] = tuple(p.name for p in PARTS)  # a note's part is checked as it loads


def named(name: str) -> Part:
    """The part whose record is keyed ``name``."""
    return next(p for p in PARTS if p.name == name)


def later_labels(options: Any, found: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The labels of the parts that run after the comparison, as progress lists them:
    those ``options`` ask for, and the found parts named in ``found``."""
    return tuple(p.label for p in PARTS
                 if (p.asked_by and p.asked(options)) or p.name in found)


def part_causes() -> tuple[Callable[[Any], Iterator[why.Cause]], ...]:
    """What the parts add to the causes, in the table's order."""
    return tuple(p.causes for p in PARTS if p.causes is not None)

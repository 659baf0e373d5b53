"""The one table of parts a comparison can measure after flat against nested, in order
(each layer's own table, keyed by the part's name, says how it is measured and shown)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from . import notes
from .advice import Advice
from .attribution import Attribution
from .causes import cause
from .causes.constant_arguments import ConstantArguments
from .causes.effort import Effort
from .causes.effort import causes as effort_causes
from .causes.second_start import SecondStart
from .causes.xla_passes import XlaPasses
from .lines import Lines
from .orderings import Orderings

#: Under ``--processes N``: the part runs in every process, in step with the others.
LOCKSTEP = "lockstep"
#: Under ``--processes N``: the part is refused where asked for, left out where found.
ONE_PROCESS = "one process"


@dataclass(frozen=True)
class Part:
    """One part a comparison can add."""

    name: str  # the record's key in the comparison and in the saved JSON
    label: str  # how progress and notes name it ("second start")
    #: The ``Options`` fields any of which asks for it; none: the comparison finds it wanted.
    asked_by: tuple[str, ...]
    read: Callable[[Any, str], Any]  # the saved record back, checked (``from_dict``)
    shown: int  # its section's place in the report (smaller first)
    processes: str = ONE_PROCESS  # :data:`LOCKSTEP` or :data:`ONE_PROCESS`
    #: What it adds to the causes of the first call (:mod:`.causes.cause`); None: nothing.
    causes: Callable[[Any], Iterator[cause.Cause]] | None = None
    #: Whether its record feeds the causes: a sweep then shows its last value's causes.
    in_why: bool = False

    def asked(self, options: Any) -> bool:
        """Whether ``options`` ask for this part (a found part: whether it may run)."""
        return not self.asked_by or any(getattr(options, o, None) for o in self.asked_by)

    def flags(self) -> tuple[str, ...]:
        """The options that ask for it, as the command line writes them."""
        return tuple(f"--{o.replace('_', '-')}" for o in self.asked_by)


#: Every part, in the order measured: orderings first, the per-line tables last.
PARTS: tuple[Part, ...] = (
    Part("orderings", "orderings", ("vmap",), Orderings.from_dict, shown=5),
    Part("attribution", "attribution", ("attribute", "advise"), Attribution.from_dict, shown=6),
    Part("advice", "advice", ("advise",), Advice.from_dict, shown=6),  # with attribution
    Part("constant_arguments", "constants passed as arguments", (),
         ConstantArguments.from_dict, shown=2, causes=cause.constants, in_why=True),
    Part("second_start", "second start", ("cache",), SecondStart.from_dict, shown=3,
         causes=cause.second_start, in_why=True),
    Part("xla_passes", "XLA passes", ("xla",), XlaPasses.from_dict, shown=4,
         processes=LOCKSTEP, in_why=True),
    Part("effort", "effort", ("effort",), Effort.from_dict, shown=4, causes=effort_causes,
         in_why=True),
    Part("lines", "lines", ("lines",), Lines.from_dict, shown=1, in_why=True),
)


notes.KEYS["part"] = tuple(p.name for p in PARTS)  # a note's part is checked as it loads


def named(name: str) -> Part:
    """The part whose record is keyed ``name``."""
    return next(p for p in PARTS if p.name == name)


def later_labels(options: Any, found: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The labels of the parts ``options`` ask for, and of those ``found``, in order."""
    return tuple(p.label for p in PARTS
                 if (p.asked_by and p.asked(options)) or p.name in found)


def part_causes() -> tuple[Callable[[Any], Iterator[cause.Cause]], ...]:
    """What the parts add to the causes, in the table's order."""
    return tuple(p.causes for p in PARTS if p.causes is not None)

"""Showing a finished measurement's result (charts, a widget, the reports written) under the one
stop rule of the front ends, :class:`Showing`: Ctrl-C never loses the result."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from ..measure.sampling.stops import Checkpoint
from ..measure.sampling.stops import StageInterrupted

#: What a second Ctrl-C while a finished measurement is shown or saved says.
ABANDONED_SHOWING = ("a second Ctrl-C: showing the result was abandoned (the measurement "
                     "had finished; its text table is above)")


@dataclass
class Showing:
    """While :meth:`active`, a first Ctrl-C stops the part running and leaves out the optional
    ones; a second one raises :data:`ABANDONED_SHOWING`."""

    check: Checkpoint = field(
        default_factory=lambda: Checkpoint(abandon_message=ABANDONED_SHOWING))
    #: The parts a Ctrl-C stopped or left out, in order (the front end says so).
    stopped: list[str] = field(default_factory=list)

    @classmethod
    def after(cls, pressed: float | None) -> Showing:
        """Showing after a Ctrl-C at ``pressed`` (None: none) held since the measurement."""
        return cls(check=Checkpoint(abandon_message=ABANDONED_SHOWING,
                                    interrupted=pressed is not None, pressed_at=pressed))

    @contextmanager
    def active(self) -> Iterator[Showing]:
        with self.check.catching_interrupts(), self.check.mode(python=False):
            yield self

    def part(self, name: str, make: Callable[[], Any], instead: Callable[[], Any] | None = None,
             optional: bool = False) -> Any:
        """``make()``; where Ctrl-C stops it, ``name`` is noted and ``instead()`` made."""
        if not (optional and self.check.interrupted):
            try:
                with self.check.mode(python=True):
                    return make()
            except StageInterrupted:
                pass
        self.stopped.append(name)
        return None if instead is None else instead()

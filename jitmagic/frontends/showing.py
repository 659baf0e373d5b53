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

#: What the second Ctrl-C's ``KeyboardInterrupt`` says once the measurement has finished
#: and its result is being shown or saved (:class:`Showing`).
ABANDONED_SHOWING = ("a second Ctrl-C: showing the result was abandoned (the measurement "
                     "had finished; its text table is above)")


@dataclass
class Showing:
    """While :meth:`active`, a first Ctrl-C stops the part running (made without it, ``instead``);
    the parts after it still run, but the optional ones (charts, a widget); between parts it is
    only noted. A second Ctrl-C within ``ABANDON_S`` raises ``KeyboardInterrupt`` with
    :data:`ABANDONED_SHOWING`."""

    check: Checkpoint = field(
        default_factory=lambda: Checkpoint(abandon_message=ABANDONED_SHOWING))
    #: The parts a Ctrl-C stopped or left out, in order (the front end says so).
    stopped: list[str] = field(default_factory=list)

    @classmethod
    def after(cls, pressed: float | None) -> Showing:
        """Showing where a Ctrl-C came at ``pressed`` (``time.monotonic()``; None: none) between
        the measurement's end and showing: as one at its start."""
        return cls(check=Checkpoint(abandon_message=ABANDONED_SHOWING,
                                    interrupted=pressed is not None, pressed_at=pressed))

    @property
    def interrupted(self) -> bool:
        return self.check.interrupted

    @contextmanager
    def active(self) -> Iterator[Showing]:
        with self.check.catching_interrupts(), self.check.mode(python=False):
            yield self

    def part(self, name: str, make: Callable[[], Any], instead: Callable[[], Any] | None = None,
             optional: bool = False) -> Any:
        """``make()``; where Ctrl-C stops it (or, ``optional``, came before it) ``name`` is
        recorded and ``instead()`` (None without one) is made in its place."""
        if not (optional and self.interrupted):
            try:
                with self.check.mode(python=True):
                    return make()
            except StageInterrupted:
                pass
        self.stopped.append(name)
        return None if instead is None else instead()

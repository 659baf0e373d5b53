"""Showing a finished measurement's result (charts, a widget, the reports written) under
the one stop rule of the front ends, :class:`Showing`: Ctrl-C never loses the result.

It lives with the front ends that show, not with the measuring it follows: it reuses
the measurement's :class:`~jitmagic.measure.sampling.stops.Checkpoint` only for its
Ctrl-C handler."""

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
    """The one stop rule once a measurement has finished: its result is rendered (charts,
    a widget) and saved in parts, and Ctrl-C never loses it.

    While :meth:`active`, a first Ctrl-C stops the part running at once (the rest of
    that part is made without it, :meth:`part`'s ``instead``); the parts after it still
    run, except the optional ones (slow extras: the charts, a widget); between parts
    (putting together and displaying what was made, which takes no time) it is only
    noted. A second Ctrl-C within
    :data:`~jitmagic.measure.sampling.stops.ABANDON_S` seconds raises
    ``KeyboardInterrupt`` with :data:`ABANDONED_SHOWING`, one line the front end
    raises as it is. No internal exception type leaves :meth:`part` or :meth:`active`.
    """

    check: Checkpoint = field(
        default_factory=lambda: Checkpoint(abandon_message=ABANDONED_SHOWING))
    #: The parts a Ctrl-C stopped or left out, in order (the front end says so).
    stopped: list[str] = field(default_factory=list)

    @classmethod
    def after(cls, pressed: float | None) -> Showing:
        """Showing a result where a Ctrl-C came at ``pressed`` (a ``time.monotonic()``)
        after the measurement had finished and before showing began (held meanwhile):
        as one at its start, so the optional parts are left out and a Ctrl-C within
        :data:`~jitmagic.measure.sampling.stops.ABANDON_S` seconds of it is the second.
        None: no Ctrl-C came."""
        return cls(check=Checkpoint(abandon_message=ABANDONED_SHOWING,
                                    interrupted=pressed is not None, pressed_at=pressed))

    @property
    def interrupted(self) -> bool:
        """Whether Ctrl-C has been pressed since showing began."""
        return self.check.interrupted

    @contextmanager
    def active(self) -> Iterator[Showing]:
        """Ctrl-C handled as the class says while active."""
        with self.check.catching_interrupts(), self.check.mode(python=False):
            yield self

    def part(self, name: str, make: Callable[[], Any], instead: Callable[[], Any] | None = None,
             optional: bool = False) -> Any:
        """``make()``; where Ctrl-C stops it (or, ``optional``, came before it) ``name``
        is recorded and ``instead()`` (None without one) is made in its place, with
        Ctrl-C only noted meanwhile (a second one still abandons)."""
        if not (optional and self.interrupted):
            try:
                with self.check.mode(python=True):
                    return make()
            except StageInterrupted:
                pass
        self.stopped.append(name)
        return None if instead is None else instead()

"""Ctrl-C held while jitmagic puts back what the cell changed: so that nothing is left
half way, and a finished result is not lost (:class:`CtrlCHeld`)."""

from __future__ import annotations

import signal
import threading
import time
from typing import Any

from ..measure.sampling.stops import ABANDON_S


class CtrlCHeld:
    """Ctrl-C as usual from :meth:`install` until :meth:`hold`, then noted
    (``pressed``) and not raised until :meth:`release`: so that nothing jitmagic puts
    back is left half way, and a finished result is not lost. The handler is set once,
    before the measurement (:meth:`hold` only flips how it acts, leaving no moment
    between the two handlers). Only on the main thread, and only over a handler set from
    Python (IPython's, a terminal's); an ignored SIGINT stays ignored."""

    def __init__(self) -> None:
        #: When each Ctrl-C held came (``time.monotonic()``).
        self.pressed: list[float] = []
        self._previous: Any = None
        self._installed = self._holding = False

    def install(self) -> None:
        """Set the handler, which hands each Ctrl-C on to the one there was (until
        :meth:`hold`); again, or off the main thread, nothing."""
        if self._installed or threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGINT)
        if callable(previous):  # not ignored, not the default, set from Python
            self._previous, self._installed = previous, True
            signal.signal(signal.SIGINT, self._handle)

    @staticmethod
    def current() -> CtrlCHeld | None:
        """The one whose handler is SIGINT's now (a caller's, set before it measured)."""
        held = getattr(signal.getsignal(signal.SIGINT), "__self__", None)
        return held if isinstance(held, CtrlCHeld) else None

    def _handle(self, signum: int, frame: Any) -> None:
        if self._holding:
            self.pressed.append(time.monotonic())
        else:
            self._previous(signum, frame)

    def hold(self) -> None:
        """From now on Ctrl-C is only noted."""
        self._holding = True

    def release(self) -> None:
        """The handler there was is back (what was pressed meanwhile stays noted)."""
        if self._installed:
            self._installed = self._holding = False
            signal.signal(signal.SIGINT, self._previous)

    @property
    def last(self) -> float | None:
        """When the last Ctrl-C held came; None where none came."""
        return self.pressed[-1] if self.pressed else None

    def twice(self) -> bool:
        """Whether two of the Ctrl-C held came within ``ABANDON_S`` seconds (a second
        Ctrl-C, which abandons)."""
        return any(b - a < ABANDON_S for a, b in zip(self.pressed, self.pressed[1:], strict=False))


#: The warning of a result whose side effects were put back as Ctrl-C came.
HELD = ("Ctrl-C came while jitmagic put back what the cell changed: it waited until "
        "everything was put back (the measurement had finished, and is whole)")

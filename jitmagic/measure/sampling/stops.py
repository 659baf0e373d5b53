"""Stopping a measurement between stages (or inside Python stages): Ctrl-C, a
second Ctrl-C, ``--timeout``, and the wording of why it stopped."""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from . import clocks
from .reporting import Reporter

#: A second Ctrl-C within this many seconds of the first abandons the measurement.
ABANDON_S = 5.0
#: A steady-state timing loop asks whether to stop at least this often (seconds).
POLL_S = 0.1
#: What the second Ctrl-C's ``KeyboardInterrupt`` says.
ABANDONED = ("a second Ctrl-C: the measurement was abandoned (XLA may keep compiling in "
             "the background for a few seconds)")

#: What a front end says of a plain ``KeyboardInterrupt`` (Ctrl-C outside any stage's
#: handler: in the cell's setup, or as the result was put together): no result exists.
NO_RESULT = "interrupted before there was a result to show"
#: Functions Python calls from a finalizer or the collector, where an exception is
#: printed and dropped: Ctrl-C there only sets the flag.
SWALLOWING = ("_xla_gc_callback", "__del__")
#: Why a measurement stopped by Ctrl-C in its discovery trace holds nothing.
FINDING = "interrupted while finding your helpers: nothing was measured"
#: What a stage is called once it has finished where that is another word (stop reasons
#: say "after trace").
FINISHED = {"tracing": "trace"}


class Stop(Exception):
    """Measurement stopped between stages; ``times`` holds the stages that finished."""

    def __init__(self, reason: str, times: dict[str, float] | None = None):
        super().__init__(reason)
        self.reason = reason
        self.times = times or {}
        #: What the stages that finished made (a ``ColdRun`` with traced/lowered set), for
        #: the structure counts of a stopped variant; None where nothing was made.
        self.artefact: Any = None


def first_line(exc: BaseException, named: bool = False) -> str:
    """The first line of ``exc``'s message (its type's name where it has none); ``named``:
    after its type's name (``ZeroDivisionError: division by zero``)."""
    said = str(exc).strip().splitlines()
    if not said:
        return type(exc).__name__
    return f"{type(exc).__name__}: {said[0]}" if named else said[0]


class StageInterrupted(BaseException):
    """Raised by the Ctrl-C handler inside a Python stage to stop at once; a
    ``BaseException`` so the user's ``except Exception`` cannot swallow it."""


@dataclass
class Checkpoint:
    """Asked between stages: has the user pressed stop, or has the time limit passed?
    One checkpoint runs a whole measurement, so once anything stops nothing after it
    starts. While ``catching_interrupts`` is active, Ctrl-C stops a Python stage at once
    and only sets a flag during an XLA compile or a call (a cut compile runs on in the
    background and has crashed JAX later); a second within :data:`ABANDON_S` raises
    ``KeyboardInterrupt`` wherever it lands. Its :class:`.reporting.Reporter` tells the
    front end where the measurement is, never inside a timed interval."""

    deadline: float = math.inf
    interrupted: bool = False
    #: Where the measurement is, told to the front end's progress display.
    report: Reporter = field(default_factory=Reporter)
    #: Whether Ctrl-C and the deadline stop this process on its own (not in lockstep,
    #: :class:`~.lockstep.SharedCheckpoint`, where processes stop together at barriers).
    alone: bool = True
    #: When the last Ctrl-C came (``time.monotonic()``).
    pressed_at: float | None = None
    _done: str | None = None  # the last thing finished: a stop is "after" it
    _python: bool = False
    _depth: int = 0
    _abandoned: bool = False  # a second Ctrl-C landed where it could not be raised
    #: What the second Ctrl-C's ``KeyboardInterrupt`` says.
    abandon_message: str = ABANDONED

    def __call__(self, done: str, times: dict[str, float] | None = None) -> None:
        self._stop_if_due(lambda: f"after {done}", times)
        self._done = done

    def due(self) -> bool:
        """Whether this process is to stop at its next checkpoint (never, in lockstep)."""
        return self.alone and (self.interrupted or clocks.wall() > self.deadline)

    def poll(self, stage: str, times: dict[str, float] | None = None) -> None:
        """Inside a long stage (a steady-state loop), between two of its calls: stop now?"""
        self._stop_if_due(lambda: f"during {stage} of {self.report.position()}", times)

    def _stop_if_due(self, where: Callable[[], str], times: dict[str, float] | None) -> None:
        if self._abandoned:
            raise KeyboardInterrupt(self.abandon_message)
        if self.due():
            cause = "interrupted by the user" if self.interrupted else "stopped by --timeout"
            raise Stop(f"{cause} {where()}", times)

    def begin(self, stage: str, times: dict[str, float] | None = None) -> None:
        """Before ``stage`` starts: stop if due (once anything has finished), else tell
        ``progress`` where the measurement is."""
        if self._done is not None:
            self(self._done, times)
        self.report.tell(stage)

    @contextmanager
    def running(self, stage: str, times: dict[str, float] | None = None,
                python: bool = False) -> Iterator[None]:
        """Around one stage: in a ``python`` one Ctrl-C stops at once (``Stop``), where
        this process stops alone."""
        try:
            with self.mode(python):
                yield
        except StageInterrupted:
            raise Stop(f"interrupted by the user during {stage} of {self.report.position()}",
                       times) from None
        self._done = FINISHED.get(stage, stage)

    def leave_python(self) -> None:
        """From now until the running stage ends, Ctrl-C only sets the flag: the stage
        has left the user's Python (a first call whose XLA compile begins)."""
        self._python = False

    @contextmanager
    def finding_helpers(self) -> Iterator[None]:
        """Around the discovery trace: Ctrl-C stops it at once (``Stop``, nothing
        measured); after it, the first stage stops if ``--timeout`` has passed."""
        with self.catching_interrupts():
            self.report.at("comparison")  # no variant's row yet (a sweep's last point had)
            self.report.tell("finding helpers")
            try:
                with self.mode(python=True):
                    yield
            except StageInterrupted:
                raise Stop(FINDING) from None
        self._done = "finding your helpers"

    @contextmanager
    def mode(self, python: bool) -> Iterator[None]:
        """Within: Ctrl-C raises ``StageInterrupted`` at once (``python``: the user's own
        Python code runs, and this process stops alone) or only sets the flag (compiles,
        calls, measuring code; every stage in lockstep)."""
        outer, self._python = self._python, python and self.alone
        try:
            yield
        finally:
            self._python = outer

    @contextmanager
    def catching_interrupts(self) -> Iterator[Checkpoint]:
        """Ctrl-C handled as the class says while active; nested uses share one handler."""
        if threading.current_thread() is not threading.main_thread() or self._depth:
            self._depth += 1
            try:
                yield self  # signal handlers can only be set from the main thread
            finally:
                self._depth -= 1
            return

        def request_stop(signum: int, frame: Any) -> None:
            now = time.monotonic()
            if self.pressed_at is not None and now - self.pressed_at < ABANDON_S:
                self._abandoned = True
                if not swallowed_in(frame):
                    raise KeyboardInterrupt(self.abandon_message)
            self.pressed_at, self.interrupted = now, True
            if self._python and not swallowed_in(frame):
                raise StageInterrupted()

        previous = signal.signal(signal.SIGINT, request_stop)
        self._depth += 1
        try:
            yield self
        finally:
            self._depth -= 1
            signal.signal(signal.SIGINT, previous)


def swallowed_in(frame: Any) -> bool:
    """Whether an exception raised in ``frame`` would be printed and dropped (a
    finalizer, a collector or weakref callback): there Ctrl-C leaves stopping to the
    next checkpoint."""
    while frame is not None:
        code = frame.f_code
        if code.co_name in SWALLOWING or code.co_filename.endswith(("weakref.py",
                                                                    "_weakrefset.py")):
            return True
        frame = frame.f_back
    return False

"""The command when the process measuring ends before it finished (a signal: XLA's segfault,
libtpu's abort; the code's ``os._exit``): it measures in a child of its own, and the parent says
which signal, in which stage, and what to do, ending as a shell would (128 + the signal)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from ...measure import children
from ...model.progress import Crashed, EndedEarly, Finished, Progress
from ...render.progress import (
    NATIVE,
    WATCHED_LOST,
    crash_report,
    ended_early,
    measured_again,
    position,
)
from .. import launcher
from ..statuses import INTERRUPTED, RAISED, STARTING, killed_by

#: The command's first words that run in its own process.
UNWATCHED = ("diff",)
#: Set to 1: the command measures in its own process, unwatched (for a debugger).
IN_ONE_PROCESS = "JITMAGIC_IN_ONE_PROCESS"


def supervised(argv: list[str], fresh_after_crash: Callable[[list[str]], bool]) -> int | None:
    """The command run in a watched child: its status (None: run it here); where native code
    crashed it in a variant and ``fresh_after_crash(argv)``, run again, each cold sample in a
    fresh process."""
    if children.inside() or launcher.is_child() or argv[:1] and argv[0] in UNWATCHED \
            or os.environ.get(IN_ONE_PROCESS) == "1":
        return None
    end = children.run_child(children.Script(("-m", "jitmagic", *argv)))
    if isinstance(end, Crashed) and _again(end, argv) and fresh_after_crash(argv):
        print(f"jitmagic: {measured_again(end)}", file=sys.stderr)
        crash = f"{end.signal_name} at {end.stage}"
        end = children.run_child(children.Script(("-m", "jitmagic", *argv)),
                                 env={children.AFTER_CRASH_ENV: crash})
    if isinstance(end, Finished):
        return int(end.result)
    if isinstance(end, Crashed) and end.signal == signal.SIGINT:  # before its handlers
        print(f"jitmagic: {STARTING}", file=sys.stderr)
        return INTERRUPTED
    watch = argv[:1] == ["watch"]
    said = {"lost": WATCHED_LOST, "unstaged": ""} if watch else {}
    if isinstance(end, Crashed):
        print(f"{_NAME[watch]}: {crash_report(end, **said)}", file=sys.stderr)
        return killed_by(end.signal)
    if isinstance(end, EndedEarly):
        print(f"{_NAME[watch]}: {ended_early(end, **said)}", file=sys.stderr)
        return RAISED
    return None


def _again(end: Crashed, argv: list[str]) -> bool:
    """Whether native code crashed the process in a variant's round of a comparison (not
    the watch's), this the first time."""
    return (end.signal in NATIVE and end.in_variant and argv[:1] != ["watch"]
            and children.AFTER_CRASH_ENV not in os.environ)


#: The command's name in its lines: ``jitmagic``, or ``jitmagic watch``.
_NAME = {False: "jitmagic", True: "jitmagic watch"}


def staged(draw: Any) -> Any:
    """``draw`` writing where the measurement is to the stage file first, in a watched child."""
    return _Staged(draw) if children.inside() else draw


class _Staged:
    """A progress drawer that writes where the measurement is, then draws."""

    def __init__(self, draw: Any):
        self.draw = draw

    @property
    def when_quiet(self) -> _Staged:
        return _Staged(None)

    def __call__(self, p: Progress) -> None:
        children.stage(position(p))
        if self.draw is not None:
            self.draw(p)

    def close(self, finished: bool = True) -> None:
        if hasattr(self.draw, "close"):
            self.draw.close(finished)

"""``python -m jitmagic FILE.py`` (and ``watch FILE.py``) when the process measuring
ends before it finished: native code kills it, another process does, or the code it runs
calls ``os._exit``.

A compile that crashes XLA (a segmentation fault) or libtpu (an abort) ends the
process by a signal, before anything is printed: the command ended with 139 and no
word. So the command measures in a child process of its own
(:func:`~jitmagic.measure.children.run_child`, its output the command's own, a
terminal's Ctrl-C reaching it as before) whose progress also goes to the stage file
(:func:`staged`); the parent only waits, and where the child is killed by a signal it
says which, in which variant and stage the measurement was, and what to do
(:func:`~jitmagic.render.progress.crash_report`), and ends as a shell would say
(128 + the signal; 130 for a Ctrl-C before the child could handle it). A child that
ended with a status before it got to its end (``os._exit(0)`` in the user's code) did
not finish either, whatever the status: said, and :data:`RAISED`. The child runs with
``faulthandler`` on: Python's traceback at the crash is on stderr above. ``diff`` runs
in the command's own process, as does a process of ``--processes`` (its launcher
watches it), and every command where :data:`IN_ONE_PROCESS` is ``1``.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from ...measure import children
from ...model.progress import Crashed
from ...model.progress import EndedEarly
from ...model.progress import Finished
from ...model.progress import Progress
from ...render.progress import WATCHED_LOST
from ...render.progress import crash_report
from ...render.progress import ended_early
from ...render.progress import position
from .. import launcher
from ..statuses import INTERRUPTED
from ..statuses import RAISED
from ..statuses import STARTING
from ..statuses import killed_by

#: The command's first words that run in its own process.
UNWATCHED = ("diff",)
#: Set to 1: the command measures in its own process, unwatched (a debugger's, or a test
#: harness's that presses Ctrl-C inside the measuring process).
IN_ONE_PROCESS = "JITMAGIC_IN_ONE_PROCESS"


def supervised(argv: list[str]) -> int | None:
    """The command run in a watched child: its exit status (a crash said, and 128 + its
    signal); None where this process is to run it itself (it is that child, a process of
    ``--processes``, ``diff``, :data:`IN_ONE_PROCESS` is set, or no child could start)."""
    if children.inside() or launcher.is_child() or argv[:1] and argv[0] in UNWATCHED \
            or os.environ.get(IN_ONE_PROCESS) == "1":
        return None
    end = children.run_child(children.Script(("-m", "jitmagic", *argv)))
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


#: The command's name in its lines: ``jitmagic``, or ``jitmagic watch``.
_NAME = {False: "jitmagic", True: "jitmagic watch"}


def staged(draw: Any) -> Any:
    """``draw`` (a progress drawer, or None) in a watched child writing where the
    measurement is to the stage file first; elsewhere ``draw`` itself."""
    return _Staged(draw) if children.inside() else draw


class _Staged:
    """A progress drawer that writes where the measurement is, then draws; with
    ``--quiet`` (its ``when_quiet``) it only writes."""

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

"""One runner of fresh child processes: a Python entry (a module's function, or a
script) in a new interpreter, and how it ended (:mod:`jitmagic.model.progress`).

For work that must not share this process: a compile native code aborts on, a cold
sample where the compiler remembers, another JAX release. An :class:`Entry` (JSON in and
out) runs in a session of its own, its output kept; a :class:`Script` shares the
parent's output and is handed its signals. Nothing is left behind: no file, no process
(those of a parent killed outright die with it; its folders go at the next child's start).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import user_frame
from ...model.progress import (
    ChildEnd,
    CouldNotStart,
    Crashed,
    EndedEarly,
    Failed,
    Finished,
    TimedOut,
    fatal_of,
)
from ..scratch import scratch_folder

#: The variables :mod:`.boot` reads: the stage file, and the parent's process id.
STAGE_ENV, PARENT_ENV = "JITMAGIC_CHILD_STAGE", "JITMAGIC_CHILD_PARENT"
#: Set where the command measures again after native code crashed its process in a
#: variant (``SIGSEGV at jitcompare g: nested 1/3 · first call``): each cold sample is then
#: a fresh process whatever the backend, so that the crash is its variant's alone.
AFTER_CRASH_ENV = "JITMAGIC_AFTER_CRASH"
#: Lines of a child's stderr kept.
TAIL_LINES = 20
#: Seconds a killed child gets to be reaped; seconds between two looks at an entry's ``stop``.
REAP_S, POLL_S = 10.0, 0.1
#: The signals a script's parent hands on to it (where this process does not ignore them).
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass(frozen=True)
class Entry:
    """``module.function(inputs)`` in the child: inputs and result are JSON's values."""

    module: str
    function: str


@dataclass(frozen=True)
class Script:
    """``python *argv`` in the child (``("-m", "jitmagic", "cell.py")``, or a path first)."""

    argv: tuple[str, ...]


#: The stage file's descriptor in a child (None in any other process).
_stage_fd: int | None = None
#: A script child's result file: written once it gets to its end (:func:`finished`).
_result_path: str | None = None


def stage(name: str) -> None:
    """In a child: say that it enters ``name`` now (one line, written at once, so that a
    crash in the stage still finds it). Elsewhere nothing."""
    if _stage_fd is not None:
        with contextlib.suppress(OSError):
            os.write(_stage_fd, (name.replace("\n", " ") + "\n").encode(errors="replace"))


def finished() -> None:
    """In a script child: say that it got to its end (Python's own, or an ``os._exit``
    of the command's that decided its status), so that its parent can tell it from a
    script that ended the process early. Elsewhere nothing."""
    if _result_path is not None:
        with contextlib.suppress(OSError):
            os.close(os.open(_result_path, os.O_WRONLY | os.O_CREAT, 0o600))


def inside() -> bool:
    """Whether this process is a child this runner started."""
    return _stage_fd is not None


def run_child(what: Entry | Script, inputs: Any = None, *, timeout_s: float | None = None,
              python: str | None = None, env: Mapping[str, str] | None = None,
              cwd: str | None = None, stop: Callable[[], bool] | None = None) -> ChildEnd:
    """Run ``what`` in a fresh ``python`` with ``env`` added; how it ended. Past
    ``timeout_s``, or once an entry's ``stop`` returns True, its process group is killed
    and it reads as :class:`TimedOut`."""
    exe = python or sys.executable
    with scratch_folder("child") as folder:
        files = _Files(folder)
        argv = [exe, "-X", "faulthandler", "-m", f"{__name__}.boot", str(files.request)]
        files.request.write_text(json.dumps(_request(what, inputs, files)))
        try:
            child = _start(argv, what, files, _environment(env, files), cwd)
        except OSError as exc:
            return CouldNotStart(exe, exc.strerror or type(exc).__name__)
        with _ended(child, isinstance(what, Entry)):
            status = _wait(child, what, timeout_s, stop)
        return _end(status, what, files, timeout_s)


class _Files:
    """The temporary folder's files: the request, the result, the stage, the output."""

    def __init__(self, folder: Path):
        self.request, self.result = folder / "request.json", folder / "result.json"
        self.stage, self.output = folder / "stage", folder / "output"


def _lines(path: Path) -> list[str]:
    """The non-blank lines of ``path`` (none where the child never wrote it)."""
    text = path.read_text(errors="replace") if path.exists() else ""
    return [ln for ln in text.splitlines() if ln.strip()]


def _request(what: Entry | Script, inputs: Any, files: _Files) -> dict[str, Any]:
    if isinstance(what, Script):
        return {"argv": list(what.argv), "result": str(files.result)}
    return {"module": what.module, "function": what.function, "inputs": inputs,
            "result": str(files.result)}


def _environment(added: Mapping[str, str] | None, files: _Files) -> dict[str, str]:
    """This process's environment, ``added``, the stage file and this process's id, and
    jitmagic importable (another Python's child finds it too)."""
    root = str(Path(__file__).resolve().parents[3])
    env = {**os.environ, **(added or {}), STAGE_ENV: str(files.stage),
           PARENT_ENV: str(os.getpid())}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def _start(argv: list[str], what: Entry | Script, files: _Files, env: dict[str, str],
           cwd: str | None) -> subprocess.Popen:
    if isinstance(what, Script):  # the parent's output, a group of its own (FORWARDED)
        return subprocess.Popen(argv, env=env, cwd=cwd, process_group=0)
    with files.output.open("wb") as out:
        return subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


@contextlib.contextmanager
def _ended(child: subprocess.Popen, own_group: bool) -> Iterator[None]:
    """After (a Ctrl-C or an error included) ``child`` has ended and been reaped: killed
    where it still runs, with ``own_group`` its whole group (for up to :data:`REAP_S`)."""
    try:
        yield
    finally:
        end = time.monotonic() + REAP_S
        with contextlib.suppress(ProcessLookupError):
            if own_group:
                os.killpg(child.pid, signal.SIGKILL)
            elif child.poll() is None:
                child.kill()
            while time.monotonic() < end:
                child.poll()  # reaped: a zombie of it would still count in the group
                os.killpg(child.pid, 0) if own_group else os.kill(child.pid, 0)
                time.sleep(0.01)


def _wait(child: subprocess.Popen, what: Entry | Script, timeout_s: float | None,
          stop: Callable[[], bool] | None = None) -> int | None:
    """The child's status (None: past ``timeout_s``, or ``stop`` said so first); a script
    is handed each signal of :data:`FORWARDED`."""
    if isinstance(what, Entry):
        end = math.inf if timeout_s is None else time.monotonic() + timeout_s
        while time.monotonic() < end and not (stop and stop()):
            with contextlib.suppress(subprocess.TimeoutExpired):
                return child.wait(min(POLL_S, max(0.0, end - time.monotonic())))
        return None
    with _forwarding(child.pid):
        return child.wait()


@contextlib.contextmanager
def _forwarding(pid: int) -> Iterator[None]:
    """Within, each signal of :data:`FORWARDED` this process gets goes to ``pid`` instead
    (one this process ignores stays ignored: ``nohup``); the handlers before are put back
    after. Off the main thread nothing is forwarded."""
    def forward(signum: int, frame: Any) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    before: dict[int, Any] = {}
    with contextlib.suppress(ValueError):  # not the main thread
        for number in FORWARDED:
            if signal.getsignal(number) is not signal.SIG_IGN:
                before[number] = signal.signal(number, forward)
    try:
        yield
    finally:
        for forwarded, handler in before.items():
            signal.signal(forwarded, handler if handler is not None else signal.SIG_DFL)


def _end(status: int | None, what: Entry | Script, files: _Files,
         timeout_s: float | None) -> ChildEnd:
    last, output = next(reversed(_lines(files.stage)), None), _lines(files.output)
    if status is None:
        return TimedOut(timeout_s or 0.0, last)
    if status < 0:
        return Crashed(-status, last, tuple(output[-TAIL_LINES:]), fatal_of(output),
                       tuple(f for f in output if user_frame(f)))
    if isinstance(what, Script):
        return Finished(status, last) if files.result.exists() else EndedEarly(status, last)
    if status == 0 and files.result.exists():
        said = json.loads(files.result.read_text())
        if "error" in said:
            kind, message = said["error"]
            return Failed(kind, message, last)
        return Finished(said["result"], last)
    return Failed(f"exit status {status}", output[-1] if output else "", last)

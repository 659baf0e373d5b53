"""The start of every child :func:`~jitmagic.measure.children.run_child` runs
(``python -m jitmagic.measure.children.boot REQUEST.json``): it ties the child's life to
its parent's, opens the stage file, then runs the entry (its result or its error
written as JSON) or the script (as ``python ARGS...`` would)."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import runpy
import signal
import sys
from typing import Any

from .. import children
from . import PARENT_ENV, STAGE_ENV


def _die_with_parent() -> None:
    """SIGKILL when the parent dies (Linux's prctl); a parent already gone: end now."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if str(os.getppid()) != os.environ.get(PARENT_ENV, str(os.getppid())):
        os._exit(1)


def _entry(request: dict[str, Any]) -> None:
    """Call the entry with its inputs; write ``{"result": ...}`` or ``{"error": [type,
    message]}`` to the result file. The process then ends at once, without the
    interpreter's teardown (where XLA's threads may still crash it)."""
    try:
        fn = getattr(importlib.import_module(request["module"]), request["function"])
        said: dict[str, Any] = {"result": fn(request["inputs"])}
    except Exception as exc:  # noqa: BLE001 (the child's error is its parent's finding)
        said = {"error": [type(exc).__name__, str(exc)]}
    with open(request["result"], "w") as out:
        json.dump(said, out)


def _script(argv: list[str]) -> None:
    """``python ARGS...``: ``-m MODULE ...``, ``-c CODE ...`` or ``PATH ...``, as the
    interpreter runs them."""
    if argv[0] == "-c":
        sys.argv = ["-c", *argv[2:]]
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
    elif argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        runpy.run_path(argv[0], run_name="__main__")


def main() -> None:
    _die_with_parent()
    with open(sys.argv[1]) as given:
        request = json.load(given)
    children._stage_fd = os.open(os.environ.pop(STAGE_ENV), os.O_WRONLY | os.O_CREAT
                                 | os.O_APPEND, 0o600)
    os.environ.pop(PARENT_ENV, None)  # a process this one starts is no child of the runner
    if "argv" in request:
        children._result_path = request["result"]
        try:
            _script(request["argv"])
        finally:  # Python's own end (a return, SystemExit, an error): not os._exit's
            children.finished()
        return
    _entry(request)
    for stream in (sys.stdout, sys.stderr):  # ended here: no teardown (XLA's threads)
        stream.flush()
    os._exit(0)


if __name__ == "__main__":
    main()

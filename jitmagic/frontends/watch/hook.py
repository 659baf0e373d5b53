"""``JITMAGIC_WATCH=1 python train.py``: the watch without wrapping the program, imported by the
stdlib ``jitmagic_watch.py`` once the program has imported JAX. Where the watch cannot start, the
program runs unwatched and ends with status 2 (or 3); at exit it writes the files, decides the
status and says the ledger on stderr. Child processes after the first (:data:`TOP`) write
``ledger.PID.json``; a fork without exec writes nothing."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import sys
from types import TracebackType
from typing import Any

from jitmagic_watch import NOT_APPLIED, START_DIR, fail_at_exit, say
from jitmagic_watch import end as _end

from ...errors import InputError
from ...options.table import COMMAND, WATCH, specs_for
from ..statuses import CANNOT_WRITE, REGRESSED
from .live import Live, write

#: The variable: ``1``, ``0`` (off) or the options, ``fail_after_warmup=1,save=l.json``.
VARIABLE = "JITMAGIC_WATCH"
#: The first process reading :data:`VARIABLE` sets it to its id, inherited by the others.
TOP = "JITMAGIC_WATCH_TOP"
#: The options that name a file the watch writes.
PATHS = ("--save", "--html")


def parse(value: str) -> dict[str, Any] | None:
    """The options in ``value`` (``{}`` for ``1``; None: off), keyed as the command's."""
    value = value.strip()
    if value in ("", "0"):
        return None
    if value == "1":
        return {}
    known = {spec.name: (spec.flags[-1], spec.type, spec.metavar)
             for spec in specs_for(WATCH, COMMAND)}  # the command's options, one table
    found: dict[str, Any] = {}
    for item in (part.strip() for part in value.split(",")):
        name, equals, given = (part.strip() for part in item.partition("="))
        key = name.lstrip("-").replace("-", "_")
        if not equals or key not in known:
            what = (f"unknown option {name!r}" if equals else
                    f"{item!r} is not NAME=VALUE" if item else "an empty option (two commas)")
            raise InputError(f"{what}: give 1, or options as NAME=VALUE joined by commas, of "
                           + ", ".join(f"{n}={m or '1'}" for n, (_, _, m) in known.items())
                           + f" (e.g. {VARIABLE}=fail_after_warmup=1,save=ledger.json)")
        option, kind, metavar = known[key]
        if option in found:
            raise InputError(f"{key} is given twice: give it once")
        if not given:
            raise InputError(f"{key}= needs a value, e.g. {key}={'1' if kind is int else metavar}")
        if kind is None and metavar is None:  # a switch: verbose=1
            if given not in ("0", "1"):
                raise InputError(f"{key} is on or off: {key}=1 (or 0), not {given!r}")
            found[option] = given == "1"
            continue
        try:
            if kind is int and not given.isascii():  # int() reads '٣' as 3
                raise ValueError(given)
            found[option] = kind(given) if kind is not None else given
        except ValueError:
            raise InputError(f"{key} is a number of compiles, a whole number from 0 (got "
                           f"{given!r}): e.g. {key}=1") from None
    return found


class _State:
    """What this process's watch holds between its start and its exit."""

    def __init__(self, options: dict[str, Any], top: bool) -> None:
        self.options, self.top = options, top
        self.pid = os.getpid()        # a fork's child has another: the watch is not its
        self.entered: Any = None      # the watch's context manager, entered
        self.made: list[Any] = []     # where it puts the ledger
        self.error: BaseException | None = None
        self.status = 0


_state: _State | None = None


def _refused(why: str, status: int = NOT_APPLIED) -> None:
    """Say why the watch cannot be applied: the program runs unwatched and fails at exit."""
    say(f"{why}; the program runs unwatched, and ends with status {status}")
    fail_at_exit(why, status)


def _ours() -> _State | None:
    """This process's watch (None: none, or a fork's child's copy)."""
    return _state if _state is not None and _state.pid == os.getpid() else None


def begin() -> None:
    """Read :data:`VARIABLE` and, where it asks for the watch, start it."""
    global _state
    if _state is not None:
        return
    try:
        options = parse(os.environ.get(VARIABLE, ""))
    except InputError as exc:
        _refused(str(exc))
        return
    if options is None:
        return
    top = os.environ.setdefault(TOP, str(os.getpid())) == str(os.getpid())
    for flag in PATHS:  # read against the folder the program started in: it may chdir
        if options.get(flag):
            path = os.path.join(START_DIR, os.path.expanduser(options[flag]))
            stem, ending = os.path.splitext(path)  # a child process writes ledger.PID.json
            options[flag] = path if top else f"{stem}.{os.getpid()}{ending}"
    _state = _State(options, top)
    atexit.register(_exit_status)  # the first registered runs last: after all the others
    _start()


def _source() -> str:
    """The program as its ledger names it: ``train.py``, ``python -c``."""
    first = sys.argv[0] if sys.argv and sys.argv[0] else "python"
    return f"python {first}" if first in ("-c", "-m") else os.path.basename(first)


def _start() -> None:
    """Start the watch; where it cannot, the program runs unwatched and fails at exit."""
    state = _ours()
    if state is None:
        return
    main = getattr(sys.modules.get("__main__"), "__spec__", None)
    if getattr(main, "name", "").startswith("jitmagic."):  # python -m jitmagic (watch):
        return                                              # it measures by itself
    from ...errors import CannotWriteError
    from .api import checked, watched

    try:  # the paths checked as the command's
        gate, paths = checked(state.options.get("--fail-after-warmup"),
                              state.options.get("--max-compiles"),
                              {flag: state.options.get(flag) for flag in PATHS})
        state.options.update(paths)
        script = os.path.abspath(sys.argv[0]) if sys.argv and os.path.isfile(sys.argv[0]) \
            else None  # the program's file (none for python -c)
        entered = watched(gate, _source(), script, on_again=Live(source_file=script))
        state.made = entered.__enter__()
    except Exception as exc:  # noqa: BLE001 (the program runs on, unwatched)
        why = str(exc) if isinstance(exc, (InputError, CannotWriteError)) else (
            f"the watch could not start ({type(exc).__name__}: {exc})")
        _refused(why, CANNOT_WRITE if isinstance(exc, CannotWriteError) else NOT_APPLIED)
        return
    state.entered = entered
    previous = sys.excepthook

    def excepthook(kind: type[BaseException], value: BaseException,
                   tb: TracebackType | None) -> None:
        state.error = value
        previous(kind, value, tb)

    sys.excepthook = excepthook
    atexit.register(_finish)  # before JAX's own exit handlers, registered before it


def _finish() -> None:
    """Stop the watch, write its files, decide the status, then say the ledger on stderr."""
    state = _ours()
    if state is None or state.entered is None:
        return
    from ...render.ledger import text
    from .api import write_ledger

    entered, state.entered = state.entered, None
    error = state.error
    with contextlib.suppress(BaseException):  # the ledger is made on every path out
        entered.__exit__(*((type(error), error, error.__traceback__) if error is not None
                           else (None, None, None)))
    if not state.made:
        return
    ledger = state.made[0]
    replaced = _replaced(state.options.get("--save"))
    written, failed = write_ledger(ledger, state.options.get("--save"),
                                   state.options.get("--html"))
    if error is None:
        state.status = CANNOT_WRITE if failed else REGRESSED if ledger.over_gate() else 0
    said = [text(ledger, bool(state.options.get("--verbose"))), *written, *replaced,
            *(f"jitmagic: {line}" for line in failed)]
    if not state.top:
        said.insert(0, f"jitwatch: process {os.getpid()} ({_source()}), started under "
                       f"{VARIABLE}:")
    write("\n".join(said), last=True)


def _replaced(path: str | None) -> list[str]:
    """A line where ``path`` held another program's ledger, which this one replaced."""
    try:
        with open(path or "", encoding="utf-8") as f:
            before = json.load(f).get("source")
    except (OSError, ValueError, AttributeError):
        return []
    if not isinstance(before, str) or before == _source():
        return []
    from ...model.saved.schema import printable

    return [f"jitwatch: save= replaced the ledger of {printable(before)} in "
            f"{printable(path or '')}: give each program "
            f"its own (e.g. {VARIABLE}=save=ledger-{os.path.splitext(_source())[0]}.json)"]


def _exit_status() -> None:
    """The last exit handler: a status the watch decided ends the process with it."""
    state = _ours()
    if state is not None and state.status:
        _end(state.status)


begin()

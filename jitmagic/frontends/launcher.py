"""``python -m jitmagic --processes N FILE.py``: N copies of the command on this machine, joined by
``jax.distributed`` and measuring in lockstep; process 0 shows and writes the report. One that
fails ends the rest (its status the launcher's), Ctrl-C is passed on, and a child never outlives
the launcher."""

from __future__ import annotations

import ast
import contextlib
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..errors import InputError
from .statuses import ENDED_WELL, INTERRUPTED, MEASURED, RAISED, killed_by

#: A child's place (:data:`ENV_FORM`), the launcher's pid, the file made once measured.
ENV, LAUNCHER_ENV, MEASURED_ENV = "JITMAGIC_PROCESS", "JITMAGIC_LAUNCHER", "JITMAGIC_MEASURED"
VARIABLES = (ENV, LAUNCHER_ENV, MEASURED_ENV)
ENV_FORM = "PROCESS_ID/NUM_PROCESSES@HOST:PORT, e.g. 1/2@127.0.0.1:4321"
#: Processes allowed per core (more only time-share the cores further).
PER_CORE = 4
#: Seconds to end once one failed, to stop after Ctrl-C, to run on after process 0, to join.
GRACE_S, INTERRUPT_GRACE_S, AFTER_LEADER_S, JOIN_TIMEOUT_S = 5.0, 30.0, 60.0, 60
#: How often the launcher looks at its children (seconds); log lines shown of a failed one.
POLL_S, LOG_LINES = 0.05, 15


def most_processes() -> int:
    return (os.cpu_count() or 1) * PER_CORE


def check_count(n: int) -> int:
    """``n`` if it is a process count this machine takes, else ``InputError`` (exit 2)."""
    most = most_processes()
    if not 1 <= n <= most:
        raise InputError(f"--processes must be a whole number from 1 to {most} (at most "
                         f"{PER_CORE} per core, {os.cpu_count()} cores here), not {n}")
    return n


def is_child() -> bool:
    """Whether the launcher started this process: :data:`ENV` set, its parent named."""
    return bool(os.environ.get(ENV)) and os.environ.get(LAUNCHER_ENV, "").strip() \
        == str(os.getppid())


def check_environment() -> str | None:
    """The launcher's variables checked before anything runs; a line where they are ignored."""
    _check_timeout()
    if is_child():
        place()  # raises for a value the launcher did not write
        return None
    left = [f"{name}={os.environ[name]!r}" for name in VARIABLES if os.environ.get(name)]
    if not left:
        return None
    return (f"ignoring {', '.join(left)}: this process was not started by `--processes` "
            f"(its parent is not the launcher {LAUNCHER_ENV} names), so it measures on its "
            f"own; unset {'them' if len(left) > 1 else 'it'} to silence this")


def _check_timeout() -> None:
    from ..measure.sampling.lockstep import TIMEOUT_ENV, TIMEOUT_S

    value = os.environ.get(TIMEOUT_ENV)
    if not value:
        return
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (0 < seconds < math.inf):
        raise InputError(f"{TIMEOUT_ENV} is {value!r}, not a number of seconds above 0 "
                         "(e.g. 60): it sets how long each of several processes waits at a "
                         f"barrier for the others; unset it for {TIMEOUT_S:g} s")


def refuse(args: Any, source: str | None) -> None:
    """``InputError`` for options not measured in lockstep, and a file that joins itself."""
    from ..measure.sampling.lockstep import refuse_unshared

    if args.vmap or args.batch is not None or args.in_axes is not None:
        raise InputError("--vmap (and --batch, --in-axes) cannot be used with --processes: "
                         "splitting a batch across processes is not built; measure the "
                         "orderings in one process")
    refuse_unshared(args, args.processes)
    if line := source and initializes(source):
        raise InputError(f"{args.file} calls jax.distributed.initialize itself (line {line}), "
                         "and --processes initializes each process it starts: remove that "
                         "call to use --processes, or start the processes yourself and run "
                         "`python -m jitmagic FILE.py` in each (docs/distributed.md)")


def initializes(source: str) -> int | None:
    """The line of the first ``jax.distributed.initialize(...)`` call in ``source``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    modules, functions = {"distributed"}, set[str]()
    named: dict[tuple[str | None, str], set[str]] = {("jax", "distributed"): modules,
                                                     ("jax.distributed", "initialize"): functions}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                named.get((node.module, a.name), set()).add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.name == "jax.distributed" and a.asname}
    return next((node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call) and (
        isinstance(node.func, ast.Name) and node.func.id in functions
        or isinstance(node.func, ast.Attribute) and node.func.attr == "initialize"
        and ast.unparse(node.func.value).split(".")[-1] in modules)), None)


def launch(count: int, argv: list[str]) -> int:
    """Run the command in ``count`` processes; the exit status (:func:`watch`)."""
    port = free_port()
    logs = Path(tempfile.mkdtemp(prefix="jitmagic-processes-"))
    children = [start(i, count, port, argv, logs) for i in range(count)]
    try:
        return watch(children)
    except KeyboardInterrupt:
        return interrupted(children)
    finally:
        kill(children)
        shutil.rmtree(logs, ignore_errors=True)  # their tails were said where one failed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Child:
    """One started process: its index, ``Popen``, log (None for 0) and measured file."""

    def __init__(self, index: int, popen: subprocess.Popen, log: Path | None,
                 measured: Path | None = None):
        self.index, self.popen, self.log, self._measured = index, popen, log, measured

    @property
    def status(self) -> int | None:
        return self.popen.poll()

    def failed(self) -> bool:
        return self.status not in (None, *ENDED_WELL)

    def measured(self) -> bool:
        return self._measured is None or self._measured.exists()

    def describe(self) -> str:
        code = self.status
        if code is not None and code < 0:
            name = {s.value: s.name for s in signal.Signals}.get(-code, f"signal {-code}")
            return f"process {self.index} was killed by {name}"
        return f"process {self.index} exited with status {code}"

    def tail(self) -> str:
        """The last lines of its log (JAX's C++ stack lines left out)."""
        if self.log is None:
            return ""
        lines = [ln for ln in self.log.read_text(errors="replace").splitlines()
                 if ln.strip() and not ln.startswith("    @ ")]
        return "\n".join(f"  [process {self.index}] {ln}" for ln in lines[-LOG_LINES:])


def start(index: int, count: int, port: int, argv: list[str], logs: Path) -> Child:
    """Start process ``index`` of ``count`` in its own session (Ctrl-C reaches the launcher)."""
    measured = logs / f"process-{index}.measured"
    env = {**os.environ, ENV: f"{index}/{count}@127.0.0.1:{port}",
           LAUNCHER_ENV: str(os.getpid()), MEASURED_ENV: str(measured)}
    log = logs / f"process-{index}.log" if index else None
    # process 0 writes to the launcher's own stdout and stderr, the others to their logs
    with log.open("w") if log else contextlib.nullcontext() as out:
        popen = subprocess.Popen([sys.executable, "-m", "jitmagic", *argv], env=env,
                                 stdout=out, stderr=subprocess.STDOUT if out else None,
                                 start_new_session=True, preexec_fn=_die_with_parent)
    return Child(index, popen, log, measured)


def _die_with_parent() -> None:
    """In the child, before it runs: SIGKILL when the launcher dies (Linux's prctl)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def watch(children: list[Child]) -> int:
    """Wait for the children, until one fails or ends early; the exit status."""
    leader, done_at = children[0], None
    while True:
        failed = [c for c in children if c.failed()]
        if failed:  # the others get GRACE_S, then are killed; its status
            wait_all(children, GRACE_S)
            _stopped(children, failed[0])
            code: int = failed[0].popen.returncode  # as a shell says it: 128 + N, signal N
            return killed_by(-code) if code < 0 else code
        if all(c.status in ENDED_WELL for c in children):
            return leader.status or MEASURED
        # once process 0 has measured, every process has passed the last barrier
        early = [] if leader.measured() else [c for c in children if c.status is not None
                                              and not c.measured()]
        if early:  # it ended before it had measured, while others wait for it: all killed
            _stopped(children, early[0], " before it had measured (its own code ended it, "
                                          "while the others waited for it)")
            return RAISED
        if leader.status in ENDED_WELL:
            done_at = done_at or time.monotonic()
            if time.monotonic() - done_at > AFTER_LEADER_S:
                late = [c.index for c in children if c.status is None]
                print(f"jitmagic: process 0 finished, but processes {late} did not end within "
                      f"{AFTER_LEADER_S:g} s after it: killed them", file=sys.stderr)
                return RAISED
        time.sleep(POLL_S)


def _stopped(children: list[Child], first: Child, why: str = "") -> None:
    """Kill the children still running, and say which ended ``first`` (``why``), with its log."""
    running = [c.index for c in children if c.status is None]
    kill(children)
    stopped = f"; stopped processes {', '.join(map(str, running))}" if running else ""
    print(f"jitmagic: {first.describe()}{why}{stopped}", file=sys.stderr)
    if first.tail():
        print(first.tail(), file=sys.stderr)


def interrupted(children: list[Child]) -> int:
    """Ctrl-C, passed on: :data:`INTERRUPT_GRACE_S` to stop, then killed; the status."""
    for c in children:
        if c.status is None:
            with contextlib.suppress(ProcessLookupError):
                c.popen.send_signal(signal.SIGINT)
    with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C: kill them now
        wait_all(children, INTERRUPT_GRACE_S)
    running = [c.index for c in children if c.status is None]
    kill(children)
    said = f" (killed processes {', '.join(map(str, running))})" if running else ""
    print(f"jitmagic: interrupted: stopped all {len(children)} processes{said}",
          file=sys.stderr)
    leader = children[0].status
    return leader if leader in ENDED_WELL and not running else INTERRUPTED


def wait_all(children: list[Child], seconds: float) -> None:
    end = time.monotonic() + seconds
    while any(c.status is None for c in children) and time.monotonic() < end:
        time.sleep(POLL_S)


def kill(children: list[Child]) -> None:
    """SIGKILL every child still running, and reap them (JAX catches SIGTERM)."""
    for c in children:
        if c.status is None:
            with contextlib.suppress(ProcessLookupError):
                c.popen.kill()
    for c in children:
        with contextlib.suppress(subprocess.TimeoutExpired):
            c.popen.wait(timeout=10)


def place() -> tuple[int, int, str] | None:
    """(process id, count, coordinator address) from :data:`ENV`; None outside a child."""
    if not is_child():
        return None
    found = re.fullmatch(r"([0-9]+)/([0-9]+)@(.+:([0-9]+))", os.environ[ENV].strip())
    if found is None or not int(found[1]) < int(found[2]) or not 0 < int(found[4]) < 2**16:
        raise InputError(f"{ENV} is {os.environ[ENV]!r}, not {ENV_FORM} (a process id "
                         "below the count): `--processes` sets it in each process it "
                         f"starts; unset it, and {LAUNCHER_ENV}, to measure in one "
                         "process")
    return int(found[1]), int(found[2]), found[3]


def note_measured() -> None:
    """In a child, once it has measured: create the file :data:`MEASURED_ENV` names."""
    path = os.environ.get(MEASURED_ENV)
    if path and is_child():
        with contextlib.suppress(OSError):
            Path(path).touch()


def join(backend_started: bool) -> bool:
    """In a child, before the file's arrays: join the others; whether it joined."""
    found = place()
    if found is None or found[1] == 1:
        return False
    index, count, address = found
    if backend_started:
        raise InputError("the file's first lines started JAX's backend (they made an array "
                         "or asked for the devices), so jitmagic could not join the "
                         "processes: under --processes jax.distributed.initialize must come "
                         "first; move that line below the definitions")
    import jax

    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=address, num_processes=count,
                               process_id=index, initialization_timeout=JOIN_TIMEOUT_S)
    return True

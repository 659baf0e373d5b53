"""``python -m jitmagic --processes N FILE.py``: N processes on this machine, in lockstep.

The launcher starts N copies of the command (``python -m jitmagic FILE.py [options]``),
each told by :data:`ENV` which process it is and where process 0's coordinator listens
(a free loopback port). Each child joins the others with ``jax.distributed.initialize``
(CPU collectives through gloo) right after the file's leading lines have run
(:mod:`~jitmagic.cell.prelude`: ``XLA_FLAGS`` set there still counts) and before
the rest of the file builds any array, then measures in lockstep
(:mod:`~jitmagic.measure.sampling.lockstep`). Process 0 shows the report and writes ``--save`` and
``--html``; the others print nothing, their output kept in a log the launcher shows
should they fail.

The launcher watches its children: once one ends with a failure (an exit status other
than 0, or a signal) the rest get :data:`GRACE_S` seconds to end on their own, then
are killed (SIGKILL: JAX catches SIGTERM), and the message names the process and its
status. Ctrl-C is passed on to the children (each stops at its next barrier, and
process 0 shows what was measured); a second Ctrl-C, or :data:`INTERRUPT_GRACE_S`
seconds, kills them. A child never outlives the launcher (Linux: it gets SIGKILL when
the launcher dies).
"""

from __future__ import annotations

import ast
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..errors import InputError
from .statuses import ENDED_WELL, INTERRUPTED

#: How a child learns its place: ``"PROCESS_ID/NUM_PROCESSES@HOST:PORT"``.
ENV = "JITMAGIC_PROCESS"
#: Processes allowed per core (more only time-share the cores further).
PER_CORE = 4
#: Seconds the other children get to end by themselves once one has failed.
GRACE_S = 5.0
#: Seconds the children get to stop at their next barrier after Ctrl-C.
INTERRUPT_GRACE_S = 30.0
#: Seconds the others may run on once process 0 has finished (they end with it).
AFTER_LEADER_S = 60.0
#: How often the launcher looks at its children (seconds).
POLL_S = 0.05
#: Lines of a failed child's log shown under the message.
LOG_LINES = 15
#: Seconds a child waits for the others to join (``initialization_timeout``).
JOIN_TIMEOUT_S = 60


def most_processes() -> int:
    """The most processes ``--processes`` takes here: cores × :data:`PER_CORE`."""
    return (os.cpu_count() or 1) * PER_CORE


def check_count(n: int) -> int:
    """``n`` if it is a process count this machine takes, else ``InputError`` (exit 2)."""
    most = most_processes()
    if not 1 <= n <= most:
        raise InputError(f"--processes must be a whole number from 1 to {most} (at most "
                         f"{PER_CORE} per core, {os.cpu_count()} cores here), not {n}")
    return n


def is_child() -> bool:
    """Whether this process was started by the launcher (:data:`ENV` is set)."""
    return bool(os.environ.get(ENV))


def refuse(args: Any, source: str | None) -> None:
    """``InputError`` for what cannot run under ``--processes`` (checked before any child
    starts): the options not measured in lockstep, and a file that initializes
    ``jax.distributed`` itself (the launcher does: never twice)."""
    from ..measure.sampling.lockstep import refuse_unshared

    vmap = args.vmap or args.batch is not None or args.in_axes is not None
    if vmap:
        raise InputError("--vmap (and --batch, --in-axes) cannot be used with --processes: "
                         "splitting a batch across processes is not built; measure the "
                         "orderings in one process")
    refuse_unshared(args, args.processes)
    line = source and initializes(source)
    if line:
        raise InputError(f"{args.target} calls jax.distributed.initialize itself (line {line}), "
                         "and --processes initializes each process it starts: remove that "
                         "call to use --processes, or start the processes yourself and run "
                         "`python -m jitmagic FILE.py` in each (docs/distributed.md)")


def initializes(source: str) -> int | None:
    """The line of the first ``jax.distributed.initialize(...)`` call in ``source``, however
    the file imported it (``from jax import distributed as dist``, ``from
    jax.distributed import initialize``)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    modules, functions = {"distributed"}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("jax", "jax.distributed"):
            for a in node.names:
                if (node.module, a.name) == ("jax", "distributed"):
                    modules.add(a.asname or a.name)
                elif (node.module, a.name) == ("jax.distributed", "initialize"):
                    functions.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.name == "jax.distributed" and a.asname}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "initialize" \
                and ast.unparse(func.value).split(".")[-1] in modules:
            return node.lineno
        if isinstance(func, ast.Name) and func.id in functions:
            return node.lineno
    return None


def launch(count: int, argv: list[str]) -> int:
    """Run the command with ``argv`` in ``count`` processes; the exit status: 0 when all
    finished, else process 0's failing status or the first failure's."""
    port = free_port()
    logs = Path(tempfile.mkdtemp(prefix="jitmagic-processes-"))
    children = [start(i, count, port, argv, logs) for i in range(count)]
    try:
        return watch(children)
    except KeyboardInterrupt:
        return interrupted(children)
    finally:
        kill(children)


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now (for process 0's coordinator)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Child:
    """One started process: its index, its ``Popen``, and its log (None for process 0,
    whose output is the launcher's own)."""

    def __init__(self, index: int, popen: subprocess.Popen, log: Path | None):
        self.index, self.popen, self.log = index, popen, log

    @property
    def status(self) -> int | None:
        return self.popen.poll()

    def failed(self) -> bool:
        return self.status not in (None, *ENDED_WELL)

    def describe(self) -> str:
        """``process 1 exited with status 3`` / ``process 1 was killed by SIGABRT``."""
        code = self.status
        if code is not None and code < 0:
            return f"process {self.index} was killed by {_signal_name(-code)}"
        return f"process {self.index} exited with status {code}"

    def tail(self) -> str:
        """The last lines of its log (JAX's C++ stack lines left out)."""
        if self.log is None:
            return ""
        lines = [ln for ln in self.log.read_text(errors="replace").splitlines()
                 if ln.strip() and not ln.startswith("    @ ")]
        return "\n".join(f"  [process {self.index}] {ln}" for ln in lines[-LOG_LINES:])


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def start(index: int, count: int, port: int, argv: list[str], logs: Path) -> Child:
    """Start process ``index`` of ``count``: the command with ``argv``, in its own session
    (the terminal's Ctrl-C reaches the launcher only, which passes it on)."""
    env = {**os.environ, ENV: f"{index}/{count}@127.0.0.1:{port}"}
    log = logs / f"process-{index}.log" if index else None
    # process 0 writes to the launcher's own stdout and stderr, the others to their logs
    with log.open("w") if log else contextlib.nullcontext() as out:
        popen = subprocess.Popen([sys.executable, "-m", "jitmagic", *argv], env=env,
                                 stdout=out, stderr=subprocess.STDOUT if out else None,
                                 start_new_session=True, preexec_fn=_die_with_parent)
    return Child(index, popen, log)


def _die_with_parent() -> None:
    """In the child, before it runs: SIGKILL when the launcher dies (Linux's prctl)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def watch(children: list[Child]) -> int:
    """Wait for the children; once one fails, give the rest :data:`GRACE_S`, kill them and
    say which failed and how. Returns the exit status (process 0's where all ended well:
    4 for a measurement stopped early, as one process says)."""
    leader, done_at = children[0], None
    while True:
        failed = [c for c in children if c.failed()]
        if failed:
            return failure(children, failed[0])
        if all(c.status in ENDED_WELL for c in children):
            return leader.status or 0
        if leader.status in ENDED_WELL:
            done_at = done_at or time.monotonic()
            if time.monotonic() - done_at > AFTER_LEADER_S:
                late = [c.index for c in children if c.status is None]
                print(f"jitmagic: process 0 finished, but processes {late} did not end within "
                      f"{AFTER_LEADER_S:g} s after it: killed them", file=sys.stderr)
                return 1
        time.sleep(POLL_S)


def failure(children: list[Child], first: Child) -> int:
    """One child failed: the others get :data:`GRACE_S` to end (process 0 then says why in
    its own words), then are killed; the message names the first to fail."""
    wait_all(children, GRACE_S)
    running = [c.index for c in children if c.status is None]
    kill(children)
    stopped = f"; stopped processes {', '.join(map(str, running))}" if running else ""
    print(f"jitmagic: {first.describe()}{stopped}", file=sys.stderr)
    if first.tail():
        print(first.tail(), file=sys.stderr)
    leader = children[0].status  # process 0's own status says what it said; else 1
    return leader if leader is not None and 0 < leader < 128 else 1


def interrupted(children: list[Child]) -> int:
    """Ctrl-C: pass it on, give the children :data:`INTERRUPT_GRACE_S` to stop at their next
    barrier (a second Ctrl-C kills them at once); process 0's status where all ended well
    (4: it showed what was measured), else 130."""
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
    """Wait until every child has ended, or ``seconds`` have passed."""
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
    """(process id, process count, coordinator address) from :data:`ENV`; None outside."""
    value = os.environ.get(ENV)
    if not value:
        return None
    ids, _, address = value.partition("@")
    index, _, count = ids.partition("/")
    return int(index), int(count), address


def join(backend_started: bool) -> bool:
    """In a started child, before the rest of the file runs: join the other processes
    (``jax.distributed.initialize``, CPU collectives through gloo); whether it joined.
    Nothing outside the launcher, nor for one process."""
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

"""Cold samples in fresh processes, where the backend's compiler remembers (issue 60).

A TPU's compile of a fresh program gets cheaper after a process's first
(:mod:`jitmagic.backends.memory`), so there every cold sample is taken in a fresh child
that owns the device, one after another, by the one runner of children
(:mod:`jitmagic.measure.children`): the child rebuilds the program from the command's
source (the command's ``measure_in_child``, which ``--jax`` runs too), measures one
variant's one cold run and its steady state, and returns the row. The parent keeps the
device closed (the command sets ``JAX_PLATFORMS=cpu`` for itself, the user's value for
its children) and runs the rounds, the rule and the report; its one untimed run of each
variant on its own platform gives the program's structure. On a backend that does not
remember (a CPU) nothing here runs: no child, the figures as before.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import json
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from ... import backends
from ...backends import memory
from ...model.progress import ChildEnd
from ...model.progress import Finished
from ..children import Entry
from ..children import run_child
from ..environments import cache_root
from . import clocks

#: The probes one decision reads (each a fresh process), and the seconds each may take.
PROBES, PROBE_TIMEOUT_S = 2, 600.0
#: Seconds a child's sample may take without ``--timeout`` before it counts as hung.
HANG_S = 600.0


def _cached() -> Path:
    return cache_root() / "backend-memory" / f"{memory.key()}.json"


def backend_memory() -> dict[str, Any]:
    """Whether this JAX's backend remembers work between compiles in a process
    (``{"remembers": bool, "platform": ..., ...}``): the stand-in's answer where
    :data:`~jitmagic.backends.memory.STANDIN_ENV` is set, else the cached one, else
    :data:`PROBES` probes in fresh processes (never in this one), their answer cached.
    A probe that does not finish answers no (measured in this process, as before)."""
    said = memory.standin()
    if said is not None or memory.only_cpu():
        return {"remembers": bool(said), "platform": None if said else "cpu"}
    path = _cached()
    with contextlib.suppress(OSError, ValueError, KeyError):
        return dict(json.loads(path.read_text()))
    probes = []
    for _ in range(PROBES):
        end = run_child(Entry(memory.__name__, memory.probe.__name__),
                        timeout_s=PROBE_TIMEOUT_S)
        if not isinstance(end, Finished):
            return {"remembers": False, "platform": None}
        probes.append(end.result)
    found = {"remembers": memory.remembers(probes), "platform": probes[0]["platform"],
             "device_kind": probes[0]["device_kind"], "probes": probes}
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(found))
    return found


@dataclass(frozen=True)
class Children:
    """How this measurement's cold samples are taken in fresh processes: the entry a
    child measures in, the command's arguments it measures (``FILE.py -r 1 -q ...``),
    the seconds it may take (None: no limit), and the platform the probe found (its
    budget is ``-r auto``'s)."""

    entry: Entry
    argv: tuple[str, ...]
    timeout_s: float | None = None
    platform: str | None = None


_CHILDREN: contextvars.ContextVar[Children | None] = contextvars.ContextVar(
    "jitmagic_children", default=None)
#: In a child: the variant whose one cold sample it takes (the others are skipped).
_ONLY: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "jitmagic_only", default=None)


@contextlib.contextmanager
def in_children(children: Children | None) -> Iterator[None]:
    """Within, the comparison's cold samples are taken by ``children`` (None: here)."""
    token = _CHILDREN.set(children)
    try:
        yield
    finally:
        _CHILDREN.reset(token)


@contextlib.contextmanager
def only(variant: str | None) -> Iterator[None]:
    """Within (in a child), the comparison samples ``variant`` alone (None: all)."""
    token = _ONLY.set(variant)
    try:
        yield
    finally:
        _ONLY.reset(token)


def for_command(entry: Entry, file: str, script_args: list[str], number: Any, nest: Any,
                mine: Any) -> Children | None:
    """The children that take the command's cold samples, each measuring in ``entry``
    (the command's own, as ``--jax`` runs it: ``FILE.py`` or ``demo`` with the command's
    ``-n``, ``--nest``, ``--mine`` and the script's arguments), where the
    backend remembers (:func:`backend_memory`); None in a child that takes one sample
    itself (:func:`only`), or where it does not remember."""
    if _ONLY.get() is not None:
        return None
    found = backend_memory()
    if not found["remembers"]:
        return None
    argv = [file, "-r", "1", "-q"]
    for flag, value in (("-n", number), ("--nest", nest), ("--mine", mine)):
        said = ",".join(value) if isinstance(value, list | tuple) else value
        argv += [flag, str(said)] if said else []
    return Children(entry, (*argv, "--", *script_args), HANG_S, found.get("platform"))


@contextlib.contextmanager
def device_closed(spawn: Children | None) -> Iterator[None]:
    """Within, where ``spawn`` takes the samples, JAX in this process (imported, its
    backend not started) keeps to the CPU: the device stays free for the children. The
    setting is put back after."""
    if spawn is None:
        yield
        return
    import jax

    before = jax.config.jax_platforms  # type: ignore[attr-defined]
    jax.config.update("jax_platforms", "cpu")
    try:
        yield
    finally:
        jax.config.update("jax_platforms", before)


def children() -> Children | None:
    """The children this measurement's cold samples are taken in (None: this process)."""
    return _CHILDREN.get()


def skipped(rows: list[str]) -> set[str]:
    """The rows a child leaves out: all but the one it samples (none elsewhere)."""
    wanted = _ONLY.get()
    return set() if wanted is None else {r for r in rows if r != wanted}


class ChildEnded(RuntimeError):
    """A child's sample ended without one (a crash, a hang, an error): its variant's
    finding, with how it ended."""

    def __init__(self, end: ChildEnd):
        super().__init__(f"its cold sample in a fresh process ended without a result: {end}")
        self.end = end


@dataclass
class ChildSubject:
    """A row whose cold samples are each taken in a fresh child (``name``, by
    its ``spawn``'s entry); ``here`` is the row in this process, run once untimed for the
    program's structure and output."""

    name: str
    here: Any  # a sampler's Subject
    spawn: Children
    #: Seconds each child took, start to end (what a sample cost).
    costs: list[float] = field(default_factory=list)
    _local: Any = None  # this process's ColdSample

    @property
    def args(self) -> tuple:
        return self.here.args

    @property
    def kwargs(self) -> dict[str, Any]:
        return self.here.kwargs

    @property
    def warm_up(self) -> bool:
        return False

    def cold(self, monitor: Any, check: Any) -> Any:
        """A ``ColdSample`` of the child's times, with this process's program."""
        started = clocks.wall()
        end = run_child(self.spawn.entry, {"argv": list(self.spawn.argv), "sample": self.name},
                        timeout_s=self.spawn.timeout_s, stop=check.due)
        self.costs.append(clocks.wall() - started)
        check.poll("its cold sample in a fresh process")
        if not isinstance(end, Finished):
            raise ChildEnded(end)
        row = end.result["variants"][self.name]["samples"]
        times = {k: xs[0] for k, xs in row.items() if xs and xs[0] is not None}
        first = self._local is None
        if first:  # this process's own run: the structure and output, untimed
            self._local = self.here.cold(monitor, check)
        local = self._local
        assert local is not None
        return dataclasses.replace(local, times=times, events={},
                                   output=local.output if first else None)

    def describe(self, cold: Any) -> Any:
        return self.here.describe(cold)


def in_fresh_processes(subjects: dict[str, Any]) -> dict[str, Any]:
    """``subjects`` as rows sampled in fresh children, where this measurement takes its
    cold samples there (none elsewhere): the sampler's ``takers``."""
    spawn = children()
    if spawn is None:
        return {}
    return {n: ChildSubject(n, s, spawn) for n, s in subjects.items()}


def session_remembers() -> bool:
    """Whether this process's backend remembers, asked without a probe (a process that
    holds the device cannot lend it to one): the stand-in's answer, else the cached one,
    else the backend's by name (:attr:`~jitmagic.backends.Backend.keeps_work`)."""
    said = memory.standin()
    if said is not None:
        return said
    with contextlib.suppress(OSError, ValueError, KeyError):
        return bool(json.loads(_cached().read_text())["remembers"])
    return backends.running().keeps_work


def where_sampled(takers: dict[str, Any]) -> dict[str, Any]:
    """The report's ``env`` entry saying where the cold samples were taken: in fresh
    processes (what each cost, median seconds), or in this process where its backend
    remembers (the session's figures); nothing where it does not (a CPU)."""
    costs = [c for t in takers.values() for c in t.costs]
    if costs:
        return {"cold_samples": {"where": "fresh", "sample_s": statistics.median(costs)}}
    return {"cold_samples": {"where": "session"}} if session_remembers() else {}

"""Cold samples in fresh processes where the backend's compiler remembers (issue 60,
:mod:`jitmagic.backends.memory`): each child rebuilds the program from the command's
source and returns one variant's cold run and steady state; the parent keeps JAX on the
CPU and runs the rounds, the rule and the report.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import json
import os
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import backends
from ...backends import memory
from ...errors import RaisedElsewhere
from ...model.progress import (
    WARM_UP,
    ChildEnd,
    Crashed,
    EndedEarly,
    Failed,
    Finished,
    TimedOut,
)
from ...options.table import IN_ONE_PROCESS
from ..children import AFTER_CRASH_ENV, Entry, run_child
from ..environments import cache_root
from . import clocks

#: The probes one decision reads (each a fresh process), and the seconds each may take.
PROBES, PROBE_TIMEOUT_S = 2, 600.0
#: What the report's ``env`` takes from the children (where the samples ran).
DEVICE_KEYS = ("backend", "devices", "device_count")
#: Seconds a child's sample may take without ``--timeout`` before it counts as hung.
HANG_S = 600.0


def _cached() -> Path:
    """Where this JAX's probes are kept (:func:`~jitmagic.backends.memory.key`)."""
    return cache_root() / "backend-memory" / f"{memory.key()}.json"


def _known() -> dict[str, Any] | None:
    """The stand-in's answer, else the cached one, judged anew from its probes by
    today's rule (None: neither)."""
    said = memory.standin()
    if said is not None:
        return {"remembers": said, "platform": None}
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        found = dict(json.loads(_cached().read_text()))
        return {**found, "remembers": memory.remembers(found["probes"])}
    return None


def backend_memory() -> dict[str, Any]:
    """Whether this JAX's backend remembers (``{"remembers": bool, "platform": ...}``):
    :func:`_known`, else no where JAX has only the CPU, else :data:`PROBES` probes in
    fresh processes, cached. A probe that does not finish answers no (sampled here)."""
    known = _known() or ({"remembers": False, "platform": "cpu"} if memory.only_cpu() else None)
    if known is not None:
        return known
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
        _cached().parent.mkdir(parents=True, exist_ok=True)
        _cached().write_text(json.dumps(found))
    return found


def _unfinished(end: ChildEnd, where: str) -> RaisedElsewhere:
    """A child that gave no result, as its variant's error here: at this process's run (the
    child's own is always 1 of 1) and the child's stage, with the user's frames Python's
    dump named where native code crashed it (the innermost is where it failed)."""
    if isinstance(end, (Failed, Crashed, EndedEarly, TimedOut)) and end.stage:
        end = dataclasses.replace(end, stage=f"{where} · {end.stage.rsplit(' · ', 1)[-1]}")
    frames = end.frames if isinstance(end, Crashed) else ()
    innermost = frames[0].rsplit(" in ", 1)[-1] if frames else None
    return RaisedElsewhere(innermost, "\n".join((str(end), *frames)))


@dataclass(frozen=True)
class Children:
    """The children that take the cold samples: the entry and arguments each measures
    (``FILE.py -r 1 -q ...``) and its time limit."""

    entry: Entry
    argv: tuple[str, ...]
    timeout_s: float | None = None


_CHILDREN: contextvars.ContextVar[Children | None] = contextvars.ContextVar(
    "jitmagic_children", default=None)
#: In a child: the variant whose one cold sample it takes (the others are skipped).
_ONLY: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "jitmagic_only", default=None)


@contextlib.contextmanager
def _set(var: contextvars.ContextVar, value: Any) -> Iterator[None]:
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)


def in_children(children: Children | None) -> contextlib.AbstractContextManager:
    """Within, the comparison's cold samples are taken by ``children`` (None: here)."""
    return _set(_CHILDREN, children)


def only(variant: str | None) -> contextlib.AbstractContextManager:
    """Within (in a child), the comparison samples ``variant`` alone (``""``: all, here)."""
    return _set(_ONLY, variant)


def for_command(entry: Entry, file: str, script_args: list[str],
                options: Any) -> Children | None:
    """The children that take the command's cold samples where the backend remembers, or
    where the command measures again after a crash (:data:`AFTER_CRASH_ENV`); None in a
    child (:func:`only`), and where an option of :data:`IN_ONE_PROCESS` is given."""
    if _ONLY.get() is not None or in_one_process(options):
        return None
    if not os.environ.get(AFTER_CRASH_ENV) and not backend_memory()["remembers"]:
        return None
    argv = [file, "-r", "1", "-q"]
    for flag, value in (("-n", options.number), ("--nest", options.nest),
                        ("--mine", options.mine)):
        said = ",".join(value) if isinstance(value, list | tuple) else value
        argv += [flag, str(said)] if said else []
    return Children(entry, (*argv, "--", *script_args), HANG_S)


def in_one_process(options: Any) -> bool:
    """Whether ``options`` (the comparison's, or the command's parsed arguments) ask for
    something that keeps its samples in one process (:data:`IN_ONE_PROCESS`)."""
    return any(getattr(options, n, None) for n in IN_ONE_PROCESS)


@contextlib.contextmanager
def device_closed(spawn: Children | None) -> Iterator[None]:
    """Within, where ``spawn`` takes the samples, JAX here (its backend not started)
    keeps to the CPU, the device free for the children; put back after."""
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


def alone() -> bool:
    """Whether this process samples one row alone (a child of :func:`only`)."""
    return bool(_ONLY.get())


def skipped(rows: list[str]) -> set[str]:
    """The rows a child leaves out: all but the one it samples (none elsewhere)."""
    wanted = _ONLY.get()
    return {r for r in rows if r != wanted} if wanted else set()


@dataclass
class ChildSubject:
    """A row whose cold samples are each a fresh child's; ``here``, the row in this
    process, runs once untimed for the program's structure and output."""

    name: str
    here: Any  # a sampler's Subject
    spawn: Children
    #: Seconds each child took, start to end (what a sample cost).
    costs: list[float] = field(default_factory=list)
    #: The children's backend and devices (this process's are the CPU's).
    device: dict[str, Any] = field(default_factory=dict)
    _local: Any = None  # this process's ColdSample

    def cold(self, monitor: Any, check: Any) -> Any:
        """A ``ColdSample`` of the child's times, with this process's program."""
        check.begin("first call, in a fresh process")  # the progress line's round and stage
        started = clocks.wall()
        end = run_child(self.spawn.entry, {"argv": list(self.spawn.argv), "sample": self.name},
                        timeout_s=self.spawn.timeout_s, stop=check.due)
        check.poll("its cold sample in a fresh process")
        if not isinstance(end, Finished):  # a crash, a hang, an error: the variant's finding
            raise _unfinished(end, check.report.position())
        if "raised" in end.result:  # the user's code: shown as if it had raised here
            raise RaisedElsewhere(**end.result["raised"])
        self.costs.append(clocks.wall() - started)  # a sample's cost: only whole ones
        self.device = {k: end.result["env"].get(k) for k in DEVICE_KEYS}
        row = end.result["variants"][self.name]["samples"]
        times = {k: xs[0] for k, xs in row.items() if xs and xs[0] is not None}
        first = self._local is None
        if first:  # this process's own run: the structure and output, untimed
            check.report.told_as = WARM_UP
            try:
                self._local = self.here.cold(monitor, check)
            finally:
                check.report.told_as = None
        return dataclasses.replace(self._local, times=times, events={},
                                   output=self._local.output if first else None)

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
    holds the device cannot lend it): :func:`_known`, else by the backend's name."""
    known = _known()
    return bool(known["remembers"]) if known else backends.running().keeps_work


def where_sampled(takers: dict[str, Any]) -> dict[str, Any]:
    """The report's ``env`` entries saying where the cold samples were taken: in fresh
    processes (their device, what each cost, median seconds), or in this process where
    its backend remembers (the session's figures); nothing where it does not (a CPU)."""
    costs = [c for t in takers.values() for c in t.costs]
    if takers:  # a sample's cost: of those that ended with a result (None: none did)
        device: dict[str, Any] = next((t.device for t in takers.values() if t.device), {})
        crashed = os.environ.get(AFTER_CRASH_ENV)
        return {**device, "cold_samples": {
            "where": "fresh", "sample_s": statistics.median(costs) if costs else None,
            **({"after_crash": crashed} if crashed else {})}}
    return {"cold_samples": {"where": "session"}} if session_remembers() else {}

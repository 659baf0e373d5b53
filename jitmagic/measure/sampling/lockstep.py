"""Measuring under ``jax.distributed``: every process takes the same steps, in step.

A process that calls a program with collectives once more than another waits forever
(issue 23), so every choice a process's clock could tip is made once and shared at a
barrier before each cold run; a run's headline samples are the slowest process's.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
import platform
import sys
import time
from typing import Any

from ..._compat import distributed_client
from ...errors import InputError, UserCodeError
from ...model import parts as table
from ...model.rows import Samples, VariantResult, slowest
from ...options import WHY_PARTS
from . import clocks
from .stops import Checkpoint, Stop, first_line

#: Seconds a process waits at a barrier (:data:`TIMEOUT_ENV` sets another), then
#: :class:`LockstepError`.
TIMEOUT_S = 300.0
TIMEOUT_ENV = "JITMAGIC_LOCKSTEP_TIMEOUT"

#: Every exchange's number in this process: all processes count the same exchanges.
_EXCHANGES = itertools.count()


class LockstepError(RuntimeError):
    """The processes fell out of step: one did not arrive in time, or arrived elsewhere."""


class Lockstep:
    """One process: nothing to wait for, nothing to share (every method is the identity)."""

    index: int = 0
    count: int = 1

    @property
    def shared(self) -> bool:
        """Whether there are other processes to keep in step with."""
        return self.count > 1

    @property
    def leader(self) -> bool:
        """Whether this process shows and saves the result (process 0)."""
        return self.index == 0

    def gather(self, what: str, value: Any) -> list[Any]:
        """Every process's ``value`` (JSON data), in process order; ``what`` says where."""
        return [value]

    def decide(self, what: str, value: Any) -> Any:
        """Process 0's ``value``, on every process."""
        return self.gather(what, value)[0]

    def slowest(self, what: str, seconds: float) -> float:
        """The largest of every process's ``seconds``, on every process."""
        return max(self.gather(what, seconds))

    def env(self) -> dict[str, Any]:
        """What the report's ``env`` adds (nothing for one process)."""
        return {}


SINGLE = Lockstep()


class Distributed(Lockstep):
    """Processes in step through JAX's coordination service (``client``), each wait
    bounded by ``timeout_s``."""

    def __init__(self, client: Any, index: int, count: int, timeout_s: float = TIMEOUT_S):
        self.client, self.index, self.count, self.timeout_s = client, index, count, timeout_s

    def gather(self, what: str, value: Any) -> list[Any]:
        """Set this process's key, then read every process's: a barrier that carries data.
        Every process must gather the same ``what`` in the same order."""
        n = next(_EXCHANGES)
        self.client.key_value_set(_key(n, self.index), json.dumps([what, value]))
        deadline = time.monotonic() + self.timeout_s
        got = [self._read(n, i, what, deadline) for i in range(self.count)]
        if n:  # every process has set key n, so each has read all of n - 1
            self.client.key_value_delete(_key(n - 1, self.index))
        if any(w != what for w, _ in got):
            raise LockstepError("the processes fell out of step: "
                                + "; ".join(f"process {i} was at {w}" for i, (w, _) in
                                            enumerate(got))
                                + " (every process must measure the same call with the "
                                "same options)")
        return [v for _, v in got]

    def _read(self, n: int, i: int, what: str, deadline: float) -> Any:
        left_ms = max(1, int((deadline - time.monotonic()) * 1000))
        try:
            return json.loads(self.client.blocking_key_value_get(_key(n, i), left_ms))
        except Exception as exc:  # the service's DEADLINE_EXCEEDED, or it has gone
            raise LockstepError(
                f"process {self.index} waited {self.timeout_s:g} s at {what} for process {i}, "
                f"which did not arrive (it died, hangs, or runs a different measurement; "
                f"{TIMEOUT_ENV} sets the wait): {first_line(exc)[:200]}") from None

    def env(self) -> dict[str, Any]:
        """``process_count`` and each process's host and local devices (gathered)."""
        import jax

        mine = {"host": platform.node(),
                "devices": [f"{d.platform}:{d.id}" for d in jax.local_devices()]}
        return {"process_count": self.count,
                "processes": [{"process": i, **p} for i, p in
                              enumerate(self.gather("the environment", mine))]}


def _key(n: int, index: int) -> str:
    return f"jitmagic.lockstep.{n}.{index}"


def current() -> Lockstep:
    """The lockstep of this process: :data:`SINGLE` unless ``jax.distributed`` joined it to
    others (asked without starting JAX's backend where it has not been initialized)."""
    client = distributed_client()
    if client is None:
        return SINGLE
    import jax

    if jax.process_count() == 1:
        return SINGLE
    timeout = float(os.environ.get(TIMEOUT_ENV) or TIMEOUT_S)
    return Distributed(client, jax.process_index(), jax.process_count(), timeout)


def leads() -> bool:
    """Whether this process shows progress and results: it is not one of several under
    ``jax.distributed`` other than process 0 (asked without importing JAX)."""
    return "jax" not in sys.modules or current().leader


def with_others() -> bool:
    """Whether ``jax.distributed`` joined this process to others (asked without importing JAX)."""
    return "jax" in sys.modules and current().shared


class SharedCheckpoint(Checkpoint):
    """A :class:`Checkpoint` whose stops the processes agree on: deadline and Ctrl-C are
    only noted, and at each barrier (:meth:`agree`, before every cold run), if any is
    due, all stop with the same reason. A second Ctrl-C still abandons at once."""

    def __init__(self, lockstep: Lockstep, base: Checkpoint):
        super().__init__(deadline=base.deadline, interrupted=base.interrupted,
                         report=base.report, alone=False, _done=base._done)
        self.lockstep = lockstep
        if not lockstep.leader:
            self.report.draw = None  # process 0 shows the progress

    def agree(self, before: str) -> None:
        """The barrier before ``before`` (a cold run): ``Stop`` on every process if any
        process was interrupted or is past its deadline."""
        flags = self.lockstep.gather(before, [self.interrupted,
                                              clocks.wall() > self.deadline, self._done])
        pressed, done = [i for i, (p, _, _) in enumerate(flags) if p], flags[0][2]
        if pressed:
            who = "process" + "es" * (len(pressed) > 1) + " " + ", ".join(map(str, pressed))
            raise Stop(f"interrupted by the user ({who}) after {done}")
        if any(t for _, t, _ in flags):
            raise Stop(f"stopped by --timeout after {done}")


def shared_by_processes(check: Checkpoint, options: Any) -> Checkpoint:
    """``check`` as every process shares it under ``jax.distributed`` (``check`` itself
    for one process); ``InputError`` for an option not measured in lockstep."""
    step = current()
    if not step.shared:
        return check
    refuse_unshared(options, step.count)
    return check if isinstance(check, SharedCheckpoint) else SharedCheckpoint(step, check)


def refuse_unshared(options: Any, processes: int) -> None:
    """``InputError`` naming the options (given or through ``--why``, and ``--sweep``)
    whose parts decide on each process's own clock; nothing for one process."""
    if processes <= 1:
        return
    why = bool(getattr(options, "why", False))
    given = [flag for part in table.PARTS if part.processes == table.ONE_PROCESS
             for name, flag in zip(part.asked_by, part.flags(), strict=True)
             if getattr(options, name, None) or (why and name in WHY_PARTS)]
    if getattr(options, "sweep", None) is not None:
        given.append("--sweep")
    if not given:
        return
    given = list(dict.fromkeys(given))
    through = [f for f in given if f.removeprefix("--") in WHY_PARTS
               and not getattr(options, f.removeprefix("--"), None)]
    named = ", ".join(f"{f} (asked by --why)" if f in through else f for f in given)
    them = "it" if len(given) == 1 else "them"
    raise InputError(f"{named} cannot be measured across {processes} processes yet (only the "
                     f"flat/nested comparison runs in lockstep): leave {them} out"
                     f"{' (--why too)' if through else ''}, or measure in one process")


def lockstep_of(check: Checkpoint | None) -> Lockstep:
    """The lockstep a checkpoint keeps (:data:`SINGLE` for a one-process one)."""
    return check.lockstep if isinstance(check, SharedCheckpoint) else SINGLE


def barrier(check: Checkpoint, before: str) -> None:
    """Before a cold run: the processes meet and agree whether to stop (nothing for one)."""
    if isinstance(check, SharedCheckpoint):
        check.agree(before)


def same_outcome(check: Checkpoint, what: str, error: BaseException | None) -> None:
    """After a cold run (``what``): where some processes raised and others did not (they
    would no longer run the same steps), ``UserCodeError`` on all naming the first."""
    if not isinstance(check, SharedCheckpoint):
        return
    said = check.lockstep.gather(f"the outcome of {what}", None if error is None else
                                 f"{type(error).__name__}: {first_line(error)[:200]}")
    failed = [i for i, e in enumerate(said) if e is not None]
    if failed and len(failed) < len(said):
        ok = [i for i, e in enumerate(said) if e is None]
        raise UserCodeError(
            f"process {failed[0]} raised in {what} ({said[failed[0]]}), and process"
            f"{'es' * (len(ok) > 1)} {', '.join(map(str, ok))} did not: measured in "
            "lockstep, every process must run the same program, so one failing ends the "
            "measurement on all (its own log has the traceback)")


def agree_variants(planned: tuple[str, ...], step: Lockstep) -> None:
    """Every process must nest the same helpers: ``InputError`` on all of them where one
    found others than process 0 (its discovery trace took another path)."""
    if not step.shared:
        return
    found = step.gather("the helpers to nest", list(planned))
    if any(f != found[0] for f in found):
        each = "; ".join(f"process {i}: {', '.join(f) or 'none'}" for i, f in enumerate(found))
        raise InputError(f"the processes found different helpers to nest ({each}): every "
                         "process must trace the same program; pass --nest to choose them")


def merged(variants: dict[str, VariantResult], step: Lockstep) -> dict[str, VariantResult]:
    """Each variant with every process's samples (``per_process``) and, as its own, the
    slowest process's run by run (:func:`~jitmagic.model.rows.slowest`)."""
    if not step.shared:
        return variants
    everyone = step.gather("the timings", {n: v.samples for n, v in variants.items()})
    out = {}
    for name, v in variants.items():
        each = tuple({k: [math.nan if x is None else float(x) for x in xs]
                      for k, xs in p[name].items()} for p in everyone)
        out[name] = dataclasses.replace(v, samples=slowest(each), per_process=each)
    return out


def slowest_rows(step: Lockstep, what: str, rows: dict[str, Samples]) -> dict[str, Samples]:
    """``rows`` (samples by key, by row), or the slowest process's run by run."""
    if not step.shared:
        return rows
    everyone = step.gather(what, rows)
    return {name: slowest([p[name] for p in everyone]) for name in rows}

"""The one interleaved runner: every row's cold sample and steady state, samples kept
raw, rows in alternating order (:func:`in_turn`); what a cold sample is, is its
:class:`Subject`'s business."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ... import backends
from ...errors import RaisedElsewhere, UserCodeError, innermost_function, user_traceback
from ...model.notes import Noted
from ...model.rows import cpu_key
from . import clocks, fresh
from .clocks import FrozenClockError
from .conditions import frozen_heap, persistent_cache_off
from .lockstep import barrier, same_outcome
from .monitor import Monitor, disagreements
from .outputs import OutputDiff
from .rounds import Rounds, rounds_of
from .stages import STEADY_CEILING_S, steady_target, steady_timer, time_per_call
from .stops import Checkpoint, StageInterrupted, Stop
from .structure import ProgramFacts


@dataclass(frozen=True)
class ColdSample:
    """One cold sample of a row: the seconds per sample key, and what steady timing needs."""

    times: dict[str, float]
    call: Callable  # the callable whose steady state is timed next, while it is warm
    output: Any
    events: dict[str, float] = field(default_factory=dict)  # JAX's own clock, per key
    artefact: Any = None  # what the row's structure is read from (a ``ColdRun``)
    #: Facts of this run for the row's :class:`ProgramFacts` (the latest run's win).
    stages_from: str | None = None
    compile_events: int | None = None


class Subject(Protocol):
    """One row of the sampler: a variant, or an ordering of the batched function."""

    @property
    def args(self) -> tuple: ...

    @property
    def kwargs(self) -> dict[str, Any]: ...

    @property
    def warm_up(self) -> bool: ...  # one untimed call before each steady sample

    def cold(self, monitor: Monitor, check: Checkpoint) -> ColdSample: ...

    def describe(self, cold: ColdSample) -> ProgramFacts: ...


def in_turn(rows: list[str], round_: int) -> list[str]:
    """The rows' order in a round: A B, B A, A B ... so that drift, or a cost paid once
    by whichever row runs first, falls on every row alike."""
    return rows if round_ % 2 == 0 else rows[::-1]


class Sampler:
    """The one interleaved sampler: rows A B C A B C ..., each row's steady state timed
    right after its cold sample, while its program is still cached (the next row's cold
    sample clears it). Raw samples are kept; a failing row is kept, not raised."""

    def __init__(self, subjects: dict[str, Subject], keys: tuple[str, ...],
                 noun: str = "variant", steady: bool = True):
        self.subjects = subjects
        self.noun = noun  # what a row is called in a failure message
        #: Whether each cold sample is followed by a steady-state one (not where a row's
        #: sample is its cold runs alone: the second start's cold and warm starts).
        self.steady = steady
        self.samples: dict[str, dict[str, list[float]]] = {
            n: {k: [] for k in keys} for n in subjects}
        self.events: dict[str, dict[str, list[float]]] = {n: {} for n in subjects}
        self.shape: dict[str, ProgramFacts] = {}
        self.last: dict[str, ColdSample] = {}
        self.errors: dict[str, BaseException] = {}
        self.loops: dict[str, int] = {}
        self.stopped: str | None = None
        #: Rows that need no more rounds (the rule has decided them): skipped like errors.
        self.settled: set[str] = set()
        #: Rows whose cold samples (their steady state with them) another subject takes:
        #: a fresh process's (:mod:`.fresh`).
        self.takers: dict[str, Subject] = {}
        self.outputs = OutputDiff(expected=len(subjects))

    def measure(self, repeat: int | str | Rounds, number: int | None, monitor: Monitor,
                check: Checkpoint, what: str = "comparison") -> None:
        """Rounds over the rows (``repeat``: a count, ``"auto"`` or :class:`Rounds`) until
        done or ``Stop``; ``UserCodeError`` when every row failed and nothing stopped."""
        clocks.check()
        rounds = rounds_of(repeat)  # not kept: its rule holds this sampler
        rows, r = len(self.subjects), 0
        rounds.start()
        check.report.budget_ends = rounds.ends()
        try:
            with check.mode(python=False):
                while rounds.another(r):
                    most = rounds.most  # auto's grows once the machine is seen busy
                    for i, name in enumerate(in_turn(list(self.subjects), r)):
                        if name in self.errors or name in self.settled:
                            continue
                        check.report.at(what, name, r + 1, most, self.noun,
                                        (r * rows + i, most * rows), rounds.auto)
                        self._measure_once(name, number, monitor, check)
                        check(f"the {name} {self.noun}'s {check.report.run()}")
                    r += 1
        except Stop as stop:
            self.stopped = stop.reason
        except StageInterrupted:  # Ctrl-C just as a Python stage ended
            self.stopped = f"interrupted by the user during {check.report.position()}"
        if self.errors and not self.last and not self.stopped:
            failed = next(iter(self.errors))
            if fresh.alone():  # a child's one row: its parent shows the error as its own
                raise self.raised(failed)
            raise UserCodeError(self.describe_failure(failed))

    def measure_cold(self, repeat: int | str | Rounds, number: int | None, check: Checkpoint,
                     what: str = "comparison") -> tuple[Monitor, bool]:
        """:meth:`measure` with JAX's persistent cache off, its events heard, the heap frozen
        and Ctrl-C caught: (the monitor, whether the cache was on)."""
        monitor = Monitor()
        with (persistent_cache_off() as switched, monitor.listening(), frozen_heap(),
              check.catching_interrupts()):
            self.measure(repeat, number, monitor, check, what)
        return monitor, switched

    def _measure_once(self, name: str, number: int | None, monitor: Monitor,
                      check: Checkpoint) -> None:
        run = f"the {name} {self.noun}'s {check.report.run()}"
        barrier(check, run)
        subject = self.takers.get(name, self.subjects[name])
        try:
            cold = subject.cold(monitor, check)
        except Stop as stop:
            self._add(name, stop.times)
            if stop.artefact is not None and name not in self.shape:  # the stages that ran
                self.shape[name] = subject.describe(
                    ColdSample(stop.times, stop.artefact.jitted, None, artefact=stop.artefact))
            raise
        except FrozenClockError:  # jitmagic's clock, not the user's code: nothing is true
            raise
        except Exception as exc:  # the user's code: reported per row
            self.errors[name] = exc
            same_outcome(check, run, exc)
            return
        same_outcome(check, run, None)
        self._record(name, cold)
        if not self.steady or name in self.takers:
            return
        check(f"the {name} {self.noun}'s first call")
        check.report.tell("steady state")
        self._steady(name, cold, number, check)

    def _record(self, name: str, cold: ColdSample) -> None:
        self._add(name, cold.times)
        for key, secs in cold.events.items():
            self.events[name].setdefault(key, []).append(secs)
        if name not in self.shape:
            self.shape[name] = self.subjects[name].describe(cold)
        shape = self.shape[name]
        shape.stages_from = cold.stages_from or shape.stages_from
        shape.compile_events = cold.compile_events or shape.compile_events
        # compared now, then dropped: no output is kept
        self.outputs.add(name, cold.output, shape.computed_in)
        if cold.artefact is not None:
            cold.artefact.output = None
        self.last[name] = dataclasses.replace(cold, output=None)

    def _steady(self, name: str, cold: ColdSample, number: int | None, check: Checkpoint) -> None:
        """One steady-state sample: seconds per call, and CPU seconds where the host's
        clock times the execution (not on an accelerator)."""
        s = self.subjects[name]
        timer = steady_timer(cold.call, s.args, s.kwargs, cold.output)
        if s.warm_up:
            timer.timeit(1)
        target = steady_target(cold.times.get("first_call_s", STEADY_CEILING_S))
        self.loops[name], per_call, cpu = time_per_call(timer, self.loops.get(name), number,
                                                        check, target)
        times = {"execute_s": per_call}
        if backends.running().host_clock_times_execution:  # else the device ran it
            times[cpu_key("execute_s")] = cpu
        self._add(name, times)

    def _add(self, name: str, times: dict[str, float]) -> None:
        for key, secs in times.items():
            self.samples[name].setdefault(key, []).append(secs)

    def describe_failure(self, name: str) -> str:
        said = self.raised(name)
        others = [v for v in self.errors if v != name]
        which = f"the {name} {self.noun}" + (" (and " + ", ".join(others) + ")" if others else "")
        inside = f", in your function `{said.function}`" if said.function else ""
        return f"{which} failed{inside}:\n{said.shown}"

    def raised(self, name: str) -> RaisedElsewhere:
        """``name``'s error as a report shows it: here, or in the parent of this process."""
        exc = self.errors[name]
        # the first row is the reference (flat): where it failed too, --nest cannot help
        nest_hint = next(iter(self.subjects)) not in self.errors
        return RaisedElsewhere(innermost_function(exc), user_traceback(exc, nest_hint))

    def warnings(self, entry: str) -> Iterable[Noted]:
        """Where JAX's own clock disagrees with the samples (rows that report events), and
        where the rows' outputs differ."""
        for name in self.last:
            yield from disagreements(entry, name, self.samples[name], self.events[name])
        yield from self.outputs.problems

    def compiled(self) -> dict[str, Any]:
        """Each row's compiled program, as its structure was read (rows that got one)."""
        return {name: run.compiled for name, run in self.programs().items()
                if run.compiled is not None}

    def programs(self) -> dict[str, Any]:
        """Each row's cold run with its traced and lowered program (rows that got them)."""
        return {name: run for name, shape in self.shape.items()
                if (run := shape.program) is not None and run.lowered is not None}

    def outputs_match(self) -> tuple[bool | None, float | None]:
        """Whether every row's output matched the first row's (compared as they came)."""
        return self.outputs.result()

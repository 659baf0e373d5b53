"""The one interleaved runner: every row's cold sample and steady state, samples kept raw.

Rows are run in turn (flat, nested, flat, nested, ...; or the four ``--vmap``
orderings A B C D A B C D ...) so drift on a shared machine hits all of them; a
failing row is kept, not raised, until the end. What a row's cold sample is
(the staged trace/lower/compile/first call of a variant, or one ordering's
whole first call) is its :class:`Subject`'s business; the sampling is shared.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import UserCodeError, innermost_function, user_traceback
from ..model.comparison import PHASES, VariantResult
from ..model.rows import FROM_STAGED
from .lockstep import barrier, same_outcome
from .monitor import Monitor, disagreements
from .outputs import OutputCheck
from .plan import Variant
from .rounds import Rounds, rounds_of
from .stages import (
    STEADY_CEILING_S,
    first_call_run,
    staged_run,
    steady_target,
    steady_timer,
    time_per_call,
    warm_artefacts,
)
from .stops import Checkpoint, Interrupted, Stop
from .structure import jaxpr_text, structure


@dataclass(frozen=True)
class Prepared:
    """A variant ready to measure: its entry function and the call's arguments."""

    variant: Variant
    args: tuple
    kwargs: dict[str, Any]
    #: With ``--in-axes``: the call's own arguments, a batch; ``args`` is one example of it.
    batch: tuple | None = None


@dataclass(frozen=True)
class Cold:
    """One cold sample of a row: the seconds per sample key, and what steady timing needs."""

    times: dict[str, float]
    call: Callable  # the callable whose steady state is timed next, while it is warm
    output: Any
    events: dict[str, float] = field(default_factory=dict)  # JAX's own clock, per key
    facts: dict[str, Any] = field(default_factory=dict)  # counts for the row, latest wins
    artefact: Any = None  # what the row's structure is read from (a ``ColdRun``)


class Subject(Protocol):
    """One row of the sampler: a variant, or an ordering of the batched function."""

    @property
    def args(self) -> tuple: ...

    @property
    def kwargs(self) -> dict[str, Any]: ...

    @property
    def warm_up(self) -> bool: ...  # one untimed call before each steady sample

    def cold(self, monitor: Monitor, check: Checkpoint) -> Cold: ...

    def describe(self, cold: Cold) -> dict[str, Any]: ...


class Sampler:
    """The one interleaved sampler: rows A B C A B C ..., each row's steady state timed
    right after its cold sample, while its program is still cached (the next row's cold
    sample clears it). Raw samples are kept; a failing row is kept, not raised."""

    def __init__(self, subjects: dict[str, Subject], keys: tuple[str, ...],
                 noun: str = "variant"):
        self.subjects = subjects
        self.noun = noun  # what a row is called in a failure message
        self.samples: dict[str, dict[str, list[float]]] = {
            n: {k: [] for k in keys} for n in subjects}
        self.events: dict[str, dict[str, list[float]]] = {n: {} for n in subjects}
        self.shape: dict[str, dict[str, Any]] = {}
        self.last: dict[str, Cold] = {}
        self.errors: dict[str, BaseException] = {}
        self.loops: dict[str, int] = {}
        self.stopped: str | None = None
        #: Rows that need no more rounds (the rule has decided them): skipped like errors.
        self.settled: set[str] = set()
        self.outputs = OutputCheck(len(subjects))

    def measure(self, repeat: int | str | Rounds, number: int | None, monitor: Monitor,
                check: Checkpoint, what: str = "comparison") -> None:
        """Rounds over the rows (``repeat``: a count, ``"auto"`` or :class:`Rounds`, whose
        ``ended`` then says why they ended); Ctrl-C or a deadline (``Stop``) ends them
        early. ``what`` names the part for progress (comparison, orderings, advice).

        ``UserCodeError`` when every row failed and nothing stopped the rounds."""
        rounds = rounds_of(repeat)  # not kept: its rule holds this sampler
        rows, most, r = len(self.subjects), rounds.most, 0
        rounds.start()
        check.report.budget_ends = rounds.ends()
        try:
            with check.mode(python=False):
                while rounds.another(r):
                    for i, name in enumerate(self.subjects):
                        if name in self.errors or name in self.settled:
                            continue
                        check.report.at(what, name, r + 1, most, self.noun,
                                        (r * rows + i, most * rows), rounds.auto)
                        self._measure_once(name, number, monitor, check)
                        check(f"the {name} {self.noun}'s {check.report.run()}")
                    r += 1
        except Stop as stop:
            self.stopped = stop.reason
        except Interrupted:  # Ctrl-C just as a Python stage ended
            self.stopped = f"interrupted by the user during {check.report.position()}"
        if self.errors and not self.last and not self.stopped:
            raise UserCodeError(self.describe_failure(next(iter(self.errors))))

    def _measure_once(self, name: str, number: int | None, monitor: Monitor,
                      check: Checkpoint) -> None:
        run = f"the {name} {self.noun}'s {check.report.run()}"
        barrier(check, run)
        try:
            cold = self.subjects[name].cold(monitor, check)
        except Stop as stop:
            for key, secs in stop.times.items():
                self.samples[name][key].append(secs)
            if stop.artefact is not None and name not in self.shape:  # the stages that ran
                self.shape[name] = self.subjects[name].describe(
                    Cold(stop.times, stop.artefact.jitted, None, artefact=stop.artefact))
            raise
        except Exception as exc:  # the user's code: reported per row
            self.errors[name] = exc
            same_outcome(check, run, exc)
            return
        same_outcome(check, run, None)
        self._record(name, cold)
        check(f"the {name} {self.noun}'s first call")
        check.report.tell("steady state")
        self.samples[name]["execute_s"].append(self._steady(name, cold, number, check))

    def _record(self, name: str, cold: Cold) -> None:
        for key, secs in cold.times.items():
            self.samples[name][key].append(secs)
        for key, secs in cold.events.items():
            self.events[name].setdefault(key, []).append(secs)
        if name not in self.shape:
            self.shape[name] = self.subjects[name].describe(cold)
        self.shape[name].update(cold.facts)
        self.outputs.add(name, cold.output)  # compared now, then dropped: no output is kept
        if cold.artefact is not None:
            cold.artefact.output = None
        self.last[name] = dataclasses.replace(cold, output=None)

    def _steady(self, name: str, cold: Cold, number: int | None, check: Checkpoint) -> float:
        """Seconds per call; the loop count is fixed on the first repeat."""
        s = self.subjects[name]
        timer = steady_timer(cold.call, s.args, s.kwargs, cold.output)
        if s.warm_up:
            timer.timeit(1)
        target = steady_target(cold.times.get("first_call_s", STEADY_CEILING_S))
        self.loops[name], per_call = time_per_call(timer, self.loops.get(name), number, check,
                                                   target)
        return per_call

    def describe_failure(self, name: str) -> str:
        exc = self.errors[name]
        where = innermost_function(exc)
        others = [v for v in self.errors if v != name]
        which = f"the {name} {self.noun}" + (" (and " + ", ".join(others) + ")" if others else "")
        inside = f", in your function `{where}`" if where else ""
        return f"{which} failed{inside}:\n{user_traceback(exc)}"

    def warnings(self, entry: str) -> Iterable[str]:
        """Where JAX's own clock disagrees with the samples (rows that report events)."""
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
                if (run := shape.get("program")) is not None and run.lowered is not None}

    def outputs_match(self) -> tuple[bool | None, float | None]:
        """Whether every row's output matched the first row's (compared as they came)."""
        return self.outputs.result()


@dataclass
class VariantSubject:
    """A prepared variant as a sampler row: its cold first call (the stages read from
    JAX's events inside it), then steady calls. Where JAX gave no events on the first
    repeat, every repeat of the row is a staged run."""

    prepared: Prepared
    warm_up: bool = False  # the cold run's own first call already took the slow path
    staged: bool = False

    @property
    def args(self) -> tuple:
        return self.prepared.args

    @property
    def kwargs(self) -> dict[str, Any]:
        return self.prepared.kwargs

    def cold(self, monitor: Monitor, check: Checkpoint) -> Cold:
        run = (staged_run if self.staged else first_call_run)(
            self.prepared.variant.fn, self.args, self.kwargs, monitor, check,
            self.prepared.variant.jit_options)
        self.staged = run.stages_from == FROM_STAGED
        return Cold(run.times, run.jitted, run.output, run.events,
                    {"stages_from": run.stages_from}, artefact=run)

    def describe(self, cold: Cold) -> dict[str, Any]:
        """Structure counts, read untimed from the program the cold run just built (or,
        for a stopped staged run, from the stages that finished)."""
        run = cold.artefact
        if "first_call_s" in cold.times:  # a finished run: its caches are warm
            run = warm_artefacts(run, self.args, self.kwargs)
        text = jaxpr_text(run.traced.jaxpr) if run.traced is not None else ""
        return structure(run) | {"jaxpr_text": text, "program": run}


def variant_sampler(prepared: dict[str, Prepared]) -> Sampler:
    """The sampler over prepared variants (flat, nested, or advice's sets)."""
    return Sampler({n: VariantSubject(p) for n, p in prepared.items()}, PHASES)


def variant_results(runs: Sampler) -> dict[str, VariantResult]:
    """One ``VariantResult`` per variant the sampler measured (or saw fail)."""
    out = {}
    for name, s in runs.subjects.items():
        assert isinstance(s, VariantSubject)  # variant_sampler's rows
        shape = dict(runs.shape.get(name, {}))
        shape.pop("program", None)
        variant = s.prepared.variant
        traced = bool(runs.samples[name].get("trace_s")) or name in runs.errors
        calls = verified_calls(variant, shape.pop("jit_names", None))
        out[name] = VariantResult(
            name=name,
            samples=runs.samples[name],
            # stopped before its trace finished: the helpers it was to nest, as found
            helpers=tuple(calls) if calls is not None else () if traced else variant.planned,
            helper_calls=calls or {},
            execute_loops=runs.loops.get(name, 0),
            jaxpr_text=shape.pop("jaxpr_text", ""),
            error=runs.describe_failure(name) if name in runs.errors else None,
            notes=_notes(variant, calls) if traced else tuple(variant.notes),
            inline=_inline(variant, calls) if traced else variant.inline,
            **shape,
        )
    return out


def verified_calls(variant: Variant, jit_names: Counter | None) -> dict[str, int] | None:
    """The helpers the variant's program really nests, each with its jit calls as counted
    in the jaxpr (None where no jaxpr was traced): a helper is claimed nested only
    with at least one call, whatever the variant meant to do."""
    if jit_names is None:
        return None
    helpers = variant.plan.helpers
    calls = {n: sum(jit_names[name] for name in helpers[n].jit_names) for n in variant.planned}
    return {n: k for n, k in calls.items() if k}


def _inline(variant: Variant, calls: dict[str, int] | None) -> tuple[str, ...]:
    """Helpers kept inline: refused up front, or planned but absent from the program."""
    return (*variant.inline, *(n for n in variant.planned if n not in (calls or {})))


def _notes(variant: Variant, calls: dict[str, int] | None) -> tuple[str, ...]:
    """The variant's notes, with a reason for every planned helper its program lacks."""
    notes = list(variant.notes)
    for n in variant.planned:
        if n not in (calls or {}) and not any(f"`{n}`" in note for note in notes):
            notes.append(f"`{n}` stays inline: {NO_CALL}")
    return tuple(notes)


#: Why a planned helper that the program holds no jit call of stays inline. (A function
#: re-created on every call of one that runs in the trace is refused up front, with
#: that reason: :func:`~jitmagic.measure.entry.plan_entry`.)
NO_CALL = "no call of it went through a jit while tracing (its program has no jit call of it)"


#: The note of a nested variant that nests nothing (so it is not measured again).
SAME_AS_FLAT = "nothing to nest: the nested program would be the flat one, so it was measured once"


def unmeasured(variant: Variant) -> VariantResult:
    """The nested variant's result where it nests nothing: no samples, its reasons."""
    return VariantResult(name=variant.name, samples={p: [] for p in PHASES}, helpers=(),
                         notes=(*_notes(variant, {}), SAME_AS_FLAT), inline=variant.inline)

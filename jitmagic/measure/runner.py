"""The interleaved runner: every variant's cold run and steady state, samples kept raw.

Variants are run in turn (flat, nested, flat, nested, ...) so drift on a shared
machine hits all of them; a failing variant is kept, not raised, until the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import UserCodeError, innermost_function, user_traceback
from ..model.comparison import PHASES, VariantResult
from .stages import (
    TOLERANCE,
    Checkpoint,
    ColdRun,
    Monitor,
    OutputCheck,
    Stop,
    cold_run,
    disagreements,
    jaxpr_text,
    steady_timer,
    structure,
    time_per_call,
)
from .variants import Variant


@dataclass(frozen=True)
class Prepared:
    """A variant ready to measure: its entry function and the call's arguments."""

    variant: Variant
    args: tuple
    kwargs: dict[str, Any]
    #: The user's entry and the namespace it was found in: attribution and advice
    #: build variants of their own from them.
    fn: Callable | None = None
    namespace: dict[str, Any] | None = None


class VariantRuns:
    """Samples gathered so far, per variant; failures are kept, not raised, until the end."""

    def __init__(self, prepared: dict[str, Prepared]):
        self.prepared = prepared
        self.samples = {v: {p: [] for p in PHASES} for v in prepared}
        self.events = {v: {p: [] for p in TOLERANCE} for v in prepared}
        self.shape: dict[str, dict[str, Any]] = {}
        self.last: dict[str, ColdRun] = {}
        self.errors: dict[str, BaseException] = {}
        self.loops: dict[str, int] = {}
        self.stopped: str | None = None
        self.outputs = OutputCheck(len(prepared))

    def measure(self, repeat: int, number: int | None, monitor: Monitor,
                check: Checkpoint) -> None:
        """Per repeat and variant: a cold run, then steady-state timing while its
        compiled program is still cached (the next variant's cold run clears it)."""
        try:
            for r in range(repeat):
                for name in self.prepared:
                    if name not in self.errors:
                        self._measure_once(name, number, monitor, check)
                        check(f"the {name} variant's run {r + 1} of {repeat}")
        except Stop as stop:
            self.stopped = stop.reason
        if self.errors and not self.last and not self.stopped:
            raise UserCodeError(self.describe_failure(next(iter(self.errors))))

    def _measure_once(self, name: str, number: int | None, monitor: Monitor,
                      check: Checkpoint) -> None:
        p = self.prepared[name]
        try:
            run = cold_run(p.variant.entry, p.args, p.kwargs, monitor, check)
        except Stop as stop:
            for phase, secs in stop.times.items():
                self.samples[name][phase].append(secs)
            raise
        except Exception as exc:  # the user's code: reported per variant
            self.errors[name] = exc
            return
        self._record(name, run)
        timer = steady_timer(run.jitted, p.args, p.kwargs, run.output)
        self.outputs.add(name, run.output)  # compared now, then dropped: no output is kept
        run.output = None
        self.samples[name]["execute_s"].append(self._steady(name, timer, number, check))

    def _record(self, name: str, run: ColdRun) -> None:
        for phase, secs in run.times.items():
            self.samples[name][phase].append(secs)
        for phase, secs in run.events.items():
            self.events[name][phase].append(secs)
        if name not in self.shape:
            self.shape[name] = structure(run) | {"jaxpr_text": jaxpr_text(run.traced.jaxpr)}
        self.last[name] = run

    def _steady(self, name: str, timer: Any, number: int | None, check: Checkpoint) -> float:
        """Seconds per call; the loop count is fixed on the first repeat."""
        self.loops[name], per_call = time_per_call(timer, self.loops.get(name), number, check)
        return per_call

    def describe_failure(self, name: str) -> str:
        exc = self.errors[name]
        where = innermost_function(exc)
        others = [v for v in self.errors if v != name]
        which = f"the {name} variant" + (" (and " + ", ".join(others) + ")" if others else "")
        inside = f", in your function `{where}`" if where else ""
        return f"{which} failed{inside}:\n{user_traceback(exc)}"

    def warnings(self, entry: str) -> Iterable[str]:
        for name in self.last:
            yield from disagreements(entry, name, self.samples[name], self.events[name])
        yield from self.outputs.problems

    def outputs_match(self) -> tuple[bool | None, float | None]:
        return self.outputs.result()

    def results(self) -> dict[str, VariantResult]:
        out = {}
        for name, p in self.prepared.items():
            shape = dict(self.shape.get(name, {}))
            out[name] = VariantResult(
                name=name,
                samples=self.samples[name],
                helpers=p.variant.nested,
                execute_loops=self.loops.get(name, 0),
                jaxpr_text=shape.pop("jaxpr_text", ""),
                error=self.describe_failure(name) if name in self.errors else None,
                notes=tuple(p.variant.notes),
                **shape,
            )
        return out

"""Flat against nested, measured side by side: the pipeline behind the magic and ``compare``.

Variants are interleaved (flat, nested, flat, nested, ...) so that drift on a
shared machine hits both; each keeps every raw sample.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .errors import InputError, UserCodeError, innermost_function, user_traceback
from .measure import (
    CACHE_HIT_EVENT,
    TOLERANCE,
    ColdRun,
    Monitor,
    autorange,
    cold_run,
    compare_outputs,
    disagreements,
    environment,
    frozen_heap,
    jaxpr_text,
    persistent_cache_off,
    steady_timer,
    structure,
)
from .result import PHASES, VARIANTS, Comparison, VariantResult
from .sharding import mesh_env, sharding_report
from .variants import Variant, build_variant, find_helpers


@dataclass(frozen=True)
class Prepared:
    """A variant ready to measure: its entry function and the call's arguments."""

    variant: Variant
    args: tuple
    kwargs: dict[str, Any]


def compare(fn: Callable, /, *args: Any, repeat: int = 3, number: int | None = None,
            nest: Iterable[str] | None = None, attribute: bool = False, advise: bool = False,
            **kwargs: Any) -> Comparison:
    """Measure ``jax.jit(fn)(*args, **kwargs)`` flat and with nested jit on its helpers.

    Helpers are the functions of ``fn``'s own module that it reaches by name.
    ``repeat`` cold runs per variant (medians are reported), ``number`` fixes
    the steady-state loop count (default: auto-ranged), ``nest`` limits the
    helpers that get an added jit. ``attribute`` and ``advise`` add the
    per-helper trace times and the measured advice (:mod:`jitmagic.advice`).
    """
    start = time.perf_counter()
    namespace = getattr(fn, "__globals__", None) or getattr(fn.__wrapped__, "__globals__", {})
    nest = check_nest(nest, fn, namespace)
    prepared = {v: Prepared(build_variant(v, fn, namespace, nest), args, kwargs) for v in VARIANTS}
    result = run_comparison(fn.__name__, prepared, repeat=repeat, number=number, start=start)
    if attribute or advise:
        from .advice import extend

        result = extend(result, fn, args, kwargs, namespace, attribute=attribute, advise=advise,
                        repeat=repeat, number=number)
    return result


def check_nest(nest: Iterable[str] | None, entry: Callable,
               namespace: dict[str, Any]) -> tuple[str, ...] | None:
    """Validate ``--nest`` names against the helpers ``entry`` reaches."""
    if nest is None:
        return None
    nest = tuple(nest)
    known = find_helpers(entry, namespace)
    unknown = [n for n in nest if n not in known]
    if unknown:
        listed = ", ".join(known) or "none found"
        raise InputError(f"--nest names {', '.join(unknown)}, which `{entry.__name__}` does not "
                         f"reach: its helpers are {listed}.")
    return nest


def run_comparison(entry: str, prepared: dict[str, Prepared], *, repeat: int = 3,
                   number: int | None = None, start: float | None = None) -> Comparison:
    """Measure prepared variants, interleaved; raise ``UserCodeError`` if all fail."""
    if repeat < 1 or (number is not None and number < 1):
        raise InputError("repeat and number must be at least 1")
    start = time.perf_counter() if start is None else start
    runs = _Runs(prepared)
    monitor = Monitor()
    with persistent_cache_off() as switched, monitor.listening(), frozen_heap():
        runs.cold(repeat, monitor)
        runs.steady(repeat, number)
    warnings = list(runs.warnings(entry))
    if switched:
        warnings.append("your persistent compilation cache was switched off for the "
                        "measurement and switched back on after")
    if CACHE_HIT_EVENT in monitor.events:
        warnings.append("a compile was served from JAX's persistent cache: compile times "
                        "may be too low")
    match, diff = runs.outputs_match()
    call = next(iter(prepared.values()))
    return Comparison(
        entry=entry,
        variants=runs.results(),
        outputs_match=match,
        max_abs_diff=diff,
        wall_s=time.perf_counter() - start,
        env=environment(mesh_env(call.args, call.kwargs)),
        warnings=tuple(warnings),
        extras=sharding_report(call.args, call.kwargs,
                               {name: run.compiled for name, run in runs.last.items()}),
    )


class _Runs:
    """Samples gathered so far, per variant; failures are kept, not raised, until the end."""

    def __init__(self, prepared: dict[str, Prepared]):
        self.prepared = prepared
        self.samples = {v: {p: [] for p in PHASES} for v in prepared}
        self.events = {v: {p: [] for p in TOLERANCE} for v in prepared}
        self.shape: dict[str, dict[str, Any]] = {}
        self.last: dict[str, ColdRun] = {}
        self.errors: dict[str, BaseException] = {}
        self.loops: dict[str, int] = {}

    def cold(self, repeat: int, monitor: Monitor) -> None:
        for _ in range(repeat):
            for name, p in self.prepared.items():
                if name in self.errors:
                    continue
                try:
                    run = cold_run(p.variant.entry, p.args, p.kwargs, monitor)
                except Exception as exc:  # the user's code: reported per variant
                    self.errors[name] = exc
                    continue
                for phase, secs in run.times.items():
                    self.samples[name][phase].append(secs)
                for phase, secs in run.events.items():
                    self.events[name][phase].append(secs)
                if name not in self.shape:
                    self.shape[name] = structure(run) | {"jaxpr_text": jaxpr_text(run.traced.jaxpr)}
                self.last[name] = run
        if not self.last:
            raise UserCodeError(self.describe_failure(next(iter(self.errors))))

    def steady(self, repeat: int, number: int | None) -> None:
        # Each variant's cold run cleared the caches of those before it: warm all again.
        timers = {name: steady_timer(run.jitted, self.prepared[name].args,
                                     self.prepared[name].kwargs, run.output)
                  for name, run in self.last.items()}
        for timer in timers.values():
            timer.timeit(1)
        for r in range(repeat):
            for name, timer in timers.items():
                if r == 0 and number is None:
                    self.loops[name], per_call = autorange(timer)
                else:
                    n = self.loops.setdefault(name, number or 1)
                    per_call = timer.timeit(n) / n
                self.samples[name]["execute_s"].append(per_call)

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

    def outputs_match(self) -> tuple[bool | None, float | None]:
        if len(self.last) < 2:
            return None, None
        a, b = (run.output for run in self.last.values())
        return compare_outputs(a, b)

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

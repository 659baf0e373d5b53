"""``vmap(jit(f))`` against ``jit(vmap(f))``: four orderings of one function measured side by
side on a batch, then their programs compared. The method: docs/orderings.md."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import jax

from ...errors import user_traceback
from ...model import orderings as model
from ...model.notes import Warned
from ...model.rows import OrderingRow
from ...model.stats.rule import difference
from ...model.stats.witness import clock_for, on
from ...options import Options
from ...options.keywords import options_of
from ..sampling import structure
from ..sampling.conditions import frozen_heap, persistent_cache_off
from ..sampling.monitor import COMPILE_EVENT, Monitor
from ..sampling.reporting import Reporter
from ..sampling.rounds import rounds_for
from ..sampling.runner import ColdSample, Sampler
from ..sampling.stages import timed_stage
from ..sampling.stops import Checkpoint, Stop
from .batches import Batched, prepare_batch
from .run import PartRun


def ordering_functions(fn: Callable, in_axes: Any) -> dict[str, Callable]:
    """Fresh callables for the four orderings (fresh, so no cache is shared between runs)."""
    return {
        "jit(vmap(f))": jax.jit(jax.vmap(fn, in_axes=in_axes)),
        "vmap(jit(f))": jax.vmap(jax.jit(fn), in_axes=in_axes),
        "vmap(f)": jax.vmap(fn, in_axes=in_axes),
        "jit(vmap(jit(f)))": jax.jit(jax.vmap(jax.jit(fn), in_axes=in_axes)),
    }


def _program(name: str, fn: Callable, args: tuple) -> tuple[Any, Any, Any]:
    """(jaxpr, lowered, compiled) of the program an ordering runs (None for ``vmap(f)``)."""
    if name.startswith("jit("):
        traced = cast(jax.stages.Wrapped, fn).trace(*args)  # a "jit(...)" ordering is a jax.jit
        lowered = traced.lower()
        return traced.jaxpr, lowered, lowered.compile()
    closed = jax.make_jaxpr(fn)(*args)
    inner = [e for e in closed.jaxpr.eqns if e.primitive.name == structure.JIT]
    # Only vmap(jit(f)) has a program of its own: the one jit taking exactly the
    # batch's arguments. vmap(f) may show jax.numpy's internal jits (x.mean()): not it.
    if (name != "vmap(jit(f))" or len(inner) != 1
            or list(inner[0].invars) != list(closed.jaxpr.invars)):
        return closed, None, None
    from jax.extend.core import jaxpr_as_fun

    body = inner[0].params["jaxpr"]
    # the inner jit's body takes the batch's leaves, flattened (pytree arguments)
    lowered = jax.jit(jaxpr_as_fun(body)).trace(*jax.tree_util.tree_leaves(args)).lower()
    return closed, lowered, lowered.compile()


def measure_orderings(b: Batched, options: Options, *, entry: str = "f", deadline: float = math.inf,
                      check: Checkpoint | None = None) -> model.Orderings:
    """The four orderings of ``b``, measured side by side; ``stopped`` says why they ended."""
    runs = Sampler({n: OrderingSubject(n, b) for n in model.ORDERINGS}, model.SAMPLE_KEYS,
                   "ordering")
    monitor = Monitor()
    check = check or Checkpoint(deadline=deadline, report=Reporter(entry))
    with (persistent_cache_off(), monitor.listening(), frozen_heap(),
          check.catching_interrupts()):
        runs.measure(rounds_for(options, lambda: _per_call_decided(runs)), options.number,
                     monitor, check, what="orderings")
        hlo, stopped = ({}, runs.stopped) if runs.stopped else _describe_programs(runs, b, check)
    errors = {n: user_traceback(exc) for n, exc in runs.errors.items()}
    match, diff = runs.outputs_match()
    rows = {n: _row(n, runs, _same(hlo, n), errors.get(n)) for n in model.ORDERINGS}
    return model.Orderings(entry=entry, batch=b.batch, in_axes=b.requested, built_batch=b.built,
                           rows=rows, outputs_match=match, max_abs_diff=diff,
                           **runs.outputs.details(), stopped=stopped,
                           warned=(*(Warned("ordering_failed", n, e) for n, e in errors.items()),
                                   *runs.outputs.problems))


def _row(name: str, runs: Sampler, same_program: bool | None, error: str | None) -> OrderingRow:
    """One ordering's record: its samples and the program its shape describes."""
    shape = runs.shape.get(name) or structure.ProgramFacts()
    return OrderingRow(name=name, samples=runs.samples[name],
                       execute_loops=runs.loops.get(name, 0), same_program=same_program,
                       error=error, compile_events=shape.compile_events,
                       jaxpr_eqns=shape.jaxpr_eqns, nested_calls=shape.nested_calls,
                       stablehlo_bytes=shape.stablehlo_bytes,
                       hlo_instructions=shape.hlo_instructions, jaxpr_text=shape.jaxpr_text)


def _per_call_decided(runs: Sampler) -> bool:
    """Whether the toggled orderings' steady calls so far settle which is faster."""
    if runs.errors:
        return True
    rows = [runs.samples[n] for n in model.TOGGLED]
    clock = clock_for(rows, model.EXECUTE)
    a, b = (on(r, model.EXECUTE, clock) for r in rows)
    return difference(b, a).decided


def _describe_programs(runs: Sampler, b: Batched, check: Checkpoint,
                       ) -> tuple[dict[str, list[str] | None], str | None]:
    """Each measured ordering's program, compiled after all timings, and why that stopped."""
    hlo: dict[str, list[str] | None] = {}
    check.report.at("orderings")
    try:
        for n, cold in runs.last.items():
            check.begin(f"comparing programs ({n})")
            hlo[n] = _describe_program(n, cold.call, b.args, runs.shape[n])
    except Stop as stop:
        return hlo, f"{stop.reason}, before the orderings' programs were all compared"
    return hlo, None


@dataclass(frozen=True)
class OrderingSubject:
    """One ordering as a sampler row: its cold first call one interval from cleared caches."""

    name: str
    b: Batched
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    warm_up: bool = True  # each repeat's callables are fresh: one call off the slow path

    @property
    def args(self) -> tuple:
        return self.b.args

    def cold(self, monitor: Monitor, check: Checkpoint) -> ColdSample:
        jax.clear_caches()
        fn = ordering_functions(self.b.fn, self.b.in_axes)[self.name]
        times: dict[str, float] = {}
        out, window = timed_stage(check, "first call", times, "first_call_s",
                                  lambda: jax.block_until_ready(fn(*self.b.args)))
        compiles = [s for t, e, s, _ in monitor.durations
                    if e == COMPILE_EVENT and window.start <= t <= window.end]
        return ColdSample({**times, "compile_event_s": sum(compiles)}, fn, out,
                    compile_events=len(compiles))

    def describe(self, cold: ColdSample) -> structure.ProgramFacts:
        return structure.ProgramFacts()  # the programs are compared after all timings


def _describe_program(name: str, fn: Callable, args: tuple,
                      shape: structure.ProgramFacts) -> list[str] | None:
    """Add the sizes of ``name``'s program to ``shape``; its normalized optimized HLO or None."""
    jaxpr, lowered, compiled = _program(name, fn, args)
    shape.jaxpr_eqns, shape.nested_calls = len(jaxpr.eqns), structure.count_nested_calls(jaxpr)
    shape.jaxpr_text = structure.jaxpr_text(jaxpr)
    if lowered is None:
        return None
    hlo = structure.normalized_hlo(compiled.as_text() or "")
    shape.stablehlo_bytes = len(lowered.as_text().encode())
    shape.hlo_instructions = sum(" = " in line for line in hlo)
    return hlo


def _same(hlo: dict[str, list[str] | None], name: str) -> bool | None:
    """Whether ``name`` runs the same optimized XLA program as the reference ordering."""
    ref, mine = hlo.get(model.REFERENCE), hlo.get(name)
    return None if ref is None or mine is None else ref == mine


def compare_orderings(fn: Callable, /, *args: Any, options: Options | None = None,
                      **kwargs: Any) -> model.Orderings:
    """Measure ``jit(vmap(f))`` against ``vmap(jit(f))`` on a batch (:data:`ORDERINGS_TAKES`)."""
    options, kwargs = options_of("measure.orderings.compare_orderings", kwargs, options,
                                 takes=ORDERINGS_TAKES)  # refused before anything runs
    b = prepare_batch(fn, args, kwargs, batch=options.batch, in_axes=options.in_axes)
    return measure_orderings(b, options, entry=getattr(fn, "__name__", "f"))


#: The options :func:`compare_orderings` uses.
ORDERINGS_TAKES = ("batch", "in_axes", "repeat", "number", "budget")


def add_part(result: Any, run: PartRun) -> Any:
    """The table of parts' entry: the orderings of the batch the pipeline checked, if any."""
    if run.batched is None or result.stopped:
        return result
    measured = measure_orderings(run.batched, run.options, entry=result.entry, check=run.check)
    return dataclasses.replace(result, orderings=measured)

"""Flat against nested, measured side by side, interleaved so that drift hits both: the pipeline
behind the magic and ``compare``; one measurement runs at a time per process."""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import jax

from .. import backends
from .._compat import missing
from ..errors import InputError, UserCodeError
from ..model.comparison import Comparison
from ..model.notes import Warned
from ..model.parts import later_labels
from ..model.progress import Draw
from ..model.rows import FROM_STAGED, VARIANTS
from ..model.stats import witness
from ..model.stats.cold import COMPILE, cold_only
from ..model.stats.rule import difference
from ..options import Options
from ..options.keywords import misspelt_option, split_options
from ..usercode import mine
from .discovery.bindings import one_measurement, seconds_waited
from .parts import add_parts, batches
from .parts.run import PartRun
from .sampling import clocks, fresh, lockstep
from .sampling.monitor import CACHE_HIT_EVENT
from .sampling.reporting import Reporter
from .sampling.rounds import Rounds, rounds_for
from .sampling.runner import Sampler
from .sampling.sharding import mesh_env, sharding_report
from .sampling.stages import environment
from .sampling.stops import Checkpoint, StageInterrupted, Stop
from .sampling.structure import same_compiled
from .variants.build import build_variant
from .variants.entry import binding_swaps, plan_entry, user_globals
from .variants.plan import check_nest
from .variants.preflight import checked_nested
from .variants.rows import Prepared, Staged, nothing_to_nest, variant_results, variant_sampler


def compare(fn: Callable, /, *args: Any, options: Options | None = None,
            progress: Draw | None = None, **kwargs: Any) -> Comparison:
    """Measure ``fn(*args, **kwargs)`` flat and nested, as :func:`jitmagic.compare` says."""
    options, kwargs = split_options(kwargs, options)
    if options.sweep is not None:
        raise InputError("compare measures one call: for a sweep write "
                         "jitmagic.sweep(name, values, fn, *args, ...)")
    with one_measurement(), mine(options.mine):  # another thread's first: its wait is untimed
        start = clocks.wall()
        check = checkpoint("", options, start, progress)  # measure names the entry
        try:
            with option_hints():
                with check.finding_helpers():
                    prepared = variants_of(fn, args, kwargs, nest=options.nest,
                                           in_axes=options.in_axes)
                return measure_prepared(prepared, options, start=start, check=check)
        except Stop as stop:  # in the discovery trace: there is nothing to show
            raise KeyboardInterrupt(stop.reason) from None


def checkpoint(entry: str, options: Options, start: float,
               progress: Draw | None = None) -> Checkpoint:
    """The one checkpoint of a measurement: its ``--timeout`` deadline, its progress."""
    draw = getattr(progress, "when_quiet", None) if options.quiet else progress
    deadline = start + options.timeout if options.timeout else math.inf
    return Checkpoint(deadline=deadline, report=Reporter(entry, start, draw))


@contextlib.contextmanager
def option_hints() -> Iterator[None]:
    """Add ``did you mean `repeat=`?`` to a ``TypeError`` for a misspelt option."""
    try:
        yield
    except UserCodeError as exc:
        hint = misspelt_option(str(exc))
        if hint is None:
            raise
        raise UserCodeError(f"{exc}\nHint: {hint}") from exc.__cause__


def variants_of(fn: Callable, args: tuple, kwargs: dict[str, Any], *,
                name: str | None = None, nest: Iterable[str] | None = None,
                bindings: dict[str, Any] | None = None,
                in_axes: Any = None) -> dict[str, Prepared]:
    """The flat and nested variants of ``fn(*args, **kwargs)``, ready to measure."""
    swaps = None
    if bindings:
        namespace = user_globals(fn)
        if namespace is None:
            raise InputError(f"sweep: cannot tell which module's globals `{fn!r}` reads: "
                             f"sweep a function defined in a module or cell.")
        swaps = binding_swaps(namespace, bindings)
    example = args if in_axes is None else batches.one_example(args, in_axes)
    with one_measurement():  # the discovery traces swap too (and read what places hold)
        plan = plan_entry(fn, example, kwargs, name, nest, swaps)
        if plan.args is not example:  # took its arguments apart (eqx, NNX): as they are
            plan, example = plan_entry(fn, args, kwargs, name, nest, swaps), args
        nest = check_nest(nest, plan)
        batch = None if example is args else args
        return {v: Prepared(build_variant(v, plan, nest), plan.args, plan.kwargs, batch=batch)
                for v in VARIANTS}


def measure_prepared(prepared: dict[str, Prepared], options: Options, *,
                     start: float | None = None, check: Checkpoint | None = None) -> Comparison:
    """:func:`run_comparison`, then the parts the options ask for, under one ``check``."""
    with one_measurement():
        options, warned = this_jax(options)
        if options.target is not None:
            from .target import measure_for_target

            result = measure_for_target(prepared, options, start=start or clocks.wall(),
                                        check=check or checkpoint("", options, clocks.wall()))
        else:
            result = _measured(prepared, options, start=start, check=check)
        waited = seconds_waited()
    warned += (Warned("waited", waited),) if waited else ()
    return dataclasses.replace(result, warned=(*result.warned, *warned)) if warned else result


def this_jax(options: Options) -> tuple[Options, tuple[Warned, ...]]:
    """``options`` less the parts whose private JAX names this JAX lacks, each with a warning."""
    gone = missing()
    core = [n.name for n in gone if n.option is None]
    if core:
        raise InputError(JAX_MOVED.format(names=", ".join(core), version=jax.__version__))
    refused = {n.option: n.name for n in gone if n.option and getattr(options, n.option)}
    off: dict[str, Any] = dict.fromkeys(refused, False)
    return dataclasses.replace(options, why=False, **off) if refused else options, tuple(
        Warned("part_moved", option.replace("_", "-"), name, jax.__version__)
        for option, name in refused.items())


#: Where JAX no longer has a private name every measurement needs.
JAX_MOVED = ("jitmagic needs JAX's private {names}, which JAX {version} does not have: "
             "install a jitmagic release made for this JAX (pip install -U jitmagic), or "
             "a JAX jitmagic was tested with (jax==0.10.2)")


def _measured(prepared: dict[str, Prepared], options: Options, *,
              start: float | None = None, check: Checkpoint | None = None) -> Comparison:
    entry = prepared["flat"].variant.plan.name  # as the user wrote it
    start = clocks.wall() if start is None else start
    check = lockstep.shared_by_processes(check or checkpoint(entry, options, start), options)
    check.report.entry = check.report.entry or entry
    check.report.parts = later_labels(options)
    flat = prepared["flat"]
    batched = None
    if options.vmap:
        call = flat.args if flat.batch is None else flat.batch
        batched = batches.prepare_batch(flat.variant.fn, call, flat.kwargs,
                                        batch=options.batch, in_axes=options.in_axes)
    with check.catching_interrupts(), check.mode(python=False):
        prepared = {**prepared, "nested": _checked(prepared["nested"], check)}
        lockstep.agree_variants(prepared["nested"].variant.planned, lockstep.lockstep_of(check))
        built: dict[str, Staged] = {}
        result = run_comparison(entry, prepared, options, start=start, check=check,
                                built=built)
        if flat.batch is not None:
            result = dataclasses.replace(result, warned=(*result.warned, Warned("one_example")))
        whole = add_parts(result, PartRun(prepared, built, batched, options, check))
        if whole is result:
            return result
        return dataclasses.replace(whole, whole_s=clocks.wall() - start)


def _checked(nested: Prepared, check: Checkpoint) -> Prepared:
    """``nested`` with the helpers that cannot run under a jit of their own inline."""
    if check.due():
        return nested
    if nested.variant.planned:  # untimed traces; a leak's search can take seconds
        check.report.tell("checking the nested variant leaks nothing")
    try:
        with check.mode(python=True):
            variant = checked_nested(nested.variant, nested.variant.plan)
    except StageInterrupted:
        return nested
    return dataclasses.replace(nested, variant=variant)


class FirstCalls:
    """What ``-r auto`` asks of the first calls so far: whether they settle flat vs nested."""

    def __init__(self, runs: Sampler, step: lockstep.Lockstep = lockstep.SINGLE):
        self.runs, self.step = runs, step
        self.clock = witness.WALL

    def decided(self) -> bool:
        """Whether the samples settle it (one row, or a failing one: yes)."""
        runs = self.runs
        # gathered before deciding anything: every process takes part in the exchange
        rows = lockstep.slowest_rows(
            self.step, "the first calls so far",
            {name: {k: runs.samples[name].get(k, []) for k in DECIDING_KEYS}
             for name in runs.subjects})
        if len(runs.subjects) < 2 or runs.errors:
            return True
        self.clock = witness.clock_for([rows[name] for name in VARIANTS])
        platform = backends.running().platform
        return difference(*(witness.on(cold_only(rows[name], platform), witness.FIRST_CALL,
                                       self.clock) for name in VARIANTS)).decided

    def busy(self) -> bool:
        """Whether the rule last read CPU time: the machine was busy."""
        return self.clock == witness.CPU


#: What -r auto's rule reads of each row: the first calls and compiles on both clocks and
#: the wait (a run whose compile was not cold is left out: on a compiler that keeps work
#: -r auto takes another run in its place).
DECIDING_KEYS = (witness.FIRST_CALL, witness.cpu_key(witness.FIRST_CALL), witness.WAIT,
                 COMPILE, witness.cpu_key(COMPILE))


def run_comparison(entry: str, prepared: dict[str, Prepared], options: Options | None = None,
                   *, start: float | None = None, check: Checkpoint | None = None,
                   built: dict[str, Staged] | None = None) -> Comparison:
    """Measure prepared variants, interleaved, until Ctrl-C or ``timeout``."""
    options = options or Options()
    # a property JAX adds to its Config at run time, unseen by mypy
    if jax.config.jax_disable_jit:  # type: ignore[attr-defined]
        raise InputError("jax.disable_jit() is active, so nothing would be compiled: run "
                         "%jitcompare outside the `with jax.disable_jit():` block.")
    start = clocks.wall() if start is None else start
    check = check or checkpoint(entry, options, start)
    same = "nested" in prepared and not prepared["nested"].variant.planned
    runs = variant_sampler({k: p for k, p in prepared.items() if not (same and k == "nested")})
    runs.takers = fresh.in_fresh_processes(runs.subjects)
    runs.settled = fresh.skipped(list(runs.subjects))
    rounds, cache_said = _sampled(runs, options, check)
    if built is not None:
        built.update({n: Staged(r.traced, r.lowered) for n, r in runs.programs().items()})
    match, diff = (None, None) if same else runs.outputs_match()  # same: one program ran
    step = lockstep.lockstep_of(check)
    variants = lockstep.merged(variant_results(runs), step)  # every process's samples
    staged = [Warned("staged_run", name) for name, v in variants.items()
              if v.stages_from == FROM_STAGED]
    if same:
        variants["nested"] = nothing_to_nest(prepared["nested"].variant)
    return Comparison(
        entry=entry, variants=variants, outputs_match=match, max_abs_diff=diff,
        **runs.outputs.details(), wall_s=clocks.wall() - start,
        **_placement(prepared, runs, step),
        warned=(*runs.warnings(entry), *cache_said, *staged), stopped=runs.stopped,
        repeats_ended=rounds.ended, budget_s=rounds.budget_s,
        same_compiled=None if same else same_compiled(runs.shape))


def _placement(prepared: dict[str, Prepared], runs: Sampler,
               step: lockstep.Lockstep) -> dict[str, Any]:
    """The comparison's ``env`` and ``sharding``, read once ``wall_s`` is taken."""
    call = next(iter(prepared.values()))
    env = environment({**mesh_env(call.args, call.kwargs), **step.env(),
                       **fresh.where_sampled(runs.takers)})
    ticks = step.gather("the CPU clock's step", env["cpu_tick_s"])  # the coarsest judges
    env["cpu_tick_s"] = max((t for t in ticks if t is not None), default=None)
    return {"env": env, "sharding": sharding_report(call.args, call.kwargs, runs.compiled())}


def _sampled(runs: Sampler, options: Options, check: Checkpoint) -> tuple[Rounds, list[Warned]]:
    """``runs`` measured in ``options``' rounds: (the rounds, what to say of the cache)."""
    first_calls = FirstCalls(runs, lockstep.lockstep_of(check))
    rounds = rounds_for(options, first_calls.decided, lockstep=lockstep.lockstep_of(check),
                        busy=first_calls.busy)
    monitor, switched = runs.measure_cold(rounds, options.number, check)
    return rounds, [*([Warned("cache_switched_off")] if switched else []),
                    *([Warned("cache_served")] if CACHE_HIT_EVENT in monitor.events else [])]

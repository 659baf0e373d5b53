"""Flat against nested, measured side by side: the pipeline behind the magic and ``compare``.

Variants are interleaved (flat, nested, nested, flat, ...) so that drift on a
shared machine hits both; each keeps every raw sample.

One measurement runs at a time per process (:func:`~.discovery.bindings.one_measurement`):
its variants swap the process's own helpers, so a second thread's ``compare`` (or
magic, or sweep) waits for the first to finish, and its result says how long it waited.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from typing import Any

import jax

from .. import backends
from .._compat import missing
from ..errors import InputError
from ..errors import UserCodeError
from ..model.comparison import Comparison
from ..model.notes import Note
from ..model.notes import Noted
from ..model.notes import Warned
from ..model.parts import later_labels
from ..model.progress import Draw
from ..model.rows import FROM_STAGED
from ..model.rows import VARIANTS
from ..model.rows import VariantResult
from ..model.stats.cold import COMPILE
from ..model.stats.cold import cold_only
from ..model.stats.rule import difference
from ..model.stats.witness import CPU
from ..model.stats.witness import FIRST_CALL
from ..model.stats.witness import WAIT
from ..model.stats.witness import WALL
from ..model.stats.witness import clock_for
from ..model.stats.witness import cpu_key
from ..model.stats.witness import on
from ..options import Options
from ..options.keywords import misspelt_option
from ..options.keywords import split_options
from ..usercode import mine
from .discovery.bindings import one_measurement
from .discovery.bindings import seconds_waited
from .parts import add_parts
from .parts import batches
from .parts.run import PartRun
from .sampling import clocks
from .sampling.conditions import frozen_heap
from .sampling.conditions import persistent_cache_off
from .sampling.lockstep import SINGLE
from .sampling.lockstep import Lockstep
from .sampling.lockstep import agree_variants
from .sampling.lockstep import lockstep_of
from .sampling.lockstep import merged
from .sampling.lockstep import shared_by_processes
from .sampling.lockstep import slowest_rows
from .sampling.monitor import CACHE_HIT_EVENT
from .sampling.monitor import Monitor
from .sampling.reporting import Reporter
from .sampling.rounds import Rounds
from .sampling.rounds import rounds_for
from .sampling.runner import Sampler
from .sampling.sharding import mesh_env
from .sampling.sharding import sharding_report
from .sampling.stages import environment
from .sampling.stops import Checkpoint
from .sampling.stops import StageInterrupted
from .sampling.stops import Stop
from .sampling.structure import same_compiled
from .variants.build import build_variant
from .variants.entry import binding_swaps
from .variants.entry import plan_entry
from .variants.entry import user_globals
from .variants.nest_names import check_nest
from .variants.plan import Plan
from .variants.preflight import checked_nested
from .variants.rows import Prepared
from .variants.rows import Staged
from .variants.rows import nothing_to_nest
from .variants.rows import variant_results
from .variants.rows import variant_sampler


def compare(fn: Callable, /, *args: Any, options: Options | None = None,
            progress: Draw | None = None, **kwargs: Any) -> Comparison:
    """Measure ``jax.jit(fn)(*args, **kwargs)`` flat and with nested jit on its helpers.

    ``fn`` is any callable (a function, a jitted function, ``jax.grad(loss)``, a
    partial, a bound method, a callable module). Its helpers are the functions of
    yours that one plain trace of it really calls (methods, local modules,
    bodies of ``lax`` loops and transformations included). The option keywords
    are :class:`~jitmagic.options.Options`' fields, the command line's options by
    their Python names: ``repeat`` cold runs per variant (medians are reported),
    ``number`` fixes the steady-state loop count (default: auto-ranged), ``nest``
    limits the helpers that get an added
    jit (``["layer"]`` or ``"layer"``), ``timeout`` (seconds) stops after the
    stage that runs past it. ``vmap`` (implied by ``batch`` or ``in_axes``) also
    measures ``jit(vmap(f))`` against ``vmap(jit(f))`` (into ``orderings``); ``attribute`` and
    ``advise`` add per-helper trace times and measured advice; ``cache`` a second start with
    a warm persistent compilation cache (into ``second_start``). ``options`` is a
    ready :class:`~jitmagic.options.Options` the keywords then override.
    ``progress``, where given, gets each :class:`~jitmagic.model.progress.Progress`
    (``jitmagic.compare`` draws it on stderr).
    Every other keyword goes to ``fn``: an entry keyword argument named like an
    option (or ``options``, ``progress``) cannot be passed here: wrap the entry. For a
    sweep, call :func:`jitmagic.sweep`.
    """
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
    """The one checkpoint of a measurement: its ``--timeout`` deadline, its progress
    (with ``--quiet``, only what ``progress`` keeps even then: its ``when_quiet``)."""
    draw = getattr(progress, "when_quiet", None) if options.quiet else progress
    return Checkpoint(deadline=_deadline(start, options.timeout),
                      report=Reporter(entry, start, draw))


@contextlib.contextmanager
def option_hints() -> Iterator[None]:
    """Add ``did you mean `repeat=`?`` to the user's ``TypeError`` for a keyword that
    looks like a misspelt option (it went to their function)."""
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
    """The flat and nested variants of ``fn(*args, **kwargs)``, ready to measure: the
    entry planned (:func:`plan_entry`, one discovery trace), then both variants built.

    ``bindings`` (a sweep's value) are set as globals of ``fn``'s module while each
    variant runs, and put back after. With ``in_axes`` the call's arguments are a batch:
    the variants run on one example of it (index 0 along each mapped axis, so code
    written for one example works), the batch is kept for the orderings."""
    swaps = binding_swaps(globals_of(fn), bindings) if bindings else None
    example = args if in_axes is None else batches.one_example(args, in_axes)
    with one_measurement():  # the discovery traces swap too (and read what places hold)
        plan = plan_entry(fn, example, kwargs, name, nest, swaps)
        if plan.args is not example:  # took its arguments apart (eqx, NNX): as they are
            plan, example = plan_entry(fn, args, kwargs, name, nest, swaps), args
        return _variants_of_plan(plan, nest, batch=None if example is args else args)


def _variants_of_plan(plan: Plan, nest: Iterable[str] | None = None,
                      batch: tuple | None = None) -> dict[str, Prepared]:
    """The flat and nested variants of a planned entry, ready to measure (``batch``: the
    call's own arguments where ``plan.args`` is one example of them)."""
    nest = check_nest(nest, plan)
    return {v: Prepared(build_variant(v, plan, nest), plan.args, plan.kwargs, batch=batch)
            for v in VARIANTS}


def globals_of(fn: Callable) -> dict[str, Any]:
    """The namespace a sweep's global is set in: that of the user's function behind ``fn``."""
    found = user_globals(fn)
    if found is None:
        raise InputError(f"sweep: cannot tell which module's globals `{fn!r}` reads: sweep a "
                         f"function defined in a module or cell.")
    return found


def measure_prepared(prepared: dict[str, Prepared], options: Options, *,
                     start: float | None = None, check: Checkpoint | None = None) -> Comparison:
    """``run_comparison``, then the parts the options ask for, in the table of parts'
    order (:data:`jitmagic.model.parts.PARTS`, run by :func:`.parts.add_parts`): with
    ``vmap`` the orderings of the flat entry on a batch (the batch checked here, before
    anything is timed), the per-helper attribution and advice, the big captured
    constants passed as arguments (where a variant captured them), the second start
    (``cache``), XLA's passes (``xla``), the per-line tables (``lines``). All of it runs
    under one ``check`` (one Ctrl-C, one ``timeout``): once anything stops, nothing
    after it starts and the result says where it stopped. ``options.sweep`` is the
    caller's to run (:mod:`jitmagic.measure.sweep`): one call is measured. Where it had
    to wait for another thread's measurement, a warning says so."""
    with one_measurement():
        result = _measure_prepared(prepared, options, start=start, check=check)
        waited = seconds_waited()
    if not waited:
        return result
    return dataclasses.replace(result, warned=(*result.warned, Warned("waited", waited)))


def this_jax(options: Options) -> tuple[Options, tuple[Warned, ...]]:
    """``options`` less the parts whose private JAX names this JAX lacks, and a warning
    for each part refused; an :class:`InputError` saying what to do where a name every
    measurement needs is gone (a JAX newer than jitmagic knows moved it)."""
    gone = missing()
    core = [n.name for n in gone if n.option is None]
    if core:
        raise InputError(JAX_MOVED.format(names=", ".join(core), version=jax.__version__))
    refused = {n.option: n.name for n in gone if n.option and getattr(options, n.option)}
    if not refused:
        return options, ()
    off: dict[str, Any] = dict.fromkeys(refused, False)
    return dataclasses.replace(options, why=False, **off), tuple(
        Warned("part_moved", option.replace("_", "-"), name, jax.__version__)
        for option, name in refused.items())


#: Where JAX no longer has a private name every measurement needs.
JAX_MOVED = ("jitmagic needs JAX's private {names}, which JAX {version} does not have: "
             "install a jitmagic release made for this JAX (pip install -U jitmagic), or "
             "a JAX jitmagic was tested with (jax==0.10.2)")


def _measure_prepared(prepared: dict[str, Prepared], options: Options, *,
                      start: float | None = None, check: Checkpoint | None = None,
                      ) -> Comparison:
    options, refused = this_jax(options)
    if options.target is not None:  # compiled for a TPU this machine lacks, never run
        from .target import measure_for_target

        result = measure_for_target(prepared, options, start=start or clocks.wall(),
                                    check=check or checkpoint("", options, clocks.wall()))
    else:
        result = _measured(prepared, options, start=start, check=check)
    if not refused:
        return result
    return dataclasses.replace(result, warned=(*result.warned, *refused))


def _measured(prepared: dict[str, Prepared], options: Options, *,
              start: float | None = None, check: Checkpoint | None = None) -> Comparison:
    entry = prepared["flat"].variant.plan.name  # as the user wrote it
    start = clocks.wall() if start is None else start
    check = shared_by_processes(check or checkpoint(entry, options, start), options)
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
        agree_variants(prepared["nested"].variant.planned, lockstep_of(check))
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
    """``nested`` with the helpers that cannot run under a jit of their own inline
    (:mod:`~jitmagic.measure.variants.preflight`); unchecked once a stop is due (the first stage
    then stops), or when Ctrl-C lands inside the check."""
    if check.due():
        return nested
    if nested.variant.planned:  # untimed traces; a leak's search can take seconds
        check.report.tell(CHECKING)
    try:
        with check.mode(python=True):
            variant = checked_nested(nested.variant, nested.variant.plan)
    except StageInterrupted:
        return nested
    return dataclasses.replace(nested, variant=variant)


#: The progress while the nested variant is traced under JAX's leak checker.
CHECKING = "checking the nested variant leaks nothing"


class FirstCalls:
    """What ``-r auto`` asks of a comparison's first calls so far: whether they settle
    flat against nested (by the one rule, on the clock the report will decide on: CPU
    time on a busy machine), and whether that clock was CPU time (the machine was busy,
    so more rounds may be taken). Under several processes the rule is asked of the
    slowest process's runs, run by run (the figures the report shows), the same on every
    process."""

    def __init__(self, runs: Sampler, step: Lockstep = SINGLE):
        self.runs, self.step = runs, step
        self.clock = WALL

    def decided(self) -> bool:
        """Whether the samples settle it; with one row, or a failing one, there is
        nothing more to learn."""
        runs = self.runs
        # gathered before deciding anything: every process takes part in the exchange
        rows = slowest_rows(self.step, "the first calls so far",
                            {name: {k: runs.samples[name].get(k, []) for k in DECIDING_KEYS}
                             for name in runs.subjects})
        if len(runs.subjects) < 2 or runs.errors:
            return True
        self.clock = clock_for([rows[name] for name in VARIANTS])
        platform = backends.running().platform
        return difference(*(on(cold_only(rows[name], platform), FIRST_CALL, self.clock)
                            for name in VARIANTS)).decided

    def busy(self) -> bool:
        """Whether the rule last read CPU time: the machine was busy."""
        return self.clock == CPU


#: What -r auto's rule reads of each row: the first calls on both clocks, the wait, and
#: the compiles on both clocks (a run whose compile was not cold is left out, so that on
#: a compiler that keeps work -r auto takes another run in its place).
DECIDING_KEYS = (FIRST_CALL, cpu_key(FIRST_CALL), WAIT, COMPILE, cpu_key(COMPILE))


def _deadline(start: float, timeout: float | None) -> float:
    """The ``clocks.wall()`` value past which measuring stops."""
    return start + timeout if timeout else math.inf


def run_comparison(entry: str, prepared: dict[str, Prepared], options: Options | None = None,
                   *, start: float | None = None, check: Checkpoint | None = None,
                   built: dict[str, Staged] | None = None) -> Comparison:
    """Measure prepared variants, interleaved; raise ``UserCodeError`` if all fail.

    Ctrl-C or ``timeout`` (seconds from ``start``) end the measurement at the
    next stage boundary; the result then holds what was measured and says why.
    Of ``options`` this uses ``repeat``, ``budget``, ``number`` and ``timeout`` (the
    deadline of a new checkpoint; ``check`` is the measurement's own, where it has one).
    ``built``, where given, gets each variant's traced and lowered program (read untimed
    after its first cold run), for ``--lines`` to reuse.
    """
    options = options or Options()
    _refuse_disabled_jit()
    start = clocks.wall() if start is None else start
    check = check or checkpoint(entry, options, start)
    same, runs = _to_sample(prepared)
    rounds, cache_said = _sampled(runs, options, check)
    if built is not None:
        built.update({n: Staged(r.traced, r.lowered) for n, r in runs.programs().items()})
    warnings: list[Noted] = [*runs.warnings(entry), *cache_said]
    match, diff = (None, None) if same else runs.outputs_match()  # same: one program ran
    variants, staged = _variant_rows(prepared, runs, lockstep_of(check), same)
    return Comparison(
        entry=entry,
        variants=variants,
        outputs_match=match,
        max_abs_diff=diff,
        **runs.outputs.details(),
        wall_s=clocks.wall() - start,
        **_placement(prepared, runs, lockstep_of(check)),
        warned=(*warnings, *staged),
        stopped=runs.stopped,
        repeats_ended=rounds.ended,
        budget_s=rounds.budget_s,
        same_compiled=None if same else same_compiled(runs.shape),
    )


def _to_sample(prepared: dict[str, Prepared]) -> tuple[bool, Sampler]:
    """Whether there is nothing to nest (the nested variant planned no helper, so its
    program is the flat one), and the sampler of the variants to run: without the
    nested one then, as measuring the one program twice would tell nothing."""
    same = "nested" in prepared and not prepared["nested"].variant.planned
    runs = variant_sampler({k: p for k, p in prepared.items() if not (same and k == "nested")})
    return same, runs


def _refuse_disabled_jit() -> None:
    """Raise :class:`InputError` under ``jax.disable_jit()``: nothing would be compiled,
    so there would be no compile to time."""
    # a property JAX adds to its Config at run time, unseen by mypy (jax.config.read
    # refuses it: it has a context manager)
    if jax.config.jax_disable_jit:  # type: ignore[attr-defined]
        raise InputError("jax.disable_jit() is active, so nothing would be compiled: run "
                         "%jitcompare outside the `with jax.disable_jit():` block.")


def _variant_rows(prepared: dict[str, Prepared], runs: Sampler, step: Lockstep,
                  same: bool) -> tuple[dict[str, VariantResult], list[Warned]]:
    """Each variant's row (every process's samples merged in, the same on every process)
    and the note said of each whose stages were timed in a separate staged run. With
    nothing to nest (``same``) the nested row is the flat program's, measured once."""
    variants = merged(variant_results(runs), step)
    staged = [Warned("staged_run", name) for name, v in variants.items()
              if v.stages_from == FROM_STAGED]
    if same:
        variants["nested"] = nothing_to_nest(prepared["nested"].variant)
    return variants, staged


def _placement(prepared: dict[str, Prepared], runs: Sampler,
               step: Lockstep) -> dict[str, Any]:
    """The comparison's ``env`` (the call's mesh, every process's machine, the coarsest
    of their CPU clocks' steps) and ``sharding`` (how the compiled programs place the
    call's arguments), read once ``wall_s`` is taken: no part of the measurement's time."""
    call = next(iter(prepared.values()))
    env = environment({**mesh_env(call.args, call.kwargs), **step.env()})
    ticks = step.gather("the CPU clock's step", env["cpu_tick_s"])  # the coarsest judges
    env["cpu_tick_s"] = max((t for t in ticks if t is not None), default=None)
    return {"env": env, "sharding": sharding_report(call.args, call.kwargs, runs.compiled())}


def _sampled(runs: Sampler, options: Options, check: Checkpoint) -> tuple[Rounds, list[Note]]:
    """``runs`` measured in the rounds ``options`` ask for (with ``-r auto``, until the
    first calls settle flat against nested), with the persistent cache off, JAX's events
    listened to and the heap frozen: (the rounds, what to say of the user's cache)."""
    first_calls = FirstCalls(runs, lockstep_of(check))
    rounds = rounds_for(options, first_calls.decided, lockstep=lockstep_of(check),
                        busy=first_calls.busy)
    monitor = Monitor()
    with (persistent_cache_off() as switched, monitor.listening(), frozen_heap(),
          check.catching_interrupts()):
        runs.measure(rounds, options.number, monitor, check)
    return rounds, _cache_warnings(switched, monitor)


def _cache_warnings(switched: bool, monitor: Monitor) -> list[Note]:
    """What the report says of the user's persistent cache around the measurement."""
    return [*([Warned("cache_switched_off")] if switched else []),
            *([Warned("cache_served")] if CACHE_HIT_EVENT in monitor.events else [])]

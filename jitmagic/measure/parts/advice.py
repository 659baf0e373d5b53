"""Which helpers the flat trace spends its time in (the attribution: a timed trace over a scratch
copy of the namespace), and which are worth a jit of their own (the advice: each nested alone
against flat, the significant ones together). The method: docs/advice.md."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections import Counter, defaultdict
from collections.abc import Callable
from statistics import median
from typing import Any, NamedTuple

import jax

from ...errors import UserCodeError, user_traceback
from ...model.advice import Advice, Candidate
from ...model.attribution import Attribution, HelperTime
from ...model.comparison import Comparison
from ...model.notes import Warned
from ...model.progress import WARM_UP, Draw
from ...model.stats.rule import FASTER, difference
from ...model.stats.witness import FIRST_CALL, Clock, clock_for, on
from ...options import Options
from ...options.keywords import options_of
from ..discovery.bindings import one_measurement
from ..discovery.found import functions_of_all
from ..sampling import clocks
from ..sampling.conditions import frozen_heap, paused_gc, persistent_cache_off
from ..sampling.monitor import Monitor
from ..sampling.reporting import Reporter
from ..sampling.rounds import budget_of, rounds_for
from ..sampling.runner import Sampler
from ..sampling.stages import staged_run
from ..sampling.stops import Checkpoint, Stop
from ..variants.build import make_variant, nest_only
from ..variants.entry import plan_entry
from ..variants.inner_jit import unjitted
from ..variants.plan import Plan
from ..variants.rows import Prepared, variant_sampler
from ..variants.trampoline import copy_function, route
from .run import PartRun


class CallClock:
    """Times calls of wrapped functions with an explicit stack: own and inclusive seconds."""

    def __init__(self) -> None:
        self.stack: list[list[float]] = []  # per active call: [start, seconds in callees]
        self.calls: Counter[str] = Counter()
        self.active: Counter[str] = Counter()
        self.inclusive: defaultdict[str, float] = defaultdict(float)
        self.own: defaultdict[str, float] = defaultdict(float)

    def wrap(self, name: str, fn: Callable) -> Callable:
        """``fn`` with its calls timed under ``name`` (its signature stays visible to jit)."""

        @functools.wraps(fn)
        def timed(*args, **kwargs):
            self._enter(name)
            try:
                return fn(*args, **kwargs)
            finally:
                self._leave(name)

        return timed

    def _enter(self, name: str) -> None:
        self.calls[name] += 1
        self.active[name] += 1
        self.stack.append([clocks.wall(), 0.0])

    def _leave(self, name: str) -> None:
        start, callees = self.stack.pop()
        elapsed = clocks.wall() - start
        self.own[name] += elapsed - callees
        if self.stack:
            self.stack[-1][1] += elapsed
        self.active[name] -= 1
        if not self.active[name]:  # a recursive helper's inner calls are inside this one
            self.inclusive[name] += elapsed


def attribute_call(plan: Plan, args: tuple, kwargs: dict[str, Any],
                   check: Checkpoint | None = None) -> Attribution:
    """Trace the flat variant of the planned entry once, cold, timing each helper."""
    check = check or Checkpoint()
    clock = CallClock()
    name = plan.name
    timed = make_variant("timed", plan, lambda h, v: unjitted(v, lambda f: clock.wrap(h.name, f)),
                         swaps=unbound_timers(plan, clock))
    timed_entry = clock.wrap(_ENTRY, timed.fn)
    opts = plan.jit_options
    check.report.at("attribution")
    check.begin("tracing")
    jax.clear_caches()
    try:
        with frozen_heap(), check.running("tracing", python=True), paused_gc():
            t0 = clocks.wall()
            jax.jit(timed_entry, **opts).trace(*args, **kwargs)
            t1 = clocks.wall()
    except Stop:
        raise
    except Exception as exc:  # the user's code
        raise UserCodeError("the flat variant failed while attributing its trace:\n"
                            + user_traceback(exc)) from None
    helpers = sorted((HelperTime(h, clock.calls[h], clock.inclusive[h], clock.own[h])
                      for h in clock.calls if h != _ENTRY),
                     key=lambda h: (-h.inclusive_s, h.helper))
    return Attribution(name, t1 - t0, clock.inclusive[_ENTRY], clock.own[_ENTRY], tuple(helpers))


def unbound_timers(plan: Plan, clock: CallClock) -> list[tuple[Any, Any, Any]]:
    """Swaps timing, at their function objects, the helpers no binding reaches."""
    unbound = [h for h in plan.helpers.values() if not h.bindings]
    live = functions_of_all(h.code for h in unbound)
    return [route(fn, clock.wrap(h.name, copy_function(fn)))
            for h in unbound for fn in live[h.code]]


def attribute(fn: Callable, /, *args: Any, **kwargs: Any) -> Attribution:
    """Where the flat trace of ``jax.jit(fn)(*args, **kwargs)`` spends its time, per helper."""
    _, kwargs = options_of("attribute", kwargs, takes=())
    with one_measurement():  # it swaps the process's own helpers, as compare does
        plan = plan_entry(fn, args, kwargs)
        return attribute_call(plan, plan.args, plan.kwargs)


#: The entry's key in the clock: not a valid Python name, so no helper can have it.
_ENTRY = "<entry>"


#: At most this many helpers are tried one by one (the heaviest by inclusive trace time).
MAX_CANDIDATES = 8
#: After a comparison, ``-r auto``'s advice takes at most this many times its wall time.
ADVICE_SHARE = 2.0
#: Labels of the variants measured side by side (a candidate's is ``only(name)``).
FLAT, ALL, SET = "flat", "all nested", "recommended set"
#: The comparison's own flat runs, which "nest every helper" is told against.
COMPARED = "flat, as compared"


#: A comparison's cold start samples by label, telling "nest every helper" unmeasured.
Shared = dict[str, dict[str, list[float]]]


def advise_call(plan: Plan, args: tuple, kwargs: dict[str, Any], *, options: Options,
                check: Checkpoint, attribution: Attribution | None = None,
                shared: Shared | None = None) -> Advice:
    """Which helpers of the planned entry save cold-start time nested alone, against flat."""
    start = clocks.wall()
    shared = shared or {}
    attribution = attribution or attribute_call(plan, args, kwargs, check)
    rounds = _Rounds(plan, (args, kwargs), options, check, warm_up=not shared)
    tried = [h for h in attribution.helpers if h.calls >= 2][:MAX_CANDIDATES]
    everything = tuple(h.helper for h in attribution.helpers)
    # the advice's own rows (nest-everything only where the comparison's is not shared),
    # then each candidate nested alone
    own: dict[str, tuple[str, ...]] = {FLAT: (), **({} if ALL in shared else {ALL: everything})}
    sets = {**own, **{only(h.helper): (h.helper,) for h in tried}}
    first = _measure(rounds, sets)
    ranked = tuple(sorted((_candidate(h.helper, h.calls, first.cold, first.execute,
                                      first.errors) for h in tried),
                          key=lambda c: (c.saving_s is None, -(c.saving_s or 0.0), c.helper)))
    recommended = tuple(c.helper for c in ranked if c.significant)
    rec_label, set_cold, stopped = _set_round(rounds, own, sets, recommended, first)
    return Advice(
        flat_cold_s=median(first.cold[FLAT]),  # what the ranked savings are measured against
        ranked=ranked, recommended=recommended,
        noise_s=max((c.noise_s for c in ranked if c.noise_s is not None), default=None),
        **_set_savings(set_cold, rec_label, shared, first.clock), everything=everything,
        not_tried=tuple(h.helper for h in attribution.helpers if h not in tried),
        runs=max(map(len, first.cold.values()), default=0),  # the runs the most-run set got
        wall_s=clocks.wall() - start, stopped=stopped, clock=first.clock)


@dataclasses.dataclass(frozen=True)
class _Rounds:
    """What every round of one advice is measured with (``warm_up``: an untimed run first)."""

    plan: Plan
    call: tuple[tuple, dict[str, Any]]
    options: Options
    check: Checkpoint
    warm_up: bool


class _Measured(NamedTuple):
    """One round: cold and execute seconds per set, failures, why it stopped, the cold clock."""

    cold: dict[str, list[float]]
    execute: dict[str, list[float]]
    errors: dict[str, str]
    stopped: str | None
    clock: Clock


def _set_round(rounds: _Rounds, own: dict[str, tuple[str, ...]], sets: dict[str, tuple],
               recommended: tuple[str, ...], first: _Measured,
               ) -> tuple[str | None, dict[str, list[float]], str | None]:
    """The recommended set's row: (its label or None, its cold samples, why it stopped)."""
    label = next((label for label, nest in sets.items()
                  if recommended and set(nest) == set(recommended)), None)
    if label is not None or not recommended or first.stopped:
        return label, first.cold, first.stopped
    try:
        second = _measure(rounds, {**own, SET: recommended}, first.clock)
    except Stop as stop:
        return None, first.cold, stop.reason
    return SET, second.cold, second.stopped


def _set_savings(cold: dict[str, list[float]], label: str | None, shared: Shared,
                 clock: Clock) -> dict[str, Any]:
    """The savings of the recommended set (``label``) and of nesting every helper, judged."""
    rec_saving, rec_kind = _judged(cold, label)
    if ALL in shared:  # the comparison's own flat and nested runs, side by side
        cold = {FLAT: on(shared[COMPARED], FIRST_CALL, clock),
                ALL: on(shared[ALL], FIRST_CALL, clock)}
    all_saving, all_kind = _judged(cold, ALL)
    return {"recommended_saving_s": rec_saving, "recommended_kind": rec_kind,
            "all_nested_saving_s": all_saving, "all_nested_kind": all_kind}


def advise(fn: Callable, /, *args: Any, options: Options | None = None,
           progress: Draw | None = None, **kwargs: Any) -> Advice:
    """Which helpers of ``fn`` are worth their own ``jax.jit`` for ``fn(*args, **kwargs)``
    (option keywords: :data:`ADVISE_TAKES`; the others go to ``fn``)."""
    options, kwargs = options_of("advise", kwargs, options, takes=ADVISE_TAKES)
    # advice compares spreads: Options refuses fewer repeats than give one, before any timing
    options = dataclasses.replace(options, advise=True)
    with one_measurement():  # it swaps the process's own helpers, as compare does
        plan = plan_entry(fn, args, kwargs)
        check = Checkpoint(report=Reporter(plan.name, draw=progress))
        with check.catching_interrupts():
            return advise_call(plan, plan.args, plan.kwargs, options=options, check=check)


#: The options :func:`advise` uses.
ADVISE_TAKES = ("repeat", "number", "budget", "quiet")


def _advice_options(result: Comparison, options: Options) -> Options:
    """``options`` with the budget at most :data:`ADVICE_SHARE` times the comparison's."""
    if result.wall_s != result.wall_s:  # NaN: not timed
        return options
    return dataclasses.replace(options, budget=min(budget_of(options),
                                                    ADVICE_SHARE * result.wall_s))


def _measure(rounds: _Rounds, sets: dict[str, tuple[str, ...]],
             clock: Clock | None = None) -> _Measured:
    """The sets measured side by side, interleaved; ``Stop`` where no flat cold start was."""
    prepared = {label: Prepared(nest_only(rounds.plan, nest, label), *rounds.call)
                for label, nest in sets.items()}
    runs, check, options = variant_sampler(prepared), rounds.check, rounds.options
    monitor = Monitor()  # JAX's stage events: without them every run would be staged
    with persistent_cache_off(), monitor.listening(), frozen_heap(), \
            check.catching_interrupts():
        check.report.at("advice")
        if rounds.warm_up:
            check.begin(WARM_UP)
            with check.mode(python=False):
                _warm_up(prepared[FLAT])
        runs.measure(rounds_for(options, lambda: _settled(runs, clock)), options.number,
                     monitor, check, what="advice")
    if FLAT in runs.errors:
        raise UserCodeError(runs.describe_failure(FLAT))
    used = _clock(runs, clock)
    cold = {label: on(runs.samples[label], FIRST_CALL, used) for label in sets}
    execute = {label: runs.samples[label]["execute_s"] for label in sets}
    if not cold[FLAT]:
        raise Stop(runs.stopped or "stopped before a flat cold start was measured")
    errors = {label: runs.describe_failure(label) for label in runs.errors}
    return _Measured(cold, execute, errors, runs.stopped, used)


def _clock(runs: Sampler, clock: Clock | None) -> Clock:
    """``clock``, or the one the cold starts so far call for (CPU time on a busy machine)."""
    return clock or clock_for([s for s in runs.samples.values() if s.get(FIRST_CALL)])


def _settled(runs: Sampler, clock: Clock | None) -> bool:
    """Whether the rule has decided every candidate against flat; the decided are marked settled."""
    now = _clock(runs, clock)
    for label in runs.subjects:
        if label.startswith("only(") and difference(
                on(runs.samples[FLAT], FIRST_CALL, now),
                on(runs.samples[label], FIRST_CALL, now)).decided:
            runs.settled.add(label)
    return all(label in runs.settled for label in runs.subjects
               if label.startswith("only("))


def only(helper: str) -> str:
    """The label of the variant that nests ``helper`` alone."""
    return f"only({helper})"


def _warm_up(flat: Prepared) -> None:
    """One untimed cold run, so that JAX's lazy set-up does not pass for a saving."""
    with contextlib.suppress(Exception):  # a failing flat variant is reported by the rounds
        staged_run(flat.variant.fn, flat.args, flat.kwargs, Monitor(),
                   opts=flat.variant.jit_options)


def _candidate(helper: str, calls: int, cold: dict[str, list[float]],
               execute: dict[str, list[float]], errors: dict[str, str]) -> Candidate:
    label = only(helper)
    if label in errors:
        return Candidate(helper, calls, None, None, None, False, errors[label])
    saving = _saving(cold, label)
    if len(cold[FLAT]) < 2 or len(cold[label]) < 2:  # measuring stopped early: not judged
        return Candidate(helper, calls, saving, None, None, False)
    d = difference(cold[FLAT], cold[label])
    steady = execute[label] and execute[FLAT]
    change = median(execute[label]) - median(execute[FLAT]) if steady else None
    judged = difference(execute[FLAT], execute[label]).significant \
        if len(execute[FLAT]) >= 2 and len(execute[label]) >= 2 else None
    # the saving the rule needs at this spread and number of repeats
    noise = None if d.noise is None else median(cold[FLAT]) * (1 - 1 / d.noise)
    return Candidate(helper, calls, saving, change, noise, d.kind == FASTER,
                     execute_significant=judged)


def _judged(cold: dict[str, list[float]], label: str | None) -> tuple[float | None, str | None]:
    """(flat's median cold start minus ``label``'s, the rule's kind); None: not measured."""
    if label is None or (saving := _saving(cold, label)) is None:
        return None, None
    return saving, difference(cold[FLAT], cold[label]).kind


def _saving(cold: dict[str, list[float]], label: str) -> float | None:
    """Flat's median cold start minus ``label``'s; ``None`` where that variant failed."""
    return median(cold[FLAT]) - median(cold[label]) if cold.get(label) else None


def add_part(result: Comparison, run: PartRun) -> Comparison:
    """The table of parts' entry: ``result`` with its ``attribution`` and/or ``advice``."""
    options, flat = run.options, run.flat
    if not (options.attribute or options.advise):
        return result
    if not result.flat.ok:
        return dataclasses.replace(result, warned=(*result.warned, Warned("advice_flat_failed")))
    call = (flat.variant.plan, flat.args, flat.kwargs)
    # nested nests every helper (no --nest) and was measured: it is "nest everything"
    everything = options.advise and options.nest is None and result.nested.samples["first_call_s"]
    shared = {COMPARED: dict(result.flat.samples), ALL: dict(result.nested.samples)} \
        if everything else {}
    try:
        attribution = attribute_call(*call, run.check)
        found = advise_call(*call, options=_advice_options(result, options),
                            attribution=attribution, check=run.check,
                            shared=shared) if options.advise else None
    except Stop as stop:
        return dataclasses.replace(result, stopped=stop.reason, warned=(
            *result.warned, Warned("advice_stopped", stop.reason)))
    return dataclasses.replace(result, attribution=attribution if options.attribute else None,
                               advice=found)

"""Which helpers the flat trace spends its time in: calls, inclusive and own seconds.

JAX's monitoring events time only the top-level trace: a helper's tracing is
folded into it. To split it up, the flat variant is built once more over a
scratch copy of the namespace in which the entry and every helper are wrapped
in a timer, and traced from cleared caches with the collector paused. The
timers keep an explicit call stack, so a helper's *own* time excludes the
helpers it calls, and its *inclusive* time counts a recursive helper once.
The wrappers live only in that scratch namespace: nothing is left behind.

The measured trace (``jax.jit(entry).trace(...)``, timed from outside) splits
into every helper's own time plus the entry's own time. The entry's own time
holds its own lines of code (``entry_code_s``) and JAX's work around the entry
(``jax_s``: setting up the tracers, finishing the jaxpr: 2-5% of a large
trace here), which no helper can be charged with.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import jax

from ...errors import UserCodeError
from ...errors import user_traceback
from ...model.attribution import Attribution
from ...model.attribution import HelperTime
from ...options.keywords import options_of
from ..discovery.bindings import one_measurement
from ..discovery.found import functions_of_all
from ..sampling import clocks
from ..sampling.conditions import frozen_heap
from ..sampling.conditions import paused_gc
from ..sampling.stops import Checkpoint
from ..sampling.stops import Stop
from ..variants.build import make_variant
from ..variants.entry import plan_entry
from ..variants.inner_jit import unjitted
from ..variants.plan import Plan
from ..variants.trampoline import copy_function
from ..variants.trampoline import route


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
    """Trace the flat variant of the planned entry once, cold, timing each helper.

    ``check`` (the measurement's checkpoint) is asked before the trace; Ctrl-C
    during it raises ``Stop``.
    """
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
    """Swaps timing, at their function objects, the helpers no binding reaches: a Flax
    linen submodule's ``__call__`` (linen wraps it in its class, and ``apply`` runs a
    clone, so no name of ours is looked up), a function a library primitive holds. Their
    calls go through a trampoline (:func:`~jitmagic.measure.variants.trampoline.route`)
    to a timed copy, so that they get rows of their own and their callers' own time
    excludes them."""
    unbound = [h for h in plan.helpers.values() if not h.bindings]
    live = functions_of_all(h.code for h in unbound)
    return [route(fn, clock.wrap(h.name, copy_function(fn)))
            for h in unbound for fn in live[h.code]]


def attribute(fn: Callable, /, *args: Any, **kwargs: Any) -> Attribution:
    """Where the flat trace of ``jax.jit(fn)(*args, **kwargs)`` spends its time, per helper
    (one trace: it takes no options)."""
    _, kwargs = options_of("attribute", kwargs, takes=())
    with one_measurement():  # it swaps the process's own helpers, as compare does
        plan = plan_entry(fn, args, kwargs)
        return attribute_call(plan, plan.args, plan.kwargs)


#: The entry's key in the clock: not a valid Python name, so no helper can have it.
_ENTRY = "<entry>"

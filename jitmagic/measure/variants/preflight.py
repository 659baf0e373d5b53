"""The nested variant traced and lowered once, untimed, before anything is measured.

Some helpers cannot run under a jit of their own although the whole program
traces: a numpyro model under effect handlers keeps traced values in the
handlers' stack (``UnexpectedTracerError``), and other library code does the
like. Where the nested trace fails and the flat one did not, the helper whose
jit was tracing is kept inline, with the error as its reason, and the variant
is built again: a comparison never loses its nested variant to a helper that
cannot be nested.
"""

from __future__ import annotations

import contextlib
import re
import traceback

import jax

from .build import nest_only
from .inner_jit import HELPER_TAG
from .plan import Plan, Variant

#: How JAX names the function whose trace a leaked tracer escaped (``checking_leaks``'s
#: message, and ``UnexpectedTracerError``'s).
_LEAKED_IN = re.compile(r"(?:while tracing the function|when the value leaked was) (\S+) at")


def checked_nested(variant: Variant, plan: Plan) -> Variant:
    """``variant`` (the nested one), or one with the helpers whose own jit breaks the
    trace inline: one that leaks tracers, or (where the flat program traces) one under
    whose jit the trace fails, each with its reason."""
    refused: dict[str, str] = {}
    for _ in range(len(variant.planned)):
        error = trace_error(variant)
        found = _culprit(error, variant) if error is not None else None
        if found is None:
            break
        culprit, refused[culprit] = found
        variant = nest_only(plan, [n for n in variant.planned if n not in refused],
                            variant.name, refused)
    return variant


def trace_error(variant: Variant) -> BaseException | None:
    """What tracing the variant raises, from cleared caches, with JAX's leak checker on
    (a leaked tracer otherwise surfaces only in a later trace); None: it traces.

    A trace that succeeds is lowered too, untimed: the warm-up that puts the process's
    one-time costs of lowering (a library's first lowering rules, as Pallas's) on no
    timed run, where they would land on whichever variant runs first."""
    plan = variant.plan
    jax.clear_caches()  # a warm trace cache would hide a helper's body
    try:
        with jax.checking_leaks():
            traced = jax.jit(variant.fn, **variant.jit_options).trace(*plan.args, **plan.kwargs)
    except Exception as exc:  # noqa: BLE001 (any failure is the user's code: reported later)
        return exc
    with contextlib.suppress(Exception):  # a lowering error shows in the timed run itself
        traced.lower()
    return None


def _culprit(error: BaseException, variant: Variant) -> tuple[str, str] | None:
    """(the planned helper to keep inline, why): for a leak, the helper whose jit raised
    it or the one JAX's message names; for another failure where the flat program
    traces, the innermost planned helper on the error's traceback whose jit raised it."""
    helpers = variant.plan.helpers
    if _is_leak(error):
        tagged = getattr(error, HELPER_TAG, None)
        leaked = _LEAKED_IN.search(str(error))
        named = next((n for n in variant.planned
                      if leaked and leaked.group(1) in helpers[n].jit_names), None)
        culprit = tagged if tagged in variant.planned else named
        return None if culprit is None else (culprit, LEAKS)
    if not variant.plan.flat_traces:
        return None  # the program fails flat too: the user's error, reported as it is
    codes = [f.f_code for f, _ in traceback.walk_tb(error.__traceback__)]
    on_stack = [n for n in variant.planned if helpers[n].code in codes]
    innermost = max(on_stack, key=lambda n: codes.index(helpers[n].code), default=None)
    if innermost is None:
        return None
    return innermost, (f"under a jit of its own its trace fails where the flat program "
                       f"traces ({type(error).__name__}: {_first_line(error)}), so it runs "
                       f"inline")


#: Why a helper that leaks tracers under its own jit runs inline.
LEAKS = ("under a jit of its own it leaks traced values: it keeps them outside what it "
         "returns (in a global or a list, or an effect handler's stack, as a numpyro model "
         "does), so it runs inline")


def _first_line(error: BaseException, width: int = 100) -> str:
    line = (str(error).strip().splitlines() or [""])[0]
    return line if len(line) <= width else line[: width - 1] + "…"


def _is_leak(error: BaseException) -> bool:
    """A tracer leak: JAX's error for a leaked tracer used later, or anything JAX's leak
    checker raises (its own message builder has been seen to fail with IndexError)."""
    if isinstance(error, jax.errors.UnexpectedTracerError):
        return True
    frames = traceback.extract_tb(error.__traceback__)
    return any(f.name in _LEAK_CHECK for f in frames) or str(error).startswith("Leaked trace")


#: JAX's functions that check for leaked tracers at the end of a trace.
_LEAK_CHECK = ("ensure_no_leaks", "leaked_tracer_error")

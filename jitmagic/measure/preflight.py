"""The nested variant traced once, untimed, before anything is measured.

Some helpers cannot run under a jit of their own although the whole program
traces: a numpyro model under effect handlers keeps traced values in the
handlers' stack (``UnexpectedTracerError``), and other library code does the
like. Where the nested trace fails and the flat one did not, the helper whose
jit was tracing is kept inline, with the error as its reason, and the variant
is built again: a comparison never loses its nested variant to a helper that
cannot be nested.
"""

from __future__ import annotations

import re
import traceback

import jax

from .inner_jit import HELPER_TAG
from .plan import Plan, Variant
from .variants import nest_only

#: How JAX names the function whose trace a leaked tracer escaped (``checking_leaks``'s
#: message, and ``UnexpectedTracerError``'s).
_LEAKED_IN = re.compile(r"(?:while tracing the function|when the value leaked was) (\S+) at")


def checked_nested(variant: Variant, plan: Plan) -> Variant:
    """``variant`` (the nested one), or one with the helpers that leak tracers inline."""
    refused: dict[str, str] = {}
    for _ in range(len(variant.planned)):
        error = trace_error(variant)
        culprit = _culprit(error, variant) if error is not None else None
        if culprit is None:
            break
        refused[culprit] = ("under a jit of its own it leaks traced values (it keeps them "
                            "outside what it returns, as a numpyro model under effect "
                            "handlers does), so it runs inline")
        variant = nest_only(plan, [n for n in variant.planned if n not in refused],
                            variant.name, refused)
    return variant


def trace_error(variant: Variant) -> BaseException | None:
    """What tracing the variant raises, from cleared caches, with JAX's leak checker on
    (a leaked tracer otherwise surfaces only in a later trace); None: it traces."""
    plan = variant.plan
    assert plan is not None
    jax.clear_caches()  # a warm trace cache would hide a helper's body
    try:
        with jax.checking_leaks():
            jax.jit(variant.fn, **variant.jit_options).trace(*plan.args, **plan.kwargs)
    except Exception as exc:  # noqa: BLE001 (any failure is the user's code: reported later)
        return exc
    return None


def _culprit(error: BaseException, variant: Variant) -> str | None:
    """The planned helper a leak was found in: the one whose jit raised it, or the one
    JAX's message names (a leaked tracer used after its jit returned)."""
    if not _is_leak(error):
        return None
    tagged = getattr(error, HELPER_TAG, None)
    if tagged in variant.planned:
        return tagged
    leaked = _LEAKED_IN.search(str(error))
    if leaked is None:
        return None
    helpers = variant.plan.helpers
    return next((n for n in variant.planned if leaked.group(1) in helpers[n].jit_names), None)


def _is_leak(error: BaseException) -> bool:
    """A tracer leak: JAX's error for a leaked tracer used later, or anything JAX's leak
    checker raises (its own message builder has been seen to fail with IndexError)."""
    if isinstance(error, jax.errors.UnexpectedTracerError):
        return True
    frames = traceback.extract_tb(error.__traceback__)
    return any(f.name in _LEAK_CHECK for f in frames) or str(error).startswith("Leaked trace")


#: JAX's functions that check for leaked tracers at the end of a trace.
_LEAK_CHECK = ("ensure_no_leaks", "leaked_tracer_error")

"""The nested variant traced and lowered once, untimed, before anything is measured: a helper whose
jit leaks tracers (:class:`LeakSearch`) or fails where flat does not stays inline, with why."""

from __future__ import annotations

import contextlib
import re
import traceback
from typing import Any

import jax

from ...model.notes import Inline, Note, mentions
from ...model.stats.units import cut_to
from ..discovery.discover import trace_once
from ..sampling.stops import first_line
from ..sampling.structure import count_equations, count_nested_calls
from .build import build_variant, nest_only
from .inner_jit import HELPER_TAG, STATIC_TAG
from .leaks import leak_mechanism, library_of
from .plan import Plan, Variant
from .rows import helper_jit_calls, not_nested

#: How JAX's leak messages name the function whose trace a leaked tracer escaped.
_LEAKED_IN = re.compile(r"(?:while tracing the function|when the value leaked was) (\S+) at")
#: A variant's traced program and its lowering (None where lowering failed).
Programs = tuple[Any, Any]


def checked_nested(variant: Variant, plan: Plan) -> Variant:
    """``variant`` with each helper whose jit leaks or fails the trace kept inline."""
    refused: dict[str, Note] = {}
    search = LeakSearch(plan, variant.name, refused)  # its traces hold as more are refused
    traced = None  # the current variant's programs, once it traces
    for _ in range(len(variant.planned)):
        traced, error = _programs(variant)
        if error is None:
            break
        found = search.culprit(variant.planned, error) if _is_leak(error) \
            else _failing(error, variant)
        if found is None:
            break
        culprit, refused[culprit] = found
        variant, traced = nest_only(plan, [n for n in variant.planned if n not in refused],
                                    variant.name, refused), None
    if traced is None and variant.planned:  # it leaks flat too (or is not traced yet)
        traced = _programs(variant, checking=False)[0]
    return one_program(variant, traced, refused)


def one_program(variant: Variant, traced: Programs | None,
                refused: dict[str, Note] | None = None) -> Variant:
    """``variant``, or where its program is the flat one, the variant with nothing nested."""
    plan = variant.plan
    if not variant.planned or traced is None:
        return variant
    calls = helper_jit_calls(traced[0].jaxpr, plan.helpers, variant.planned)
    if any(calls[n] for n in variant.planned):
        return variant
    flat = _programs(build_variant("flat", plan), checking=False)[0]
    if flat is None or not _same_programs(traced, flat):
        return variant
    said = [note for note in variant.notes if note not in plan.notes]
    reasons = [not_nested(n, plan.helpers[n]) for n in variant.planned
               if not any(mentions(note, n) for note in said)]
    same = nest_only(plan, (), variant.name, refused)
    same.notes += [*reasons, *(note for note in said if note not in same.notes)]
    first = (*same.inline, *(r.helper for r in reasons))  # in the order said
    same.inline = (*first, *(n for n in variant.planned if n not in first))
    return same


def _same_programs(nested: Programs, flat: Programs) -> bool:
    """As many equations and jit calls, and (where both lowered) the same StableHLO."""
    (traced, lowered), (flat_traced, flat_lowered) = nested, flat
    same = all(count(traced.jaxpr) == count(flat_traced.jaxpr)
               for count in (count_equations, count_nested_calls))
    if lowered is None or flat_lowered is None:
        return same
    return same and lowered.as_text() == flat_lowered.as_text()


def _programs(variant: Variant, lower: bool = True, checking: bool = True,
              ) -> tuple[Programs | None, BaseException | None]:
    """((traced, lowered or None), None), or (None, what tracing raised); lowered untimed."""
    plan = variant.plan
    traced, error = trace_once(variant.fn, plan.args, plan.kwargs, variant.jit_options,
                               checking)
    if error is not None:
        return None, error
    lowered = None
    if lower:
        with contextlib.suppress(Exception):  # a lowering error shows in the timed run itself
            lowered = traced.lower()
    return (traced, lowered), None


def _failing(error: BaseException, variant: Variant) -> tuple[str, Note] | None:
    """(the innermost planned helper on the traceback, why) for a failure that is not a leak."""
    if not variant.plan.flat_traces:
        return None  # the program fails flat too: the user's error, reported as it is
    helpers = variant.plan.helpers
    codes = [f.f_code for f, _ in traceback.walk_tb(error.__traceback__)]
    on_stack = [n for n in variant.planned if helpers[n].code in codes]
    innermost = max(on_stack, key=lambda n: codes.index(helpers[n].code), default=None)
    if innermost is None:
        return None
    said = cut_to(first_line(error), 100)
    return innermost, Inline("inline_trace_fails", type(error).__name__, said)


class LeakSearch:
    """Which planned helper's jit leaks, in at most ``2 * ceil(log2 n) + 3`` traces."""

    def __init__(self, plan: Plan, label: str, refused: dict[str, Note]):
        self.plan, self.label, self.refused = plan, label, refused
        self._leaks: dict[tuple[str, ...], BaseException | None] = {}
        self._flat_leaks: bool | None = None

    def culprit(self, planned: tuple[str, ...],
                error: BaseException) -> tuple[str, Note] | None:
        """(the helper to keep inline, why) for a leak of ``planned`` (None: flat's)."""
        if not planned or not self._caused_by_nesting(error, planned):
            return None
        if len(planned) == 1:
            return planned[0], self._reason(error, planned[0])
        guess = self._named(error, planned)
        alone = self.leak((guess,)) if guess else None
        if guess and alone is not None:
            return guess, self._reason(alone, guess)
        end, leaked = self._shortest_leaking(planned, (), error)
        last, before = planned[end - 1], planned[: end - 1]
        alone = self.leak((last,)) if before else leaked
        if alone is not None:
            return last, self._reason(alone, last)
        start, leaked = self._shortest_leaking(before, (last,), leaked)
        return last, self._reason(leaked, last, before[start - 1])

    def _reason(self, error: BaseException, culprit: str, partner: str | None = None) -> Note:
        """Why ``culprit`` runs inline: its static output's hold, else the leak's mechanism."""
        if getattr(error, HELPER_TAG, None) == culprit and \
                (held := getattr(error, STATIC_TAG, None)) is not None:
            return Inline("inline_leaks", held, None, partner)
        library = library_of(self.plan.helpers[culprit])
        return Inline("inline_leaks", None, leak_mechanism(error, library), partner)

    def leak(self, nest: tuple[str, ...]) -> BaseException | None:
        """The leak nesting only ``nest`` causes (None: none, flat's own, or another failure)."""
        if nest not in self._leaks:
            error = self._trace_error(nest)
            caused = error is not None and _is_leak(error) \
                and self._caused_by_nesting(error, nest)
            self._leaks[nest] = error if caused else None
        return self._leaks[nest]

    def _trace_error(self, nest: tuple[str, ...]) -> BaseException | None:
        return _programs(nest_only(self.plan, nest, self.label, self.refused), lower=False)[1]

    def _shortest_leaking(self, helpers: tuple[str, ...], extra: tuple[str, ...],
                          error: BaseException) -> tuple[int, BaseException]:
        """The least ``k`` such that ``helpers[:k]`` and ``extra`` leak, and that leak."""
        low, high = 0, len(helpers)  # low's prefix does not leak, high's does
        while high - low > 1:
            mid = (low + high) // 2
            found = self.leak((*helpers[:mid], *extra))
            if found is None:
                low = mid
            else:
                high, error = mid, found
        return high, error

    def _named(self, error: BaseException, planned: tuple[str, ...]) -> str | None:
        """The planned helper whose jit raised the leak, or the one JAX's message names."""
        tagged = getattr(error, HELPER_TAG, None)
        if tagged in planned:
            return tagged
        leaked = _LEAKED_IN.search(str(error))
        return next((n for n in planned
                     if leaked and leaked.group(1) in self.plan.helpers[n].jit_names), None)

    def _caused_by_nesting(self, error: BaseException, nest: tuple[str, ...]) -> bool:
        """Whether a leak names a nested helper's jit, or flat does not leak."""
        if self._named(error, nest) is not None:
            return True
        if self._flat_leaks is None:
            flat = self._trace_error(())
            self._flat_leaks = flat is not None and _is_leak(flat)
        return not self._flat_leaks


def _is_leak(error: BaseException) -> bool:
    """A tracer leak: JAX's error for one used later, or what its leak checker raises."""
    if isinstance(error, jax.errors.UnexpectedTracerError):
        return True
    frames = traceback.extract_tb(error.__traceback__)  # JAX's own kept: trace_once
    return any(f.name in ("ensure_no_leaks", "leaked_tracer_error") for f in frames) \
        or str(error).startswith("Leaked trace")

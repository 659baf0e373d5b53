"""Numbers and names as a person reads them: seconds, ratios, growth, labels."""

from __future__ import annotations

from collections.abc import Sequence

from ..model.stats.rule import INCONCLUSIVE, SAME, Difference, median, spread
from ..model.stats.units import fmt_ratio, fmt_s
from .blocks import Cell
from .verdicts import OUTCOME

#: The part of a first call outside trace, lower and compile: dispatch, execution, Python.
REST_LABEL = "rest of first call"
#: Its table row: the median run's rest, not a median of rests (so rows need not add up).
REST_ROW = f"{REST_LABEL}, median run"
PHASE_LABELS = {
    "trace_s": "trace",
    "lower_s": "lower",
    "compile_s": "XLA compile",
    "first_call_s": "first call",
    "execute_s": "execute (per call)",
}
#: How reports label each structure figure (:data:`jitmagic.model.rows.STRUCTURE`).
FIGURE_LABELS = {
    "jaxpr_eqns": "jaxpr equations",
    "jaxpr_eqns_top": "jaxpr equations (top level)",
    "nested_calls": "nested jit calls",
    "library_calls": "  of them JAX's or libraries' own",
    "stablehlo_bytes": "StableHLO bytes",
    "stablehlo_calls": "call ops in StableHLO",
    "compiled_calls": "call ops after XLA",
    "compiled_ops": "instructions after XLA",
    "compiled_flops": "flops (XLA's cost analysis)",
    "compiled_bytes_accessed": "bytes accessed (XLA's cost analysis)",
    "compiled_temp_bytes": "temporary bytes (XLA's memory analysis)",
    "compiled_peak_bytes": "peak bytes (XLA's memory analysis)",
    "constants": "array constants (captured)",
    "constant_bytes": "constant bytes (captured)",
}


def marked_ratio(ratio: float, d: Difference) -> str:
    """``3.5×``, ``1.26× inconclusive``, ``1.3× (one run)``: marked as the main table marks."""
    shown = fmt_ratio(ratio)
    if shown == "—" or d.significant:
        return shown
    if not d.enough_data:
        return f"{shown} (one run)"
    return f"{shown} {OUTCOME[d.kind]}" if d.kind in (INCONCLUSIVE, SAME) else shown


def verdict_ratio(d: Difference) -> str:
    """:func:`marked_ratio` of the rule's own ratio."""
    return marked_ratio(d.ratio, d)


def medians_of(counts: dict[str, int], noun: str) -> str:
    """``medians of 3 cold runs [min–max]``, ``1 cold run``, ``no cold run finished``."""
    n = max(counts.values(), default=0)
    if n == 0:
        return f"no {noun} finished"
    if len(set(counts.values())) > 1:
        each = " and ".join(f"{k} {name}" for name, k in counts.items())
        return f"medians of {each} {noun}s [min–max]"
    return f"1 {noun}" if n == 1 else f"medians of {n} {noun}s [min–max]"


def unmarked_clock(some_cpu: bool, where: str) -> str:
    """A title's clock for seconds that name none: ``wall time`` (``where a row does not…``)."""
    return f"wall time where a {where} does not say CPU time" if some_cpu else "wall time"


def fmt_count(x: int | None) -> str:
    """``1,024``; ``—`` where it was not counted."""
    return "—" if x is None else f"{x:,}"


def fmt_exponent(name: str, k: float | None) -> str:
    """``~ N^1.0`` (or ``—`` when it could not be fitted)."""
    return "—" if k is None else f"~ {name}^{k:.1f}".replace("-0.0", "0.0")


def median_cell(xs: list[float], *marks: str) -> Cell:
    """The median of ``xs`` (``—`` where none), its min–max and ``marks`` (a clock) under it."""
    return Cell(fmt_s(median(xs)), ", ".join(x for x in (fmt_spread(xs), *marks) if x))


def fmt_spread(xs: Sequence[float]) -> str:
    """``1.2 ms–1.5 ms``, the samples' min–max (empty where there is no spread to show)."""
    rng = spread(xs)
    return "" if rng is None or rng[0] == rng[1] else f"{fmt_s(rng[0])}–{fmt_s(rng[1])}"

"""Text and HTML of a sweep: its trend first, then every value behind ``-v`` or a click."""

from __future__ import annotations

from ..model.rows import PHASES, VARIANTS
from ..model.stats.units import fmt_s
from ..model.stats.witness import CPU
from ..model.sweep import Sweep, Trend, clock_of, exponents, medians, trends, unchanged
from .blocks import (
    MAX_ITEMS,
    Block,
    Code,
    Heading,
    Html,
    Image,
    Para,
    Pre,
    Table,
    answer_first,
    first,
    more,
    provenance,
    sampled_line,
    shown_name,
)
from .comparison import partial
from .format import fmt_exponent

#: The most values a sweep's table and chart show (the fit uses all), and its heading names.
MAX_POINTS, MAX_NAMED = 200, 20

SHORT = {"trace_s": "trace", "lower_s": "lower", "compile_s": "compile",
         "first_call_s": "first call", "execute_s": "execute"}


def _table(c: Sweep) -> Table:
    """One row per (value, variant), then one growth row per variant."""
    name, values = c.name, c.values
    meds, ks = medians(c), exponents(c)
    shown, left = first(values, MAX_POINTS)
    rows = [[shown_name(repr(value)), v] + [fmt_s(meds[v][p][i]) for p in PHASES]
            for i, value in enumerate(shown) for v in VARIANTS]
    rows += [[more(left, "values", len(values)), ""] + [""] * len(PHASES)] if left else []
    rows += [["growth", v] + [fmt_exponent(name, ks[v][p]) for p in PHASES] for v in VARIANTS]
    return Table([name, "variant"] + [SHORT[p] for p in PHASES], rows, css="jitcompare-sweep")


def _title(c: Sweep) -> Heading:
    named, left = first(c.values, MAX_NAMED)
    values = ", ".join(shown_name(repr(v)) for v in named) + (f", {more(left, 'values')}"
                                                         if left else "")
    return Heading(("jitcompare sweep: ", Code(c.entry), " over ", Code(c.name),
                    f" = {values} ({_clock_said(c)})"))


def fmt_trend(name: str, t: Trend | None) -> str:
    """``~ n^0.9 (0.8–1.0)``: an exponent with its 95% interval (``—``: not fitted)."""
    if t is None:
        return "—"
    said = fmt_exponent(name, t.k)
    if t.low is None or t.high is None:
        return said
    return f"{said} ({t.low:.1f}–{t.high:.1f})".replace("-0.0", "0.0")


def trend_line(c: Sweep) -> str:
    """The answer in one line: how the first call grows, flat and nested, with intervals."""
    if unchanged(c):
        return (f"Every value of {c.name} built the same programs: the timings do not grow "
                "with it (no trend fitted)")
    ts = trends(c)
    if all(ts[v]["first_call_s"] is None for v in VARIANTS):
        return f"No trend over {c.name}: its values are not positive numbers, or too few"
    return "First call: " + ", ".join(
        f"{v} {fmt_trend(c.name, ts[v]['first_call_s'])}" for v in VARIANTS)


def _trend_table(c: Sweep) -> list[Block]:
    """Each stage's exponent per variant, with its interval: the answer in full."""
    ts = trends(c)
    if all(t is None for v in VARIANTS for t in ts[v].values()):
        return []
    rows = [[SHORT[p], *(fmt_trend(c.name, ts[v][p]) for v in VARIANTS)] for p in PHASES]
    return [Para([f"how each stage grows: seconds ~ {c.name}^k, k fitted on the medians, "
                  "with its 95% interval from every run"]),
            Table(["stage", *VARIANTS], rows, css="jitcompare-trend")]


def answer(c: Sweep) -> list[Block]:
    """What a sweep asks, first: its trend, whether it stopped, its errors and warnings."""
    out: list[Block] = [_title(c), Para([trend_line(c)], "verdict", bold=True),
                        *_trend_table(c), *partial(c.stopped), *_found(c, "error")]
    shown, left = first(c.warnings, MAX_ITEMS)  # the whole sweep's (each point's: _found)
    said = [*shown, *([more(left, "warnings", len(c.warnings))] if left else [])]
    sampled = sampled_line(c)
    return out + [Para([f"warning: {w}"], "warning") for w in said] + (
        [Para([sampled], "note")] if sampled else [])


def details(c: Sweep, png: bytes | None = None) -> list[Block]:
    """The rest, behind ``-v`` or a click: chart, medians, verdicts, errors, provenance."""
    growth = "not fitted, every value built the same program" if unchanged(c) else \
        f"seconds ~ {c.name}^k, k fitted on log-log medians"
    out: list[Block] = [
        Image(png, f"phases against {c.name}"),
        Para([f"medians per value ({_clock_said(c)}):"]), _table(c),
        Para([c.headline, (f"growth: {growth}; sweep wall time {fmt_s(c.wall_s)}",)])]
    return out + _found(c, "warning") + provenance(c, sampled=False)


def _found(c: Sweep, kind: str) -> list[Block]:
    """Each value's errors or warnings (``kind``), at most :data:`~.blocks.MAX_ITEMS`."""
    found = [(v, w) for k, v, w in _warnings(c) if k == kind]
    shown, left = first(found, MAX_ITEMS)
    said = [f"{kind} ({c.name}={v!r}): {w}" for v, w in shown]
    said += [more(left, f"{kind}s", len(found))] if left else []
    return [Pre(x, kind) if kind == "error" else Para([x], kind) for x in said]


#: What a sweep's report folds (in HTML) or shows only with ``-v`` (in text).
FOLDED = "every value: chart, medians, verdicts"


def _clock_said(c: Sweep) -> str:
    """The clock of the sweep's medians and growth, and why where it is CPU time."""
    if clock_of(c) == CPU:
        return "CPU time: the machine was busy, as a comparison then decides"
    return "wall time"


def sweep_text(c: Sweep, verbose: bool = False) -> str:
    """The sweep as plain text: its trend first, every value's table with ``verbose``."""
    return answer_first(answer(c), details(c), FOLDED, verbose)[0]


def sweep_html(c: Sweep, png: bytes | None = None, verbose: bool = False) -> Html:
    """The sweep as HTML: its trend first, the chart and every value's table folded."""
    return answer_first(answer(c), details(c, png), FOLDED, verbose)[1]


def _warnings(c: Sweep) -> list[tuple[str, object, str]]:
    """(kind, value, message) for each point's failed variants and warnings, in sweep order."""
    out: list[tuple[str, object, str]] = []
    for value, point in zip(c.values, c.points, strict=True):
        out += [("error", value, v.error) for v in point.variants.values() if v.error]
        out += [("warning", value, w) for w in point.warnings]
    return out

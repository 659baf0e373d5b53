"""Text and HTML tables of a sweep: one row per value, flat and nested per phase,
and a last row with each column's fitted growth exponent."""

from __future__ import annotations

from ..model.rows import PHASES
from ..model.rows import VARIANTS
from ..model.stats.units import fmt_s
from ..model.stats.witness import CPU
from ..model.sweep import Sweep
from ..model.sweep import clock_of
from ..model.sweep import exponents
from ..model.sweep import medians
from ..model.sweep import unchanged
from . import provenance as _provenance
from .blocks import MAX_ITEMS
from .blocks import Block
from .blocks import Code
from .blocks import Heading
from .blocks import Html
from .blocks import Image
from .blocks import Para
from .blocks import Pre
from .blocks import Table
from .blocks import as_html
from .blocks import as_text
from .blocks import first
from .blocks import more
from .blocks import shown_name
from .comparison import partial
from .format import fmt_exponent

#: A sweep's table and chart show at most this many values, the first measured (the
#: growth row is fitted on all of them); the heading names at most ``MAX_NAMED``.
MAX_POINTS, MAX_NAMED = 200, 20

SHORT = {"trace_s": "trace", "lower_s": "lower", "compile_s": "compile",
         "first_call_s": "first call", "execute_s": "execute"}


def _table(c: Sweep) -> Table:
    """One row per (value, variant), then one growth row per variant."""
    sweep = c
    name, values = sweep.name, sweep.values
    meds, ks = medians(c), exponents(c)
    shown, left = first(values, MAX_POINTS)
    rows = [[shown_name(repr(value)), v] + [fmt_s(meds[v][p][i]) for p in PHASES]
            for i, value in enumerate(shown) for v in VARIANTS]
    rows += [[more(left, "values", len(values)), ""] + [""] * len(PHASES)] if left else []
    rows += [["growth", v] + [fmt_exponent(name, ks[v][p]) for p in PHASES] for v in VARIANTS]
    return Table([name, "variant"] + [SHORT[p] for p in PHASES], rows, css="jitcompare-sweep")


def blocks(c: Sweep, png: bytes | None = None) -> list[Block]:
    """The sweep as blocks, built once: chart, table, growth line and warnings."""
    sweep = c
    name = sweep.name
    named, left = first(sweep.values, MAX_NAMED)
    values = ", ".join(shown_name(repr(v)) for v in named) + (f", {more(left, 'values')}"
                                                         if left else "")
    out: list[Block] = [
        Heading(("jitcompare sweep: ", Code(c.entry), " over ", Code(name),
                 f" = {values} (medians per value, {_clock_said(c)})")),
        Para([sweep.headline], "verdict", bold=True),
        *partial(sweep.stopped),
        Image(png, f"phases against {name}"),
        _table(c),
        Para([(f"growth: {_growth_rule(c, name)}; "
               f"sweep wall time {fmt_s(sweep.wall_s)}",)])]
    out += [Pre(f"warning: {w}", "warning") for w in _sweep_warnings(c)]
    found = _warnings(c)
    shown, left = first(found, MAX_ITEMS)
    out += [Pre(f"{kind} ({name}={v!r}): {w}", "warning" if kind == "warning" else "error")
            for kind, v, w in shown]
    out += [Pre(more(left, "errors and warnings", len(found)), "warning")] if left else []
    return out + _provenance.blocks(c)


def _sweep_warnings(c: Sweep) -> list[str]:
    """Warnings about the whole sweep (each point's follow with its value), at most
    :data:`~.blocks.MAX_ITEMS`."""
    shown, left = first(c.warnings, MAX_ITEMS)
    return [*shown, *([more(left, "warnings", len(c.warnings))] if left else [])]


def _clock_said(c: Sweep) -> str:
    """The clock of the sweep's medians and growth, and why where it is CPU time."""
    if clock_of(c) == CPU:
        return "CPU time: the machine was busy, as a comparison then decides"
    return "wall time"


def _growth_rule(c: Sweep, name: str) -> str:
    """How the growth row was made, or why it is empty."""
    if unchanged(c):
        return "not fitted, every value built the same program"
    return f"seconds ~ {name}^k, k fitted on log-log medians"


def sweep_text(c: Sweep) -> str:
    """The sweep as a plain-text table, with the growth exponents and any warnings."""
    return as_text(blocks(c))


def sweep_html(c: Sweep, png: bytes | None = None) -> Html:
    """The sweep as HTML: the chart (if given), the table, and the warnings."""
    return as_html(blocks(c, png))


def _warnings(c: Sweep) -> list[tuple[str, object, str]]:
    """(kind, value, message) for each point's failed variants and warnings, in sweep order."""
    sweep = c
    out: list[tuple[str, object, str]] = []
    for value, point in zip(sweep.values, sweep.points, strict=True):
        out += [("error", value, v.error) for v in point.variants.values() if v.error]
        out += [("warning", value, w) for w in point.warnings]
    return out

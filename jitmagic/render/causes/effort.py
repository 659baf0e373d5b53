"""Text and HTML for ``--effort``: XLA's lower effort settings against the default."""

from __future__ import annotations

from ...backends import named as backend_named
from ...model.causes.effort import CHANGES_RESULTS
from ...model.causes.effort import DEFAULT
from ...model.causes.effort import FAILED
from ...model.causes.effort import NO_EFFECT
from ...model.causes.effort import NO_GAIN
from ...model.causes.effort import NOT_COMPARED
from ...model.causes.effort import UNCHANGED
from ...model.causes.effort import USE
from ...model.causes.effort import USE_BELOW
from ...model.causes.effort import Effort
from ...model.causes.effort import EffortRow
from ...model.causes.effort import Outcome
from ...model.comparison import Comparison
from ...model.stats.rule import FASTER
from ...model.stats.units import counted
from ...model.stats.units import fmt_s
from .. import comparison
from ..blocks import Block
from ..blocks import Cell
from ..blocks import Heading
from ..blocks import Html as HtmlText
from ..blocks import Image
from ..blocks import Para
from ..blocks import Pre
from ..blocks import Table
from ..blocks import answer_first
from ..blocks import as_html
from ..blocks import as_text
from ..drawing import effort_png
from ..format import verdict_ratio
from ..verdicts import clock_name
from ..verdicts import interval
from .effort_words import at as where
from .effort_words import call_words
from .effort_words import clock_reason
from .effort_words import compile_words
from .effort_words import options_text
from .effort_words import pays
from .effort_words import run_time
from .effort_words import write

TITLE = "XLA's effort (compile less hard)"
COLUMNS = ("setting", "XLA compile", "a call", "compile ratio", "per-call ratio", "outputs")


def answer(e: Effort) -> list[Block]:
    """What ``--effort`` asks, first: the settings worth using, each with the line to
    write, else that none of those tried is (or why nothing was measured)."""
    out: list[Block] = [Heading((TITLE,)), *comparison.partial(e.stopped)]
    if e.default_error:
        return [*out, Pre(e.default_error, "error")]
    worth = [sentence(e, r) for r in e.rows.values() if e.outcome(r).verdict(r) in (USE, USE_BELOW)]
    tried = len(e.rows)
    return out + [Para(worth or [f"none of the {counted(tried, 'setting')} tried is "
                                 "worth using here (each one's figures follow in full)"])]


def blocks(e: Effort, png: bytes | None = None) -> list[Block]:
    """The effort section in full, as blocks, built once for the text and the HTML
    (``png``: the chart, HTML only)."""
    out: list[Block] = [Heading((TITLE,)), Para([intro(e)]), *comparison.partial(e.stopped),
                        *_not_cold(e)]
    if e.default_error:
        return [*out, Pre(e.default_error, "error")]
    table = [default_cells(e), *(row_cells(e, r) for r in e.rows.values())]
    out += [Image(png, "XLA's compile against a call, per setting"),
            Table(COLUMNS, table, css="jitcompare-effort"),
            Para([sentence(e, r) for r in e.rows.values()])]
    out += [Para([said], "note") for said in run_time(e, list(e.rows.values()))]
    out += [Para([said], "note") for said in [acts_on(e)] if said]
    out += [Para([helpers_said(r)], "note") for r in e.rows.values() if r.kept or r.refused]
    out += [Para([note], "note") for note in e.left_out]
    out += [Para([("warning: ", w)], "warning") for w in e.warnings]
    out += [Pre(r.error, "error") for r in e.rows.values() if r.error]
    return out


def _not_cold(e: Effort) -> list[Block]:
    """Which rows' runs were not cold (:attr:`Effort.warm_runs`): the rows compile in the
    process the comparison compiled the same program in."""
    return comparison.not_cold({name: (e.series[name], runs)
                                for name, runs in e.warm_runs.items()},
                               "the ratios below count {them}")


def text(e: Effort) -> str:
    """The effort section as plain text."""
    return as_text(blocks(e))


def html(e: Effort, png: bytes | None = None) -> HtmlText:
    """The effort section as HTML (every string escaped), with the chart ``png``."""
    return as_html(blocks(e, png))


def intro(e: Effort) -> str:
    """What the rows are, what the default compiles with, and what the figures are."""
    runs = len(e.default.get("compile_s", ()))
    mine = f" with your `compiler_options={options_text(e.baseline)}`" if e.baseline else ""
    label = backend_label(e)  # the settings tried are the backend's own
    on = "that act on this backend" + (f" ({label})" if label else "")
    return (f"the flat program compiled at XLA's lower effort settings {on}, each "
            f"against the default (as you compile it{mine}), interleaved: XLA's compile is JAX's "
            f"own event inside cold first calls, a call is the steady state; medians of {runs} "
            f"cold runs each; ratios are default/setting, decided by the one rule; "
            f"{clock_reason(e)}")


def default_cells(e: Effort) -> list[Cell]:
    """The default's row, first: the figures every ratio divides, on the record's clock."""
    clock = clock_name(e.clock())
    compiled, called = e.default_s()
    return [Cell(DEFAULT, code=True), Cell(fmt_s(compiled), clock), Cell(fmt_s(called), clock),
            Cell("—"), Cell("—"), Cell("the reference")]


def row_cells(e: Effort, r: EffortRow) -> list[Cell]:
    """One setting's row: its medians, each ratio marked as the main table marks one
    ("inconclusive", "same"), on the clock named beside it."""
    o = e.outcome(r)
    clock = clock_name(o.clock)
    return [Cell(r.name, code=True), Cell(fmt_s(o.compile_s[1]), clock),
            Cell(fmt_s(o.execute_s[1]), clock),
            Cell(verdict_ratio(o.compile)), Cell(verdict_ratio(o.execute)),
            Cell(r.outputs or "not compared")]


def sentence(e: Effort, r: EffortRow) -> str:
    """What the samples support of ``r``, in words, with the line to write where the
    setting is worth using."""
    o = e.outcome(r)
    verdict = o.verdict(r)
    at = where(r)
    if verdict == FAILED:
        return f"{at} your code failed (below)"
    if verdict == CHANGES_RESULTS:
        return (f"{at} the outputs differ from the default's beyond rounding: "
                f"{r.outputs_detail or 'largest difference unknown'}; it changes the "
                "results, so it is not recommended")
    if verdict == NOT_COMPARED:
        return f"{at} the outputs were not compared with the default's, so it is not recommended"
    if verdict == UNCHANGED:
        return (f"{at} the compiled program is byte for byte the default's: the setting "
                "changed nothing here")
    if verdict == NO_EFFECT:
        return f"{at} {no_effect(e, r, o)}: nothing to gain here"
    compiled = compile_words(o)
    if verdict == NO_GAIN or o.compile.kind != FASTER:
        return f"{at} {compiled}: nothing to gain" if verdict == NO_GAIN else \
            f"{at} {compiled}; more runs might tell"
    said = f"{at} {compiled} and {call_words(o)}"
    if verdict == USE:
        return f"{said}: use it for interactive work and tests: {write(e, r)}"
    if verdict == USE_BELOW:
        return f"{said}: {pays(o)}: {write(e, r)}"
    return f"{said}: no break-even is given; more runs might tell"


def backend_label(e: Effort) -> str | None:
    """How the user reads the backend ``e`` was measured on ("TPU"); None where the
    report did not record it."""
    return None if e.backend is None else backend_named(e.backend).label


def no_effect(e: Effort, r: EffortRow, o: Outcome) -> str:
    """``no measurable effect on this backend's compile (TPU; it acts on …): XLA's compile
    2.54 s → 2.57 s (0.97×–1.02×), wall time``: the rule found no difference in XLA's
    compile, said as that, never as a small "faster" or "slower"."""
    acts = r.setting.acts_on and f"it acts on {r.setting.acts_on}"
    where = "; ".join(w for w in (backend_label(e), acts) if w)
    figures = " ".join(w for w in (f"{fmt_s(o.compile_s[0])} → {fmt_s(o.compile_s[1])}",
                                   interval(o.compile)) if w)
    return (f"no measurable effect on this backend's compile{f' ({where})' if where else ''}: "
            f"XLA's compile {figures}, {clock_name(o.clock)}")


def acts_on(e: Effort) -> str | None:
    """What each setting tried acts on, from the record (None where no row says)."""
    said = [f"`{r.name}`: {r.setting.acts_on}" for r in e.rows.values() if r.setting.acts_on]
    return f"what each setting acts on: {'; '.join(said)}" if said else None


def helpers_said(r: EffortRow) -> str:
    """Out of line: the helpers kept out of line, how often traced, and why others stay inline."""
    kept = [f"`{n}` kept out of line (traced {counted(c, 'time')})"
            for n, c in r.kept.items()]
    refused = [f"`{n}` stays inline: {why}" for n, why in r.refused.items()]
    return f"{r.name}: " + "; ".join(kept + refused)


#: What the section folds (in HTML) or shows only with ``-v`` (in text).
FOLDED = "every setting's figures, chart and sentence"


def section(c: Comparison, plot: bool = True, verbose: bool = False) -> tuple[str, str] | None:
    """XLA's effort, where ``--effort`` measured it: the settings worth using first."""
    record = c.part("effort")
    if record is None:
        return None
    rest = [] if record.default_error else blocks(record, effort_png(record, plot))[1:]
    return answer_first(answer(record), rest, FOLDED, verbose)


"""Text and HTML for ``--effort``: XLA's lower effort settings against the default.

A heading, a table (setting, XLA compile, a call, each ratio, outputs) and one sentence
per setting, every one derived from the :class:`~jitmagic.model.causes.effort.Effort`
record's samples by the one rule: how much faster XLA compiles, what a call then costs,
and after how many calls the default pays back, each figure with its clock, then the
exact line to write. A setting whose outputs differ is said to change the results and
is never recommended; where a call's cost is inconclusive no break-even is given.
"""

from __future__ import annotations

import json
from typing import Any

from ...model.causes.effort import CHANGES_RESULTS
from ...model.causes.effort import FAILED
from ...model.causes.effort import NO_GAIN
from ...model.causes.effort import NOT_COMPARED
from ...model.causes.effort import UNCHANGED
from ...model.causes.effort import USE
from ...model.causes.effort import USE_BELOW
from ...model.causes.effort import Effort
from ...model.causes.effort import EffortRow
from ...model.causes.effort import Outcome
from ...model.causes.effort import calls_figure
from ...model.stats.rule import FASTER
from ...model.stats.rule import INCONCLUSIVE
from ...model.stats.rule import SAME
from ...model.stats.verdicts import with_interval
from ...model.stats.witness import CPU
from .. import comparison
from ..blocks import Block
from ..blocks import Cell
from ..blocks import Heading
from ..blocks import Html as HtmlText
from ..blocks import Para
from ..blocks import Pre
from ..blocks import Table
from ..blocks import as_html
from ..blocks import as_text
from ..format import fmt_s
from ..format import marked_ratio

TITLE = "XLA's effort (compile less hard)"
COLUMNS = ("setting", "XLA compile", "a call", "compile ratio", "per-call ratio", "outputs")


def blocks(e: Effort) -> list[Block]:
    """The effort section as blocks, built once for the text and the HTML."""
    out: list[Block] = [Heading((TITLE,)), Para([intro(e)]), *comparison.partial(e.stopped)]
    if e.default_error:
        return [*out, Pre(e.default_error, "error")]
    out += [Table(COLUMNS, [row_cells(e, r) for r in e.rows.values()], css="jitcompare-effort"),
            Para([sentence(e, r) for r in e.rows.values()])]
    out += [Para([note], "note") for note in e.left_out]
    out += [Para([("warning: ", w)], "warning") for w in e.warnings]
    out += [Pre(r.error, "error") for r in e.rows.values() if r.error]
    return out


def text(e: Effort) -> str:
    """The effort section as plain text."""
    return as_text(blocks(e))


def html(e: Effort) -> HtmlText:
    """The effort section as HTML (every string escaped)."""
    return as_html(blocks(e))


def intro(e: Effort) -> str:
    """What the rows are, what the default compiles with, and what the figures are."""
    runs = len(e.default.get("compile_s", ()))
    mine = f" with your `compiler_options={_options(e.baseline)}`" if e.baseline else ""
    return (f"the flat program compiled at XLA's lower effort settings, each against the "
            f"default (as you compile it{mine}), interleaved: XLA's compile is JAX's own "
            f"event inside cold first calls, a call is the steady state; medians of {runs} "
            f"cold runs each; ratios are default/setting, decided by the one rule")


def row_cells(e: Effort, r: EffortRow) -> list[Cell]:
    """One setting's row: its medians, each ratio marked n.s. where the rule found no
    difference, on the clock named beside it."""
    o = e.outcome(r)
    clock = "CPU time" if o.clock == CPU else "wall time"
    return [Cell(r.name, code=True), Cell(fmt_s(o.compile_s[1]), clock),
            Cell(fmt_s(o.execute_s[1]), clock),
            Cell(marked_ratio(o.compile.ratio, o.compile)),
            Cell(marked_ratio(o.execute.ratio, o.execute)), Cell(r.outputs or "not compared")]


def sentence(e: Effort, r: EffortRow) -> str:
    """What the samples support of ``r``, in words, with the line to write where the
    setting is worth using."""
    o = e.outcome(r)
    verdict = o.verdict(r)
    at = f"at `{r.name}`"
    if verdict == FAILED:
        return f"{at} your code failed (below)"
    if verdict == CHANGES_RESULTS:
        return (f"{at} the outputs differ from the default's beyond rounding "
                f"({r.outputs_detail or 'largest difference unknown'}): it changes the "
                "results, so it is not recommended")
    if verdict == NOT_COMPARED:
        return f"{at} the outputs were not compared with the default's, so it is not recommended"
    if verdict == UNCHANGED:
        return (f"{at} the compiled program is byte for byte the default's: the setting "
                "changed nothing here")
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


def compile_words(o: Outcome) -> str:
    """``XLA compiles 3.0× faster (2.1×–4.0×) (0.21 s → 71 ms, CPU time)``, or what the
    rule found instead."""
    figures = f"({fmt_s(o.compile_s[0])} → {fmt_s(o.compile_s[1])}, {_clock(o)})"
    d = o.compile
    if d.kind == SAME:
        return f"XLA's compile shows no measurable difference {figures}"
    if d.kind == INCONCLUSIVE:
        return f"whether XLA compiles faster is inconclusive: {with_interval(d)} {figures}"
    return f"XLA compiles {with_interval(d)} {figures}"


def call_words(o: Outcome) -> str:
    """``a call takes the same time`` (only where the rule says no measurable
    difference), ``a call is 1.4× slower (…)``, or that it is inconclusive."""
    d = o.execute
    figures = f"({fmt_s(o.execute_s[0])} → {fmt_s(o.execute_s[1])}, {_clock(o)})"
    if d.kind == SAME:
        return f"a call takes the same time {figures}"
    if d.kind == INCONCLUSIVE:
        return (f"whether a call is slower is inconclusive: {with_interval(d)} {figures}")
    also = "also " if d.kind == FASTER else ""
    return f"a call is {also}{with_interval(d)} {figures}"


def pays(o: Outcome) -> str:
    """Where a setting that compiles faster but calls slower pays, from the medians."""
    calls = o.break_even
    assert calls is not None  # USE_BELOW has one
    saved = f"{fmt_s(o.saved_s)} of compile saved, {fmt_s(o.lost_s)} lost per call, {_clock(o)}"
    if calls < 1:
        return f"a single call loses more than the compile saves ({saved}): keep the default"
    return (f"it pays while you make fewer than {calls_figure(calls)} calls ({saved}); "
            "above that the default wins")


def write(e: Effort, r: EffortRow) -> str:
    """The exact line to write: the jit's keyword (with the user's own options kept),
    or the config line, and the process-wide way beside it."""
    options = {**e.baseline, **r.setting.options}
    keyword = f"`jax.jit({e.entry}, compiler_options={_options(options)})`"
    line = keyword if r.setting.keyword else f"`{r.setting.config}`"
    also = f" (for the whole process: `{r.setting.config}`)" \
        if r.setting.keyword and r.setting.config else ""
    return f"{line}{also}"


def _options(options: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{json.dumps(k)}: {v!r}" for k, v in options.items()) + "}"


def _clock(o: Outcome) -> str:
    return "CPU time" if o.clock == CPU else "wall time"

"""Text and HTML for ``--effort`` against the default, and the words its causes share."""

from __future__ import annotations

import json
import math
from typing import Any

from ...backends import named as backend_named
from ...model.causes.cause import Cause
from ...model.causes.effort import (
    CHANGES_RESULTS,
    DEFAULT,
    FAILED,
    MATCHING,
    NO_EFFECT,
    NO_GAIN,
    NOT_COMPARED,
    OUT_OF_LINE,
    UNCHANGED,
    UNDECIDED,
    USE,
    USE_BELOW,
    Effort,
    EffortRow,
    Outcome,
    measured_rows,
)
from ...model.stats.rule import FASTER, INCONCLUSIVE, SAME, Difference
from ...model.stats.units import counted, fmt_s, ratio_figures
from ...model.stats.witness import CPU, Clock, is_busy, waited_share
from .. import comparison
from ..blocks import Block, Cell, Heading, Image, Para, Pre, Table, as_html, as_text, part_section
from ..blocks import Html as HtmlText
from ..drawing import bars_png
from ..format import verdict_ratio
from ..verdicts import clock_name, interval, read, times, verb, waited, with_interval

TITLE = "XLA's effort (compile less hard)"
COLUMNS = ("setting", "XLA compile", "a call", "compile ratio", "per-call ratio", "outputs")


def answer(e: Effort) -> list[Block]:
    """What ``--effort`` asks, first: the settings worth using with their line, else none."""
    out: list[Block] = [Heading((TITLE,)), *comparison.partial(e.stopped)]
    if e.default_error:
        return [*out, Pre(e.default_error, "error")]
    worth = [sentence(e, r) for r in e.rows.values() if e.outcome(r).verdict(r) in (USE, USE_BELOW)]
    tried = len(e.rows)
    return out + [Para(worth or [f"none of the {counted(tried, 'setting')} tried is "
                                 "worth using here"])]


def blocks(e: Effort, png: bytes | None = None) -> list[Block]:
    """The effort section in full, as blocks for text and HTML (``png``: the chart)."""
    out: list[Block] = [Heading((TITLE,)), Para([intro(e)]), *comparison.partial(e.stopped),
                        *comparison.not_cold({name: (e.series[name], runs)  # not cold rows
                                              for name, runs in e.warm_runs.items()},
                                             "the ratios below count {them}")]
    if e.default_error:
        return [*out, Pre(e.default_error, "error")]
    table = [default_cells(e), *(row_cells(e, r) for r in e.rows.values())]
    out += [Image(png, "XLA's compile against a call, per setting"),
            Table(COLUMNS, table, css="jitcompare-effort"),
            Para([sentence(e, r) for r in e.rows.values()])]
    out += [Para([said], "note") for said in run_time(e, list(e.rows.values()))]
    acts = [f"`{r.name}`: {r.setting.acts_on}" for r in e.rows.values() if r.setting.acts_on]
    out += [Para([f"what each setting acts on: {'; '.join(acts)}"], "note")] if acts else []
    out += [Para([f"{r.name}: " + "; ".join(  # out of line: the helpers kept, those inline
        [f"`{n}` kept out of line (traced {counted(c, 'time')})" for n, c in r.kept.items()]
        + [f"`{n}` stays inline: {why}" for n, why in r.refused.items()])], "note")
        for r in e.rows.values() if r.kept or r.refused]
    out += [Para([note], "note") for note in e.left_out]
    out += [Para([("warning: ", w)], "warning") for w in e.warnings]
    out += [Pre(r.error, "error") for r in e.rows.values() if r.error]
    return out


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
    """One setting's row: its medians and ratios marked as the main table marks them."""
    o = e.outcome(r)
    clock = clock_name(o.clock)
    return [Cell(r.name, code=True), Cell(fmt_s(o.compile_s[1]), clock),
            Cell(fmt_s(o.execute_s[1]), clock),
            Cell(verdict_ratio(o.compile)), Cell(verdict_ratio(o.execute)),
            Cell(r.outputs or "not compared")]


def sentence(e: Effort, r: EffortRow) -> str:
    """What the samples support of ``r``, with the line to write where it is worth using."""
    o = e.outcome(r)
    verdict = o.verdict(r)
    named = at(r)
    if verdict == FAILED:
        return f"{named} your code failed (below)"
    if verdict == CHANGES_RESULTS:
        return (f"{named} the outputs differ from the default's beyond rounding: "
                f"{r.outputs_detail or 'largest difference unknown'}; it changes the "
                "results, so it is not recommended")
    if verdict == NOT_COMPARED:
        return f"{named} the outputs were not compared with the default's, so it is not recommended"
    if verdict == UNCHANGED:
        return (f"{named} the compiled program is byte for byte the default's: the setting "
                "changed nothing here")
    if verdict == NO_EFFECT:
        return f"{named} {no_effect(e, r, o)}: nothing to gain here"
    compiled = compile_words(o)
    if verdict == NO_GAIN or o.compile.kind != FASTER:
        return f"{named} {compiled}: nothing to gain" if verdict == NO_GAIN else \
            f"{named} {compiled}; more runs might tell"
    said = f"{named} {compiled} and {compile_words(o, call=True)}"
    if verdict == USE:
        return f"{said}: use it for interactive work and tests: {write(e, r)}"
    if verdict == USE_BELOW:
        return f"{said}: {pays(o)}: {write(e, r)}"
    return f"{said}: no break-even is given; more runs might tell"


def backend_label(e: Effort) -> str | None:
    """How the user reads ``e``'s backend ("TPU"); None where the report did not record it."""
    return None if e.backend is None else backend_named(e.backend).label


def no_effect(e: Effort, r: EffortRow, o: Outcome) -> str:
    """``no measurable effect on this backend's compile (…)``: never a small faster or slower."""
    acts = r.setting.acts_on and f"it acts on {r.setting.acts_on}"
    where = "; ".join(w for w in (backend_label(e), acts) if w)
    figures = " ".join(w for w in (f"{fmt_s(o.compile_s[0])} → {fmt_s(o.compile_s[1])}",
                                   interval(o.compile)) if w)
    return (f"no measurable effect on this backend's compile{f' ({where})' if where else ''}: "
            f"XLA's compile {figures}, {clock_name(o.clock)}")


#: What the section folds (in HTML) or shows only with ``-v`` (in text).
FOLDED = "every setting's figures, chart and sentence"


section = part_section("effort", lambda e, _: answer(e), lambda e, _, plot: [] if e.default_error
                       else blocks(e, bars_png(e, plot))[1:], FOLDED)


def clock_reason(e: Effort) -> str:
    """Which clock the section's figures are on, and why (how long the runs waited for a CPU)."""
    share = waited_share(measured_rows([e.default, *(r.samples for r in e.rows.values())]))
    if e.clock() == CPU:
        assert share is not None  # CPU time is chosen only where the wait was measured
        return (f"every figure is CPU time: the machine was busy while these rows ran "
                f"(their cold runs {waited(share)}), so CPU time decided, whatever clock "
                "the comparison above used")
    if share is None:
        return "every figure is wall time (how long the runs waited for a CPU was not measured)"
    if is_busy(share):
        return (f"every figure is wall time: the machine was busy (the cold runs "
                f"{waited(share)}), but not every row has CPU seconds to decide by")
    return (f"every figure is wall time: the machine was quiet while these rows ran (their "
            f"cold runs {waited(share)})")


def calls_figure(calls: float) -> str:
    """A break-even call count rounded down to two significant figures, never overstated."""
    if calls < 1:
        return "1"
    digits = max(0, int(math.floor(math.log10(calls))) - 1)
    return f"{int(calls // 10**digits) * 10**digits:,}"


# --- the words every front end shares (the section and the causes) ---------------------

def compile_words(o: Outcome, call: bool = False) -> str:
    """``XLA compiles 3.0× faster (…) (0.21 s → 71 ms, CPU time)``; ``call``: a call's words."""
    d = o.execute if call else o.compile
    figures = _figures(o.execute_s if call else o.compile_s, o)
    if d.kind == SAME:
        same = "a call takes the same time" if call else \
            "XLA's compile shows no measurable difference"
        return f"{same} {figures}"
    if d.kind == INCONCLUSIVE:
        whether = "a call is slower" if call else "XLA compiles faster"
        return f"whether {whether} is inconclusive: {leaning(d)} {figures}"
    if not call:
        return f"{compile_verdict(d, o.clock)} {figures}"
    also = "also " if d.kind == FASTER else ""
    said = f"{also}takes" if o.clock == CPU else f"is {also}".rstrip()
    return f"a call {said} {with_interval(d, o.clock)} {figures}"


def compile_verdict(d: Difference, clock: Clock, named: bool = False) -> str:
    """``XLA compiles 3.0× faster (…)``; on CPU time ``XLA's compile takes 3.0× less CPU time``."""
    if clock == CPU:
        return f"XLA's compile {verb(CPU)} {with_interval(d, CPU)}"
    return f"XLA compiles {times(d)}{' in wall time' * named} {interval(d)}".rstrip()


def leaning(d: Difference) -> str:
    """An undecided ratio with no verdict word: ``1.89× in the setting's favour (…)``."""
    shown = ratio_figures(read(d)[0])
    side = "" if shown == ratio_figures(1.0) else \
        " in the setting's favour" if d.ratio > 1 else " in the default's favour"
    return f"{shown}×{side} {interval(d)}".rstrip()


def pays(o: Outcome) -> str:
    """Where a setting that compiles faster but calls slower pays, from the medians."""
    calls = o.break_even
    assert calls is not None  # USE_BELOW has one
    saved = (f"{fmt_s(o.saved_s)} of compile saved, {fmt_s(o.lost_s)} lost per call, "
             f"{clock_name(o.clock)}")
    if calls < 1:
        return f"a single call loses more than the compile saves ({saved}): keep the default"
    return (f"it pays while you make fewer than {calls_figure(calls)} calls ({saved}); "
            "above that the default wins")


def write(e: Effort, r: EffortRow) -> str:
    """The exact line to write (the user's own options kept), and the process-wide way."""
    options = {**e.baseline, **r.setting.options}
    keyword = f"`jax.jit({e.entry}, compiler_options={options_text(options)})`"
    line = keyword if r.setting.keyword else f"`{r.setting.config}`"
    also = f" (for the whole process: `{r.setting.config}`)" \
        if r.setting.keyword and r.setting.config else ""
    return f"{line}{also}"


def at(r: EffortRow) -> str:
    """How a row's sentence names it: ``at `name```, or ``with each helper out of line``."""
    if r.name == OUT_OF_LINE:
        return "with each helper out of line (compiled once as its own program and called)"
    return f"at `{r.name}`"


def options_text(options: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{json.dumps(k)}: {v!r}" for k, v in options.items()) + "}"


def _figures(seconds: tuple[float, float], o: Outcome) -> str:
    """``(0.21 s → 71 ms, CPU time)``: the default's and the setting's medians, and the clock."""
    return f"({fmt_s(seconds[0])} → {fmt_s(seconds[1])}, {clock_name(o.clock)})"



def fix(e: Effort, r: EffortRow) -> str:
    """What to do: ``compile less hard: …``, or ``keep `layer` out of line: …``."""
    if r.name != OUT_OF_LINE:
        return f"compile less hard: {write(e, r)}"
    names = " and ".join(f"`{n}`" for n in r.kept) or "the helpers"
    return f"keep {names} out of line: {write(e, r)}"


def verdict_words(e: Effort, r: EffortRow) -> str:
    """What one row came to in a few words; never "inconclusive" for what was decided."""
    o = e.outcome(r)
    verdict = o.verdict(r)
    if verdict == NO_EFFECT:
        return "no measurable effect on this backend's compile"
    if verdict != UNDECIDED:
        return verdict
    if o.compile.kind != FASTER:
        return "whether XLA compiles faster is inconclusive"
    return (f"{compile_verdict(o.compile, o.clock, named=True)}; whether a call is slower "
            "is inconclusive, so no break-even")


def nothing_worth(e: Effort, rows: list[EffortRow]) -> str:
    """The cause where no row is worth using; "not worth" only where every one is decided."""
    each = "; ".join(f"`{r.name}`: {verdict_words(e, r)}" for r in rows)
    undecided = any(e.outcome(r).verdict(r) == UNDECIDED for r in rows)
    if rows[0].name == OUT_OF_LINE:
        words = verdict_words(e, rows[0])
        return (f"keeping the helpers out of line was not shown to pay here: {words}"
                if undecided else f"keeping the helpers out of line is not worth it here ({words})")
    return (f"no lower effort setting was shown to pay here: {each}" if undecided else
            f"no lower effort setting is worth using here ({each})")


def run_time(e: Effort, rows: list[EffortRow]) -> list[str]:
    """Where a setting calls faster than the user's own ``compiler_options``: said."""
    if not e.baseline:
        return []
    faster = [(r, o) for r in rows if r.name != OUT_OF_LINE and r.outputs in MATCHING
              and (o := e.outcome(r)).execute.kind == FASTER]
    return [f"at `{r.name}` a call {verb(o.clock)} {times(o.execute, o.clock)} than with your "
            f"own `compiler_options={options_text(e.baseline)}` {interval(o.execute)} "
            f"{_figures(o.execute_s, o)}: your options cost run time" for r, o in faster]


def cause_words(x: Cause) -> tuple[str, str]:
    """What an effort cause says, and what to do."""
    if x.case == "none measured":
        return "no effort setting could be measured here", ""
    e, rows = x.detail
    if x.case == "none worth":
        return "; ".join([nothing_worth(e, list(rows)), *run_time(e, list(rows))]), ""
    r = next(r for r in e.recommended() if r in rows)
    o = e.outcome(r)
    worth = "" if o.break_even is None else f": {pays(o)}"
    open_ = [f"`{y.name}`: {verdict_words(e, y)}" for y in rows  # more compile saved, undecided
             if (p := e.outcome(y)).verdict(y) == UNDECIDED and p.compile.kind == FASTER
             and p.saved_s > o.saved_s]
    said = [f"{at(r)} {compile_words(o)} and {compile_words(o, call=True)}{worth}", *open_,
            *run_time(e, list(rows))]
    return "; ".join(said), fix(e, r)

"""The answer at a glance: what a comparison shows by default, in at most twelve lines.

The verdict on the first call (its interval, its medians, its runs, its clock), the
five stages flat against nested on the clock that decides each (CPU time on a busy
machine, in place of wall time), the biggest measured cause with what to do about it,
what else was found in a line, and what the full report (``-v``) adds. Everything is
read from the same record as the full report (:mod:`.comparison`), worded by the same
rule (:func:`~.verdicts.say`).
"""

from __future__ import annotations

import math

from ..model.causes.cause import SAVING
from ..model.causes.cause import STAGE
from ..model.causes.cause import Cause
from ..model.comparison import EXECUTE
from ..model.comparison import Comparison
from ..model.rows import PHASES
from ..model.rows import VARIANTS
from ..model.stats.cold import COMPILE
from ..model.stats.rule import INCONCLUSIVE
from ..model.stats.rule import SAME
from ..model.stats.rule import median
from ..model.stats.units import counted
from ..model.stats.units import fmt_ratio
from ..model.stats.units import fmt_s
from ..model.stats.witness import CPU
from ..model.stats.witness import FIRST_CALL
from ..model.stats.witness import WALL
from ..model.stats.witness import Clock
from ..model.stats.witness import on
from .blocks import Block
from .blocks import Para
from .blocks import Table
from .comparison import notes
from .comparison import outputs_said
from .format import PHASE_LABELS
from .headlines import comparison_headline
from .verdicts import OUTCOME
from .verdicts import clock_name
from .verdicts import interval_ends
from .verdicts import say
from .verdicts import times
from .verdicts import undecided_reason

#: Where two figures of a compile seem to disagree, why: XLA's compile of the nested
#: program differs while it built the same program from both (its input, before it
#: inlines the calls, is smaller).
SMALLER_INPUT = "same program, from a smaller input"


def glance(c: Comparison, html: str | None = None) -> list[Block]:
    """The comparison at a glance, as blocks (``html``: where the HTML report was
    written, said on the last line)."""
    why = notes(c, 1)[:1] if not c.nested.helpers else []  # the first: why none was nested
    return [Para([verdict_line(c)], "verdict", bold=True),
            Table((clock_name(c.clock_of(FIRST_CALL)), *VARIANTS, "flat/nested"),
                  [_stage_row(c, p) for p in PHASES], indent="  "),
            *why,
            Para([line for line in (why_line(c), found_line(c), more_line(c, html)) if line])]


def verdict_line(c: Comparison) -> str:
    """``jitcompare `g`: nested jit on `f` makes the first call 2.60× faster (1.60×–4.65×;
    869 ms → 334 ms wall time, 3 runs each)``: one number on one clock, the clock that
    decides; where nothing was compared, the verdict's own first sentence."""
    first, clock = c.verdict.difference, c.clock_of(FIRST_CALL)
    lead = f"jitcompare `{c.entry}`: "
    if not comparison_headline(c, first):  # failed, nothing nested, stopped, not measured
        return lead + c.verdict.headline
    helpers = ", ".join(f"`{h}`" for h in c.nested.helpers)
    flat, nested = (median(on(c.judged(v).samples, FIRST_CALL, clock)) for v in VARIANTS)
    numbers = f"{fmt_s(flat)} → {fmt_s(nested)}{' wall time' * (clock == WALL)}, {_runs(c)}"
    bounds = f"{interval_ends(first.low, first.high)}; " if not math.isnan(first.low) else ""
    if first.kind == INCONCLUSIVE:
        return (f"{lead}nested jit on {helpers}, first call: {say(first, clock)} "
                f"({times(first, clock)} seen, {bounds}{numbers}); "
                f"{undecided_reason(first, c.repeats_ended, c.stopped)}")
    if first.kind == SAME:
        return f"{lead}nested jit on {helpers} makes {say(first, clock)} to the first call " \
            f"({bounds}{numbers})"
    take = " take" * (clock == CPU)
    return f"{lead}nested jit on {helpers} makes the first call{take} {say(first, clock)} " \
        f"({bounds}{numbers})"


def _runs(c: Comparison) -> str:
    """``3 runs each``, or ``7 flat and 6 nested runs`` (a run not cold left out)."""
    flat, nested = (len(c.judged(v).samples.get(FIRST_CALL, ())) for v in VARIANTS)
    return f"{counted(flat, 'run')} each" if flat == nested else \
        f"{flat} flat and {nested} nested runs"


def _stage_row(c: Comparison, phase: str) -> list[str]:
    """A stage's medians and ratio on the clock that decides it (named where it is not
    the header's)."""
    clock = c.clock_of(phase)
    label = PHASE_LABELS[phase]
    if clock != c.clock_of(FIRST_CALL):
        label += f" ({clock_name(clock)})"
    return [label, *(fmt_s(median(on(c.judged(v).samples, phase, clock))) for v in VARIANTS),
            stage_ratio(c, phase)]


def stage_ratio(c: Comparison, phase: str) -> str:
    """``13.0×`` where the rule calls a difference; its outcome's word where it does not
    (never a ratio that reads as a difference); where XLA built one program from both,
    that the per-call times are of one program, and why a compile that differs built
    the same one."""
    clock = c.clock_of(phase)
    d = c.difference(phase, clock)
    if math.isnan(d.ratio):
        return "—"
    if not d.enough_data:
        return f"{fmt_ratio(d.ratio)} (one run)"
    said = fmt_ratio(d.ratio) if d.significant else OUTCOME[d.kind]
    if c.same_compiled and phase == EXECUTE:
        return f"{said}: same compiled program"
    if c.same_compiled and phase == COMPILE and d.significant:
        return f"{said} ({SMALLER_INPUT})"
    return said


def why_line(c: Comparison) -> str:
    """The biggest measured cause and what to do about it ("" where none was measured):
    the biggest saving, else the stage that takes the most of the flat first call."""
    savings = [x for x in c.why if x.kind == SAVING]
    if savings:
        return f"why: {_saving(c, savings[0])}"
    stages = [x for x in c.why if x.kind == STAGE]
    if not stages:
        return ""
    x = max(stages, key=lambda s: s.seconds)
    fix = f"; what to do: {x.fix}" if x.fix else ""
    return f"why: {x.name} takes {fmt_s(x.seconds)} of the flat first call{fix}"


def _saving(c: Comparison, x: Cause) -> str:
    """``flat inlines `f` at 16 calls (8,208 jaxpr equations against 544); `jax.jit` on
    `f` saves 535 ms``; any other saving by its name."""
    if x.maker != "nesting":
        return f"{x.name} saves {fmt_s(x.seconds)}{'; what to do: ' + x.fix if x.fix else ''}"
    calls = sum(c.nested.helper_calls.values())
    helpers = ", ".join(f"`{h}`" for h in c.nested.helpers)
    eqns = (f" ({c.flat.jaxpr_eqns:,} jaxpr equations against {c.nested.jaxpr_eqns:,})"
            if c.flat.jaxpr_eqns is not None and c.nested.jaxpr_eqns is not None else "")
    inlined = f"flat inlines {helpers} at {counted(calls, 'call')}{eqns}; " if calls else ""
    return f"{inlined}{x.fix or 'nesting'} saves {fmt_s(x.seconds)}"


def found_line(c: Comparison) -> str:
    """What else the report found, in one line: a stop, the busy machine and what the
    other clock says, runs left out, the outputs, whether XLA built one program."""
    parts = [f"PARTIAL: {c.stopped}"] if c.stopped else []
    if c.clock_of(FIRST_CALL) == CPU:
        wall = c.difference(FIRST_CALL, WALL)
        parts.append(f"busy machine: CPU time judged (wall time: {say(wall)})")
    if (left := sum(len(runs) for runs in c.warm_runs.values())):
        parts.append(f"{counted(left, 'run')} not cold, left out")
    parts.append(outputs_said(c))
    if c.same_compiled is False:  # one program: the execute row says so
        parts.append("XLA compiled them to different programs")
    return " · ".join(parts)


def more_line(c: Comparison, html: str | None) -> str:
    """What the full report adds, and where it is: ``-v``, ``--why`` where causes were
    not measured, the HTML report where one was written."""
    warned = f", {counted(len(c.warnings), 'warning')}" if c.warnings else ""
    noted = len({n for v in c.variants.values() for n in v.notes})
    noted_said = f", {counted(noted, 'note')}" if noted else ""
    said = [f"-v (spreads, {clock_name(_other(c))}, program sizes, causes{warned}{noted_said})"]
    if any(x.option for x in c.why if not x.measured):
        said.append("--why")
    if html:
        said.append(f"report: {html}")
    return "more: " + " · ".join(said)


def _other(c: Comparison) -> Clock:
    """The clock the table does not show: wall time on a busy machine, else CPU time."""
    return WALL if c.clock_of(FIRST_CALL) == CPU else CPU

"""The words of ``--effort`` its section and its causes share."""

from __future__ import annotations

import json
import math
from typing import Any

from ...model.causes.cause import Cause
from ...model.causes.effort import MATCHING
from ...model.causes.effort import NO_EFFECT
from ...model.causes.effort import OUT_OF_LINE
from ...model.causes.effort import UNDECIDED
from ...model.causes.effort import Effort
from ...model.causes.effort import EffortRow
from ...model.causes.effort import Outcome
from ...model.causes.effort import measured_rows
from ...model.stats.rule import FASTER
from ...model.stats.rule import INCONCLUSIVE
from ...model.stats.rule import SAME
from ...model.stats.rule import Difference
from ...model.stats.units import fmt_s
from ...model.stats.units import ratio_figures
from ...model.stats.witness import CPU
from ...model.stats.witness import Clock
from ...model.stats.witness import is_busy
from ...model.stats.witness import waited_share
from ..verdicts import clock_name
from ..verdicts import interval
from ..verdicts import read
from ..verdicts import times
from ..verdicts import verb
from ..verdicts import waited
from ..verdicts import with_interval


def clock_reason(e: Effort) -> str:
    """Which clock the section's figures are on and why, from how long the rows' cold
    runs waited for a CPU (:func:`~jitmagic.render.verdicts.waited`): CPU time where
    the machine was busy while they ran, else wall time."""
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
    """A break-even call count as said: rounded down to two significant figures
    (``2,345`` → ``2,300``), so the count said never overstates where the setting pays."""
    if calls < 1:
        return "1"
    digits = max(0, int(math.floor(math.log10(calls))) - 1)
    return f"{int(calls // 10**digits) * 10**digits:,}"


# --- the words every front end shares (the section and the causes) ---------------------

def compile_words(o: Outcome) -> str:
    """``XLA compiles 3.0× faster (2.1×–4.0×) (0.21 s → 71 ms, CPU time)``, or what the
    rule found instead."""
    figures = f"({fmt_s(o.compile_s[0])} → {fmt_s(o.compile_s[1])}, {_clock(o)})"
    d = o.compile
    if d.kind == SAME:
        return f"XLA's compile shows no measurable difference {figures}"
    if d.kind == INCONCLUSIVE:
        return f"whether XLA compiles faster is inconclusive: {leaning(d)} {figures}"
    return f"{compile_verdict(d, o.clock)} {figures}"


def compile_verdict(d: Difference, clock: Clock, named: bool = False) -> str:
    """``XLA compiles 3.0× faster (2.1×–4.0×)`` on wall time; ``XLA's compile takes 3.0× less CPU
    time (…)`` where CPU time decided: "faster" is wall time's word, and said of a CPU-time ratio it
    read as the wall time the figures beside it are not."""
    if clock == CPU:
        return f"XLA's compile {verb(CPU)} {with_interval(d, CPU)}"
    return f"XLA compiles {times(d)}{' in wall time' * named} {interval(d)}".rstrip()


def call_words(o: Outcome) -> str:
    """``a call takes the same time`` (only where the rule says no measurable
    difference), ``a call is 1.4× slower (…)``, or that it is inconclusive."""
    d = o.execute
    figures = f"({fmt_s(o.execute_s[0])} → {fmt_s(o.execute_s[1])}, {_clock(o)})"
    if d.kind == SAME:
        return f"a call takes the same time {figures}"
    if d.kind == INCONCLUSIVE:
        return f"whether a call is slower is inconclusive: {leaning(d)} {figures}"
    also = "also " if d.kind == FASTER else ""
    said = f"{also}takes" if o.clock == CPU else f"is {also}".rstrip()
    return f"a call {said} {with_interval(d, o.clock)} {figures}"


def leaning(d: Difference) -> str:
    """An undecided ratio without a verdict word: ``1.89× in the setting's favour
    (0.65×–3.46×)``, ``1.30× in the default's favour (…)``, ``1.00× (…)``; turned as
    :func:`~jitmagic.render.verdicts.interval` turns it, so the interval reads the
    same way round as the ratio. "faster" would claim what the rule left open."""
    shown = ratio_figures(read(d)[0])
    side = "" if shown == ratio_figures(1.0) else \
        " in the setting's favour" if d.ratio > 1 else " in the default's favour"
    return f"{shown}×{side} {interval(d)}".rstrip()


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
    keyword = f"`jax.jit({e.entry}, compiler_options={options_text(options)})`"
    line = keyword if r.setting.keyword else f"`{r.setting.config}`"
    also = f" (for the whole process: `{r.setting.config}`)" \
        if r.setting.keyword and r.setting.config else ""
    return f"{line}{also}"


def at(r: EffortRow) -> str:
    """How a row's sentence names it: ``at `xla_backend_optimization_level=0```, or
    ``with each helper out of line``."""
    if r.name == OUT_OF_LINE:
        return "with each helper out of line (compiled once as its own program and called)"
    return f"at `{r.name}`"


def options_text(options: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{json.dumps(k)}: {v!r}" for k, v in options.items()) + "}"


def _clock(o: Outcome) -> str:
    return clock_name(o.clock)



def fix(e: Effort, r: EffortRow) -> str:
    """What to do: ``compile less hard: `jax.jit(...)` ``, or ``keep `layer` out of line:
    `layer = equinox.internal.noinline(layer)` `` (out of line is no effort setting)."""
    if r.name != OUT_OF_LINE:
        return f"compile less hard: {write(e, r)}"
    names = " and ".join(f"`{n}`" for n in r.kept) or "the helpers"
    return f"keep {names} out of line: {write(e, r)}"


def _more_if_decided(e: Effort, r: EffortRow, best: Outcome) -> bool:
    """Whether ``r`` saves more compile than the setting used (``best``) but a call's cost
    at it is undecided: said beside the one used, so a bigger saving does not vanish."""
    o = e.outcome(r)
    return o.verdict(r) == UNDECIDED and o.compile.kind == FASTER and o.saved_s > best.saved_s


def verdict_words(e: Effort, r: EffortRow) -> str:
    """What one row came to, in a few words: its verdict, or where the compile was decided
    and a call not, both (``XLA compiles 2.80× faster (…); whether a call is slower is
    inconclusive, so no break-even``): never "inconclusive" for what was decided."""
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
    """What the cause says where no row of ``rows`` is worth using: each with what it came
    to (:func:`verdict_words`); "not worth" only where every one is decided."""
    each = "; ".join(f"`{r.name}`: {verdict_words(e, r)}" for r in rows)
    undecided = any(e.outcome(r).verdict(r) == UNDECIDED for r in rows)
    if rows[0].name == OUT_OF_LINE:
        words = verdict_words(e, rows[0])
        return (f"keeping the helpers out of line was not shown to pay here: {words}"
                if undecided else f"keeping the helpers out of line is not worth it here ({words})")
    return (f"no lower effort setting was shown to pay here: {each}" if undecided else
            f"no lower effort setting is worth using here ({each})")


def run_time(e: Effort, rows: list[EffortRow]) -> list[str]:
    """Where the user's jit passes its own ``compiler_options`` (the baseline) and a setting
    makes a call faster than they do, by the rule: said, for they cost run time."""
    if not e.baseline:
        return []
    out = []
    for r in rows:
        o = e.outcome(r)
        if r.name != OUT_OF_LINE and r.outputs in MATCHING and o.execute.kind == FASTER:
            out.append(f"at `{r.name}` a call {verb(o.clock)} {times(o.execute, o.clock)} "
                       f"than with your own "
                       f"`compiler_options={options_text(e.baseline)}` {interval(o.execute)} "
                       f"({fmt_s(o.execute_s[0])} → {fmt_s(o.execute_s[1])}, {_clock(o)}): "
                       "your options cost run time")
    return out


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
    open_ = [f"`{y.name}`: {verdict_words(e, y)}" for y in rows if _more_if_decided(e, y, o)]
    said = [f"{at(r)} {compile_words(o)} and {call_words(o)}{worth}", *open_,
            *run_time(e, list(rows))]
    return "; ".join(said), fix(e, r)

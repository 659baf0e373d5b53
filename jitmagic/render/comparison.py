"""Text and HTML renderings of a :class:`~jitmagic.model.comparison.Comparison`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ..model.comparison import EXECUTE, Comparison
from ..model.orderings import Orderings
from ..model.rows import FROM_EVENTS, PHASES, STRUCTURE, VARIANTS
from ..model.stats.cold import COMPILE, WARM_SHARE, reference
from ..model.stats.rule import INCONCLUSIVE, SAME
from ..model.stats.units import fmt_ratio, fmt_s
from ..model.stats.verdicts import Verdict
from ..model.stats.witness import CPU, WALL, Clock, is_busy, on
from . import blocks as ui
from . import diff as _diff
from .format import (
    FIGURE_LABELS,
    PHASE_LABELS,
    REST_ROW,
    fmt_count,
    median_cell,
    medians_of,
    unmarked_clock,
)
from .headlines import not_run
from .notes.helpers import listed
from .verdicts import OUTCOME, interval_ends, stated, waited


def _ratio_cell(c: Comparison, phase: str, clock: Clock = WALL) -> str:
    """The flat/nested ratio on ``clock`` with its interval, flagged as the rule judged it."""
    d = c.difference(phase, clock)
    if math.isnan(d.ratio):
        flag = ""
    elif not d.enough_data:
        flag = " (one run)"
    else:
        flag = f" ({interval_ends(d.low, d.high)})" if not math.isnan(d.low) else ""
        if c.coarse(phase, clock):
            undecided = f" not judged: the CPU clock ticks in {fmt_s(c.env['cpu_tick_s'])}"
        else:
            undecided = " not judged" if c.withheld(phase, clock) else f" {OUTCOME[INCONCLUSIVE]}"
        flag += {INCONCLUSIVE: undecided, SAME: f" {OUTCOME[SAME]}"}.get(d.kind, "")
    if phase == EXECUTE and c.same_compiled:
        flag += ": same compiled program" if c.withheld(phase, clock) else \
            ", same compiled program"
    return fmt_ratio(d.ratio) + flag


#: Why a nested compile differs though XLA built the same program (its input is smaller).
SMALLER_INPUT = "same program, from a smaller input"


def stage_ratio(c: Comparison, phase: str) -> str:
    """``13.0×`` where the rule calls a difference, else its outcome's word (or one program)."""
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


def verdict(c: Comparison) -> str:
    """One sentence on what nesting changed: the first call, then the stages."""
    return c.verdict.text


def headline(v: Verdict) -> ui.Para:
    """The verdict in one line, in bold: what every report shows right under its title."""
    return ui.Para([v.headline], "verdict", bold=True)


def details(v: Verdict) -> list[str]:
    """The verdict's full text, shown with the details (none where it is the headline)."""
    return [] if v.text == v.headline else [v.text]


def _phase_rows(c: Comparison) -> list[list[str | ui.Cell]]:
    """One row per phase, the rest of the first call, and each structure count."""
    rows: list[list[str | ui.Cell]] = [
        [PHASE_LABELS[p], *(median_cell(c.judged(v).samples.get(p, [])) for v in VARIANTS),
         _ratio_cell(c, p)] for p in PHASES]
    if any(c.variants[v].stages_from == FROM_EVENTS for v in VARIANTS):  # the rest, measured
        rest = [fmt_s(j.first_call_parts()["rest_s"]) if j.stages_from == FROM_EVENTS else "—"
                for j in map(c.judged, VARIANTS)]  # no ratio: a difference of medians
        at = PHASES.index("first_call_s")
        rows[at:at] = [[REST_ROW, *rest, ""]]
    rows += _cpu_rows(c)
    rows += [[ui.Cell((ui.Code("call"), label[4:]) if label.startswith("call ") else label),
              fmt_count(getattr(c.flat, key)), fmt_count(getattr(c.nested, key)), ""]
             for key in STRUCTURE if (label := FIGURE_LABELS[key])
             if any(getattr(c.variants[v], key) is not None for v in VARIANTS)]
    return rows


def _cpu_rows(c: Comparison) -> list[list[str | ui.Cell]]:
    """The process's CPU time of each phase (all threads), judged by the same rule."""
    return [[f"{PHASE_LABELS[p]}, CPU time",
             *(median_cell(on(c.judged(v).samples, p, CPU)) for v in VARIANTS),
             _ratio_cell(c, p, CPU)]
            for p in _cpu_phases(c)]


def _cpu_phases(c: Comparison) -> list[str]:
    """The phases either variant has CPU-time samples of: a row each."""
    return [p for p in PHASES if any(on(c.variants[v].samples, p, CPU) for v in VARIANTS)]


def not_cold(found: dict[str, tuple[Mapping[str, Sequence[float]], tuple[int, ...]]],
             counted: str) -> list[ui.Block]:
    """``Not cold: nested runs 4 and 5 compiled in ...``, and what counts them."""
    said = [_warm_clause(name, samples, runs) for name, (samples, runs) in found.items()]
    if not said:
        return []
    one = sum(len(runs) for _, runs in found.values()) == 1
    return [ui.Para([f"Not cold: {'; '.join(said)}, on both wall and CPU time: less work, "
                     "not less waiting. The compiler did less than a cold compile does "
                     "(earlier compiles in this process left it something), so "
                     f"{'that run reads' if one else 'those runs read'} faster than a fresh "
                     f"start would; {counted.format(them='it' if one else 'them')}."],
                    "warning")]


def _warm_clause(name: str, samples: Mapping[str, Sequence[float]],
                 runs: tuple[int, ...]) -> str:
    """``nested runs 4 and 5 compiled in 402 ms and 520 ms, under 70% of 3.1 s (…)``."""
    wall = on(samples, COMPILE, WALL)
    numbers, times = (listed([str(i + 1) for i in runs]),
                      listed([fmt_s(wall[i]) for i in runs]))
    return (f"{name} run{'s' * (len(runs) > 1)} {numbers} compiled in {times}, under "
            f"{WARM_SHARE:.0%} of {fmt_s(reference(wall))} (the slower of the series' first "
            "compile and its median)")


def partial(stopped: str | None) -> list[ui.Block]:
    """The PARTIAL line of a record that stopped early (none for one that did not)."""
    if not stopped:
        return []
    return [ui.Para([(ui.Strong("Partial:"), f" {stopped}; showing what was measured so far")],
                    "error")]


def blocks(c: Comparison, png: bytes | None = None) -> list[ui.Block]:
    """The comparison as blocks, built once for the text table and the HTML summary."""
    whole = "" if math.isnan(c.whole_s) else \
        f"; {fmt_s(c.whole_s)} in all, with the parts after it"  # parts ran after it
    share = c.waited_share  # how long the cold runs waited for a CPU: under the verdict if busy
    cold = "" if share is None else f"; the cold runs {waited(share)}"
    busy = [ui.Para([f"The machine was busy: these runs {waited(share)}, so the process's CPU time "
                     "decided (wall time is shown beside it)."], "warning")] \
        if share is not None and is_busy(share) else []
    out: list[ui.Block] = [ui.Heading(("jitcompare: ", ui.Code(c.entry),
                                       f" ({medians_of(_repeats(c), 'cold run')}{processes(c)}; "
                                       f"{unmarked_clock(bool(_cpu_phases(c)), 'row')})")),
                           headline(c.verdict),
                           *busy,
                           *not_cold({name: (c.variants[name].samples, runs)
                                      for name, runs in c.warm_runs.items()},
                                     "the verdict, the table, the chart and the causes leave "
                                     "{them} out")]
    out += _diff.blocks(c.baseline, title=False) if c.baseline is not None else []
    out += partial(c.stopped)
    out += [ui.Image(png, "the first call in parts, per variant"),
            ui.Table(("phase", "flat", "nested", "flat/nested"), _phase_rows(c)),
            ui.Para([*details(c.verdict), _helpers_line(c), *_compiled_line(c),
                     outputs_said(c),
                     f"wall time {fmt_s(c.wall_s)} for flat against nested, of which measured "
                     f"{fmt_s(c.measured_s())}{whole}{cold}"])]
    out += [ui.Pre(f"error: {v.error}", "error") for v in c.variants.values() if v.error]
    out += notes(c)
    warnings, left = ui.first(c.warnings)
    out += [ui.Para([("warning: ", w)], "warning") for w in warnings]
    out += [ui.Para([ui.more(left, "warnings", len(c.warnings))], "warning")] if left else []
    out += ui.provenance(c)
    out += [ui.Details((f"jaxpr, {name} ({fmt_count(v.jaxpr_eqns)} equations)",), v.jaxpr_text)
            for name, v in c.variants.items() if v.jaxpr_text]
    return out


def notes(c: Comparison, limit: int = ui.MAX_ITEMS) -> list[ui.Block]:
    """Each variant's notes, one said of every variant once, at most ``limit``."""
    each = [set(v.notes) for v in c.variants.values()]
    every = [n for n in dict.fromkeys(n for v in c.variants.values() for n in v.notes)
             if all(n in held for held in each)]
    once = set(every)
    said = [("", n) for n in every] + [(f" ({name})", n) for name, v in c.variants.items()
                                       for n in v.notes if n not in once]
    shown, left = ui.first(said, limit)
    out: list[ui.Block] = [ui.Para([(f"note{name}: ", n)]) for name, n in shown]
    return out + ([ui.Para([ui.more(left, "notes", len(said))])] if left else [])


def _helpers_line(c: Comparison) -> str:
    """The helpers the nested variant nested (or those found, where it never ran)."""
    calls, own = c.nested.helper_calls, c.nested.own_jit
    helpers, left = ui.first(c.nested.helpers)
    names = ", ".join(f"{ui.shown_name(h)} ({calls[h]} jit call{'s' * (calls[h] != 1)}"
                      f"{', your own jax.jit' * (h in own)})" if h in calls
                      else ui.shown_name(h) for h in helpers) or "none"
    names += f", {ui.more(left, 'helpers')}" if left else ""
    if not_run(c):
        return f"helpers found: {names} (not nested: measuring stopped first)"
    return f"nested helpers: {names}"


def _compiled_line(c: Comparison) -> list[str]:
    """Whether XLA built one program for both variants (none said where not compared)."""
    if c.same_compiled is None:
        return []
    if c.same_compiled:
        compile_ = c.difference(COMPILE)
        return ["XLA compiled both variants to the same program, instruction by instruction "
                "(the same flops, bytes and memory): nesting changed JAX's work, not XLA's "
                "result" + (f"; {stated('its XLA compile', compile_, c.clock_of(COMPILE), True)}"
                            " nested: XLA's input, before it inlines the calls, is smaller"
                            if compile_.significant else "")]
    return ["XLA compiled the variants to different programs"]


def text_table(c: Comparison) -> str:
    """A plain-text table: what a terminal, a log, or a static export shows."""
    return ui.as_text(blocks(c))


def html_summary(c: Comparison, png: bytes | None = None) -> ui.Html:
    """An HTML table with spreads, the chart (if given) and the jaxprs, collapsed."""
    return ui.as_html(blocks(c, png))


def processes(c: Comparison) -> str:
    """``, the slowest of 4 processes`` under ``jax.distributed`` (docs/distributed.md)."""
    n = c.env.get("process_count")
    return f", the slowest of {n} processes" if isinstance(n, int) and n > 1 else ""


def _repeats(c: Comparison) -> dict[str, int]:
    """Each measured variant's finished cold runs, less those that were not cold."""
    return {name: len(c.judged(name).samples.get("first_call_s", []))
            for name, v in c.variants.items() if any(v.samples.values())}


def outputs_line(record: Comparison | Orderings, between: str, unfinished: str) -> str:
    """Whether the measured functions (of ``record``) returned the same values; never hidden."""
    match, diff, kind = record.outputs_match, record.max_abs_diff, record.outputs_kind
    at = f" at `{record.outputs_leaf}`" if record.outputs_leaf else ""
    largest = "" if diff is None or math.isnan(diff) else f"largest difference {diff:.3g}"
    if kind == "uncompared":
        return f"outputs: not compared (jitmagic could not compare the values of {between}: " \
               "see the warning)"
    if match is None:
        return f"outputs: not compared ({unfinished})"
    if kind == "exact":
        return f"outputs: {between} match exactly"
    if kind == "rounding":
        dtype = record.outputs_dtype or "float"
        return f"outputs: {between} match within {dtype} rounding ({largest}{at})"
    if kind == "mismatch":  # the leaf named is the first that differs, not the worst
        overall = largest.replace("difference", "difference over all leaves") if at else largest
        return f"outputs: MISMATCH between {between}{at}" + (f" ({overall})" if largest else "")
    return (f"outputs: {between} match" if match else f"outputs: MISMATCH between {between}") \
        + (f" ({largest})" if largest else "")


def outputs_said(c: Comparison) -> str:
    """Whether flat and nested returned the same values (``outputs: ...``)."""
    if c.flat.ok and c.nested.ok and not c.nested.helpers and not any(c.nested.samples.values()):
        return "outputs: one program (nothing nested), nothing to compare"
    return outputs_line(c, "flat and nested", "a variant did not finish")

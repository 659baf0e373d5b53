"""Text and HTML of a :class:`~jitmagic.model.diff.Diff`: timings, then structure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..model.diff import (
    LARGER,
    LOADS_DIFFER,
    NESTS_DIFFER,
    NOT_JUDGED,
    SAME_SIZE,
    SMALLER,
    Apart,
    Diff,
    EffortDiff,
    Figure,
    Reason,
    StageDiff,
    StructureDiff,
)
from ..model.shown import register
from ..model.stats.rule import FASTER, SAME, SLOWER
from ..model.stats.units import counted, fmt_ratio, fmt_s
from ..model.stats.witness import CPU, is_busy
from .blocks import Block, Heading, Html, Para, Table, answer_first
from .format import FIGURE_LABELS, PHASE_LABELS, verdict_ratio
from .verdicts import OUTCOME, clock_name, cpu_mark, waited
from .verdicts import stage_interval as interval
from .verdicts import stage_said as said

HEADER = ("variant", "phase", "NEW/OLD", "interval", "NEW is")
STRUCTURE_HEADER = ("variant", "figure", "OLD", "NEW", "NEW/OLD", "NEW is")
#: What the structure table says it holds, and why it has no interval.
STRUCTURE_NOTE = ("program structure, NEW against OLD: exact figures that move only with "
                  "the code (and JAX's version), so no significance rule")


def rows(d: Diff) -> list[list[str]]:
    return [[s.variant, s.label, fmt_ratio(s.new_over_old), interval(s), said(s)]
            for s in d.stages]


def fmt_figure(x: Figure | None) -> str:
    """``3,088``, a whole float as a count, else ``2.5e+09`` (``—`` where not held)."""
    if x is None:
        return "—"
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    return f"{x:,}" if isinstance(x, int) else f"{x:,.4g}"


def figure_ratio(f: StructureDiff) -> str:
    """NEW/OLD of a structure figure: ``2.00×``, ``from 0`` where OLD had none."""
    if f.kind == LARGER and f.old == 0:
        return "from 0"
    return fmt_ratio(f.new_over_old)


def headline(d: Diff) -> str:
    """The one line a verdict shows above the table: the regressions, else the gains."""
    slower = [s for s in d.stages if s.significant and s.kind == SLOWER]
    faster = [s for s in d.stages if s.significant and s.kind != SLOWER]
    if not slower and not faster:
        return f"against the baseline: {d.undecided()}"
    parts = [f"{OUTCOME[kind]} in {_by_variant(ss)}" for kind, ss in ((SLOWER, slower),
                                                                     (FASTER, faster)) if ss]
    return "against the baseline: NEW " + "; ".join(parts)


def _by_variant(stages: list[StageDiff]) -> str:
    """``flat trace 1.3×, lower 1.3×, nested trace 2×``: each variant named once."""
    return ", ".join(f"{s.variant + ' ' if i == 0 or s.variant != stages[i - 1].variant else ''}"
                     f"{s.label} "
                     f"{fmt_ratio(s.new_over_old if s.kind == SLOWER else 1 / s.new_over_old)}"
                     for i, s in enumerate(stages))


#: The most figures the verdict's structure line names (the table below holds them all).
HEADLINE_FIGURES = 4


def structure_headline(d: Diff) -> str:
    """The verdict's second line: the figures that grew or shrank, else that none did."""
    if not any(f.recorded for f in d.structure):
        return "structure: no figure recorded in both reports, nothing to compare"
    changed = [f for f in d.structure if f.recorded and f.kind != SAME_SIZE and not f.not_judged]
    if not changed:
        return "structure: every figure the same" + (
            " that is judged" * any(f.not_judged for f in d.structure))
    shown = changed[:HEADLINE_FIGURES]
    parts = [f"{word} in " + ", ".join(map(_change, fs))
             for word in ("larger", "smaller") if (fs := [f for f in shown if f.kind == word])]
    left = len(changed) - len(shown)
    return "structure: NEW " + "; ".join(parts) + (f"; {left} more in the table below"
                                                   if left else "")


def _change(f: StructureDiff) -> str:
    """``flat jaxpr equations 100 → 196 (1.96×)``."""
    return (f"{f.variant} {f.label} {fmt_figure(f.old)} → {fmt_figure(f.new)} ({figure_ratio(f)})")


def answer(d: Diff, title: bool = True) -> list[Block]:
    """What a diff asks, first: the title, the verdict and the warnings that qualify it."""
    out: list[Block] = [Heading(f"jitcompare diff: {d.new_entry} (NEW) against "
                                f"{d.old_entry} (OLD)")] if title else []
    lines = [headline(d), *([structure_headline(d)] if d.structure else []),
             *d.partial_lines(), *filter(None, [d.clock_line(), d.loads_line(),
                                                 d.nest_line()])]
    out.append(Para(lines, "verdict", bold=True))
    return out + [Para([("warning: ", w)], "warning") for w in d.warnings]


def details(d: Diff) -> list[Block]:
    """The rest, behind ``-v`` or a click: timing table, which report is which, structure."""
    out: list[Block] = [
        Table(HEADER, rows(d)),
        Para([f"NEW/OLD is median(NEW) / median(OLD): above 1, NEW is slower; "
              f"OLD made {d.old_created or '(not recorded)'}, "
              f"NEW made {d.new_created or '(not recorded)'}"])]
    if d.structure:
        out += [Para([STRUCTURE_NOTE]), Table(STRUCTURE_HEADER, [
            [f.variant, f.label, fmt_figure(f.old), fmt_figure(f.new), figure_ratio(f),
             f"{f.kind}, {NOT_JUDGED}" if f.not_judged else f.kind] for f in d.structure])]
    return out + [b for show in DIFF_SECTIONS.values() for b in show(d)]


def blocks(d: Diff, title: bool = True) -> list[Block]:
    """The diff in full, as blocks: :func:`answer`, then :func:`details`."""
    return [*answer(d, title), *details(d)]


#: What a diff folds (in HTML) or shows only with ``-v`` (in text).
FOLDED = "every stage's and figure's row, NEW against OLD"


def gate_failures(d: Diff, slower: float | None, larger: float | None) -> list[str]:
    """What fails the gates, a line each, with NEW's and OLD's values and the ratio."""
    unjudged = d.unjudged() if slower is not None or larger is not None else None
    out = [unjudged] if unjudged else []
    out += [f"regression: {s.variant} {s.label}: NEW {said(s)} (median {fmt_s(s.new_s)} "
           f"against OLD's {fmt_s(s.old_s)}; {slower:g}× or more fails)"
           for s in (d.regressions(slower) if slower is not None else [])]
    out += [f"larger: {f.variant} {f.label}: NEW {fmt_figure(f.new)} against OLD's "
            f"{fmt_figure(f.old)}, {figure_ratio(f).replace('from 0', 'larger, from 0')}"
            f"{' larger' * (f.old != 0)} ({larger:g}× or more fails)"
            for f in (d.larger(larger) if larger is not None else [])]
    return out


def gate_notes(d: Diff, slower: float | None, larger: float | None = None) -> list[str]:
    """Why a gate passed a row without judging it, where it did (empty without a gate)."""
    loads = d.loads_line() if slower is not None else None
    nests = d.nest_line() if slower is not None or larger is not None else None
    return [line for line in (loads, nests) if line]


def text(d: Diff, verbose: bool = False) -> str:
    """The diff as text: its verdict first, every row only ``verbose``."""
    return answer_first(answer(d), details(d), FOLDED, verbose)[0]


def html(d: Diff, verbose: bool = False) -> Html:
    """The diff as HTML: its verdict first, every row behind a click."""
    return answer_first(answer(d), details(d), FOLDED, verbose)[1]


def summary_lines(outcomes: Sequence[Any], slower: float | None,
                  larger: float | None) -> list[str]:
    """The pytest session's tables: timing and structure per test, then what failed a test."""
    table: list[list[str]] = []
    for o in outcomes:
        if o.diff is None or not o.diff.compared_anything:
            table.append([o.test, "—", "—", "—", f"not compared: {o.problem}"
                          if o.diff is None else o.diff.undecided()])
            continue
        called = [s for s in o.diff.stages if s.significant] or [o.diff.stage("flat",
                                                                           "first_call_s")]
        table += [[o.test, f"{s.variant} {s.label}", fmt_ratio(s.new_over_old), interval(s),
                   said(s)] for s in called]
    lines = Table(("test", "stage", "NEW/OLD", "interval", "NEW is"), table).text_lines()
    if shapes := [row for o in outcomes if o.diff is not None for row in _structure_summary(o)]:
        lines += ["", *Table(("test", *STRUCTURE_HEADER), shapes).text_lines()]
    warned = {w for o in outcomes if o.diff is not None for w in o.diff.warnings}
    lines += [f"warning: {w}" for w in sorted(warned)]
    lines += [f"PARTIAL {o.test}: {line}" for o in outcomes if o.diff is not None
              for line in o.diff.partial_lines()]
    lines += [f"NOT JUDGED {o.test}: {line}" for o in outcomes if o.diff is not None
              for line in gate_notes(o.diff, slower, larger)]
    lines += _failed_lines(outcomes, slower, larger)
    return lines or ["no jitcompare reports in this session"]


def _structure_summary(o: Any) -> list[list[str]]:
    """A test's structure rows: the figures that changed, else one "same" row."""
    recorded = [f for f in o.diff.structure if f.recorded]
    changed = [f for f in recorded if f.kind != SAME_SIZE]
    if not changed:
        return [[o.test, "—", "every figure", "—", "—", "—", SAME_SIZE]] if recorded else []
    return [[o.test, f.variant, f.label, fmt_figure(f.old), fmt_figure(f.new),
             figure_ratio(f), f.kind] for f in changed]


def _failed_lines(outcomes: Sequence[Any], slower: float | None,
                  larger: float | None) -> list[str]:
    """``REGRESSION test: ...``, ``LARGER test: ...``, ``UNJUDGED test: ...``: each test's gates."""
    out = []
    for o in outcomes:
        if o.diff is None:
            continue
        if (slower is not None or larger is not None) and (why := o.diff.unjudged()):
            out.append(f"UNJUDGED {o.test}: {why} (fails the test)")
        if slower is not None and (ss := o.diff.regressions(slower)):
            out.append(f"REGRESSION {o.test}: " + ", ".join(f"{s.variant} {s.label} {said(s)}"
                                                             for s in ss)
                       + f" (fails at {slower:g}×)")
        if larger is not None and (fs := o.diff.larger(larger)):
            out.append(f"LARGER {o.test}: " + ", ".join(map(_change, fs))
                       + f" (fails at {larger:g}×)")
    return out


def partial_lines(d: Diff) -> list[str]:
    """``NEW is PARTIAL: <why it stopped>; compared only what both measured``, per side."""
    return [f"{side} is PARTIAL: {why}; compared only what both measured"
            for side, why in (("NEW", d.new_stopped), ("OLD", d.old_stopped)) if why]


def clock_line(d: Diff) -> str | None:
    """Why the stages were judged on CPU time, where any was (:meth:`Diff.clock_line`)."""
    if not any(s.clock == CPU and not s.not_judged for s in d.stages):
        return None
    busy = [f"{side}'s runs {waited(w)}"
            for side, w in (("OLD", d.old_waited), ("NEW", d.new_waited))
            if w is not None and is_busy(w)]
    return ("judged on CPU time, not wall time: " + " and ".join(busy) +
            " (wall time on a busy machine moves with the load, not with the code)")


#: What is not judged for each reason, and what to do.
NOT_JUDGED_BECAUSE = {
    LOADS_DIFFER: ("the timing stages are not judged, since CPU time too moves with the "
                   "load (docs/significance.md); measure OLD and NEW under alike loads, or "
                   "gate on the structure (--fail-on-larger)"),
    NESTS_DIFFER: ("the nested rows compare two choices of what to nest, not only the code, "
                   "so they are not judged and no gate fails on them; the flat rows are "
                   "judged (nest the same helpers in both, or gate on flat)"),
}


def not_judged_line(d: Diff, reason: Reason) -> str | None:
    """Why rows are not judged for ``reason``, and what to do (None where all are)."""
    why = d.not_judged_for(reason)
    return None if why is None else f"{why}: {NOT_JUDGED_BECAUSE[reason]}"


def unjudged(d: Diff) -> str:
    """Why a gate cannot pass a diff whose NEW measured nothing."""
    why = f" (NEW is PARTIAL: {d.new_stopped})" if d.new_stopped else ""
    return f"nothing to judge: NEW measured nothing{why}, so no gate can pass it"


def summary(d: Diff) -> str:
    """``<Diff model: 2 stages slower, 1 faster; 1 figure larger>``: one line."""
    slower = sum(s.significant and s.kind == SLOWER for s in d.stages)
    faster = sum(s.significant and s.kind != SLOWER for s in d.stages)
    said = ", ".join(f"{counted(n, 'stage')} {what}"
                     for n, what in ((slower, OUTCOME[SLOWER]), (faster, OUTCOME[FASTER])) if n)
    grown = ", ".join(f"{counted(n, 'figure')} {what}" for what in (LARGER, SMALLER)
                      if (n := sum(s.kind == what and not s.not_judged for s in d.structure)))
    return f"<Diff {d.new_entry}: {said or undecided(d)}{'; ' * bool(grown)}{grown}>"


def undecided(d: Diff) -> str:
    """What a diff with no stage slower or faster says: nothing, the same, or not known."""
    if not d.compared_anything:
        who = "NEW measured nothing" if d.new_measured_nothing else \
            "no stage or figure was measured in both reports"
        return f"nothing to compare: {who}"
    if d.same_runs:
        return "the two reports hold the same runs (a report against itself, or a copy)"
    if d.not_judged_for(LOADS_DIFFER):
        return "the timing stages are not judged: the loads differ"
    if all(s.kind == SAME for s in d.stages if s.measured):
        return OUTCOME[SAME]
    return "no stage measurably slower or faster (some inconclusive)"


def warnings(d: Diff) -> tuple[str, ...]:
    """What qualifies a diff: ``env`` entries that differ, or are named differently."""
    out = []
    if d.env_changed:
        changes = "; ".join(f"cold samples {_where(old)} → {_where(new)}"
                            if k == "cold_samples" else f"{k} {_env(old)} → {_env(new)}"
                            for k, old, new in d.env_changed)
        keys = {k for k, _, _ in d.env_changed}
        causes = [cause for cause, holds in (
            ("the machine or the versions", bool(keys - {"cold_samples"})),
            ("where the samples were taken", "cold_samples" in keys)) if holds]
        out.append(f"the reports were measured in different environments ({changes}): a "
                   f"difference may come from {' or '.join(causes)}, not the code")
    if d.old_entry != d.new_entry:
        out.append(f"OLD measured `{d.old_entry}`, NEW `{d.new_entry}`: are they the same "
                   "function?")
    return tuple(out)


#: Where a report's cold samples were taken (``env["cold_samples"]``; none: a backend
#: that does not remember, each in the measuring process).
SAMPLED = {None: "in the measuring process", "fresh": "each in a fresh process",
           "session": "in a process that had compiled before"}


def _where(v: Any) -> str:
    """Where the cold samples were taken, said (a value of another report: as it is)."""
    return SAMPLED.get(v, _env(v)) if v is None or isinstance(v, str) else _env(v)


def _env(v: Any) -> str:
    if isinstance(v, list | tuple):
        return ", ".join(map(str, v)) or "none"
    return "(not recorded)" if v is None else repr(v) if v == "" else str(v)


#: The helpers a "nest different helpers" reason names of each side.
MOST_NAMED = 6


def apart(a: Apart) -> str:
    """Why a row is not judged: the loads differ, or the nested variants nest other helpers."""
    if a.reason == LOADS_DIFFER:
        return f"the loads differ (OLD's runs {waited(a.old)}, NEW's {a.new:.0%})"

    def names(hs: tuple[str, ...]) -> str:
        return ", ".join(f"`{h}`" for h in hs[:MOST_NAMED]) + \
            f" and {len(hs) - MOST_NAMED} more" * (len(hs) > MOST_NAMED) or "none"
    return f"the nested variants nest different helpers (OLD: {names(a.old)}; NEW: {names(a.new)})"


#: ``--effort`` in a diff's report: each setting's XLA compile and call, NEW against OLD.
EFFORT_HEADER = ("setting", "stage", "OLD", "NEW", "NEW/OLD", "interval", "NEW is")
RATIOS_HEADER = ("setting", "compile ratio OLD", "compile ratio NEW", "per-call ratio OLD",
                 "per-call ratio NEW")


def effort_blocks(d: Diff) -> list[Block]:
    """``--effort``'s diff: a row per setting and stage, NEW against OLD."""
    if d.effort is None:
        return [Para([f"XLA's effort (--effort): measured in {d.effort_in} only, so not "
                      "compared"])] if d.effort_in else []
    e: EffortDiff = d.effort
    clock = clock_name(e.clock)
    note = (f"XLA's effort (--effort), each setting NEW against OLD, on {clock} for every "
            "row (medians, by the one rule; informational: no gate judges these rows)")
    rows_ = [[s.variant, s.label, fmt_s(s.old_s), fmt_s(s.new_s), fmt_ratio(s.new_over_old),
              interval(s), said(s)] for s in e.stages]
    out: list[Block] = [Para([note]), Table(EFFORT_HEADER, rows_)]
    if e.ratios:
        out += [Para([f"each setting against its own report's default (default/setting, as "
                      f"the effort section says it; {clock}; marked inconclusive or "
                      "same where the rule found no difference)"]),
                Table(RATIOS_HEADER, [[r.setting, *(verdict_ratio(d) for d in (
                    r.old_compile, r.new_compile, r.old_execute, r.new_execute))]
                    for r in e.ratios])]
    return out + [Para([f"measured in {side} only, so not compared: "
                        + ", ".join(f"`{n}`" for n in names)], "note")
                  for side, names in (("OLD", e.only_old), ("NEW", e.only_new)) if names]


#: The parts a diff's report shows, by their name in :data:`jitmagic.model.parts.PARTS`.
DIFF_SECTIONS: dict[str, Callable[[Diff], list[Block]]] = {"effort": effort_blocks}


def register_diff() -> None:
    """Word a diff's lines and its rows' labels here (:mod:`jitmagic.model.shown`'s registry)."""
    for form, words in (("partial lines", partial_lines), ("clock line", clock_line),
                       ("loads line", lambda d: not_judged_line(d, LOADS_DIFFER)),
                       ("nest line", lambda d: not_judged_line(d, NESTS_DIFFER)),
                       ("unjudged", unjudged), ("summary", summary), ("undecided", undecided)):
        register(form, Diff, words)
    register("warnings", Diff, warnings)
    register("label", StageDiff, lambda s: PHASE_LABELS.get(s.phase, s.phase)
             + cpu_mark(s.clock, ", "))  # "XLA compile, CPU time" where judged on CPU time
    register("apart", Apart, apart)
    register("label", StructureDiff, lambda f: FIGURE_LABELS.get(f.figure, f.figure))

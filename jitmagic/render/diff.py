"""Text and HTML of a :class:`~jitmagic.model.diff.Diff`: one row per variant and phase.

Every ratio is NEW over OLD and said in words ("NEW 1.30× slower"), with its
interval where the rule gives one; a phase measured in only one report shows "—".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..model.diff import Diff, StageDiff
from ..model.stats.rule import INCONCLUSIVE, SLOWER
from .blocks import Block, Heading, Html, Para, Table, as_html, as_text
from .format import fmt_ratio

HEADER = ("variant", "phase", "NEW/OLD", "interval", "NEW is")


def said(s: StageDiff) -> str:
    """What NEW did, in words: "1.30× slower", "2.00× faster", "no measurable difference"."""
    if not s.measured:
        return "not measured in both"
    if s.kind == INCONCLUSIVE:
        return "inconclusive"  # its ratio and interval are beside it
    if not s.significant:
        return "no measurable difference"
    factor = s.new_over_old if s.kind == SLOWER else 1 / s.new_over_old
    return f"{fmt_ratio(factor)} {'slower' if s.kind == SLOWER else 'faster'}"


def interval(s: StageDiff) -> str:
    if math.isnan(s.low) or math.isnan(s.high):
        return "—"
    return f"{fmt_ratio(s.low)}–{fmt_ratio(s.high)}"


def rows(d: Diff) -> list[list[str]]:
    return [[s.variant, s.label, fmt_ratio(s.new_over_old), interval(s), said(s)]
            for s in d.stages]


def headline(d: Diff) -> str:
    """The one line a verdict shows above the table: the regressions, else the gains."""
    slower = [s for s in d.stages if s.significant and s.kind == SLOWER]
    faster = [s for s in d.stages if s.significant and s.kind != SLOWER]
    if not slower and not faster:
        return f"against the baseline: {d.undecided()}"
    parts = [f"{word} in {_by_variant(ss)}" for word, ss in (("slower", slower),
                                                             ("faster", faster)) if ss]
    return "against the baseline: NEW " + "; ".join(parts)


def _by_variant(stages: list[StageDiff]) -> str:
    """``flat trace 1.3×, lower 1.3×, nested trace 2×``: each variant named once."""
    out, last = [], None
    for s in stages:
        factor = s.new_over_old if s.kind == SLOWER else 1 / s.new_over_old
        out.append(f"{s.variant + ' ' if s.variant != last else ''}{s.label} "
                   f"{fmt_ratio(factor)}")
        last = s.variant
    return ", ".join(out)


def blocks(d: Diff, title: bool = True) -> list[Block]:
    """The diff as blocks: title, headline, the table, which report is which, warnings."""
    out: list[Block] = [Heading(f"jitcompare diff: {d.new_entry} (NEW) against "
                                f"{d.old_entry} (OLD)")] if title else []
    out += [Para([headline(d)], "verdict", bold=True),
            Table(HEADER, rows(d)),
            Para([f"NEW/OLD is median(NEW) / median(OLD): above 1, NEW is slower; "
                  f"OLD made {d.old_created or '(not recorded)'}, "
                  f"NEW made {d.new_created or '(not recorded)'}"])]
    out += [Para([("warning: ", w)], "warning") for w in d.warnings]
    return out


def text(d: Diff) -> str:
    return as_text(blocks(d))


def html(d: Diff) -> Html:
    return as_html(blocks(d))


def summary_lines(outcomes: Sequence[Any], regressions: Sequence[tuple[Any, StageDiff]],
                  ratio: float | None) -> list[str]:
    """The pytest session's table: one row per test (its significant stages, else "no
    measurable difference"), then the regressions that fail the session.

    ``outcomes`` have ``test``, ``diff`` (a :class:`Diff` or None) and ``problem``."""
    table: list[list[str]] = []
    for o in outcomes:
        if o.diff is None:
            table.append([o.test, "—", "—", "—", f"not compared: {o.problem}"])
            continue
        called = [s for s in o.diff.stages if s.significant] or [o.diff.stage("flat",
                                                                           "first_call_s")]
        table += [[o.test, f"{s.variant} {s.label}", fmt_ratio(s.new_over_old), interval(s),
                   said(s)] for s in called]
    lines = Table(("test", "stage", "NEW/OLD", "interval", "NEW is"), table).text_lines()
    warned = {w for o in outcomes if o.diff is not None for w in o.diff.warnings}
    lines += [f"warning: {w}" for w in sorted(warned)]
    by_test: dict[str, list[StageDiff]] = {}
    for o, s in regressions:
        by_test.setdefault(o.test, []).append(s)
    lines += [f"REGRESSION {test}: " + ", ".join(f"{s.variant} {s.label} {said(s)}" for s in ss)
              + f" (fails at {ratio:g}×)" for test, ss in by_test.items()]
    return lines or ["no jitcompare reports in this session"]

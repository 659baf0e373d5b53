"""Text and HTML for "which helpers to jit": the attribution table and the advice list."""

from __future__ import annotations

import re

from ..model.advice import Advice, Candidate
from ..model.attribution import Attribution
from ..model.comparison import Comparison
from ..model.stats.rule import FASTER, SLOWER
from ..model.stats.units import cut_to, fmt_s
from ..model.stats.witness import CPU, WALL, Clock
from .blocks import MAX_ITEMS, Block, Cell, Code, Image, Para, Table, as_html, as_text, first, more
from .comparison import partial
from .drawing import bars_png

#: Above this spread (relative to flat's cold start) the advice says the machine was noisy.
NOISY = 0.25


def attribution_blocks(a: Attribution) -> list[Block]:
    """The flat trace split by helper, heaviest first: a title and a table."""
    shown, left = a.heaviest(MAX_ITEMS)
    rows: list[tuple[str | Cell, str, str, str, str]] = [
        (Cell(h.helper, code=True), str(h.calls), fmt_s(h.inclusive_s), fmt_s(h.own_s),
         f"{a.share(h.inclusive_s):.0%} (own {a.share(h.own_s):.0%})")
        for h in shown]
    if left:
        rest = sum(h.own_s for h in a.helpers) - sum(h.own_s for h in shown)
        rows.append((more(left, "helpers", len(a.helpers)), "", "", fmt_s(rest),
                     f"own {a.share(rest):.0%}"))
    rows.append((Cell((Code(a.entry), " (entry)")), "1", fmt_s(a.trace_s),
                 fmt_s(a.entry_own_s), f"own {a.share(a.entry_own_s):.0%}"))
    rows.append(("  of which JAX around it", "", "", fmt_s(a.jax_s), ""))
    title = (f"trace time by helper (flat variant, one cold trace of {fmt_s(a.trace_s)}, "
             f"wall time; own times add up to it):")
    return [Para([(title,)]), Table(("helper", "calls", "inclusive", "own", "share of trace"),
                                    rows, css="jitcompare-helpers", indent="  ")]


def attribution_lines(a: Attribution) -> list[str]:
    """The attribution as text lines (title, then the aligned table)."""
    return as_text(attribution_blocks(a)).splitlines()


def advice_lines(adv: Advice) -> list[str]:
    """The advice in plain words, best saving first."""
    cold = adv.flat_cold_s
    busy = ("; the machine was busy, so cold starts and savings are the process's CPU "
            "seconds" if adv.clock == CPU else "")
    lines = [f"which helpers to jit (cold start = first call from cleared caches, median of "
             f"up to {adv.runs} runs; a saving counts when jitmagic's one significance "
             f"rule calls the cold start faster{busy}):"]
    if not adv.ranked:
        lines.append("  no helper is called twice or more: nothing to advise")
    ranked, left = first(adv.ranked)
    lines += [f"  {i}. {candidate_words(c, cold, adv.clock)}" for i, c in enumerate(ranked, 1)]
    lines += [f"  {more(left, 'helpers', len(adv.ranked))}"] if left else []
    lines += conclusion(adv)
    if adv.noise_s is not None and adv.noise_s > NOISY * cold:
        lines.append(f"  noisy: at this spread and number of runs a saving had to reach about "
                     f"{adv.noise_s / cold:.0%} of the flat cold start ({fmt_s(cold)}, the "
                     f"median of the advice's own flat runs, which its candidates are judged "
                     f"against) to be told apart; more repeats (-r) or a quieter machine "
                     f"resolve smaller savings")
    if adv.not_tried:
        names, left = first(adv.not_tried)
        rest = f", {more(left, 'helpers')}" if left else ""
        lines.append(f"  not tried (called once): {', '.join(names)}{rest}")
    return lines


def conclusion(adv: Advice) -> list[str]:
    """The recommended set and what nesting everything saves (none if stopped or untried)."""
    if adv.stopped:
        return ["  no conclusion and no saving: measuring stopped before the rounds finished"]
    if not adv.ranked:
        return []
    tried = {(c.helper,) for c in adv.ranked}
    # one figure per configuration: "every helper" said apart only where it is another set
    apart = not adv.everything or (set(adv.everything) != set(adv.recommended)
                                   and tuple(adv.everything) not in tried)
    everything = [saving_words("nesting every helper", adv.all_nested_saving_s,
                               adv.all_nested_kind, adv.clock)] if apart else []
    if adv.recommended:
        names = ",".join(adv.recommended)
        said = saving_words(f"--nest {names}", adv.recommended_saving_s, adv.recommended_kind,
                            adv.clock)
        return ["  recommended: " + "; ".join([said, *everything])]
    return ["  " + "; ".join(["no helper saves measurably on its own", *everything])]


def saving_words(what: str, saving_s: float | None, kind: str | None,
                 clock: Clock = WALL) -> str:
    """``nesting every helper saves 55.7 ms`` where the rule says faster; ``costs`` if slower."""
    of_cpu = " of CPU time" if clock == CPU else ""
    if saving_s is None:
        return f"{what} fails"
    if kind == FASTER:
        return f"{what} saves {fmt_s(saving_s)}{of_cpu}"
    if kind == SLOWER:
        return f"{what} costs {fmt_s(-saving_s)}{of_cpu}"
    change = (f"{_cold_start(clock)} {fmt_s(abs(saving_s))} "
              f"{'shorter' if saving_s >= 0 else 'longer'}")
    why = "not judged: a report before 0.4" if kind is None else "not significant"
    return f"{what}: {change} ({why})"


def _cold_start(clock: Clock) -> str:
    """What a saving is of: ``cold start``, or on the CPU clock ``cold-start CPU time``."""
    return "cold-start CPU time" if clock == CPU else "cold start"


def candidate_words(c: Candidate, flat_cold_s: float, clock: Clock = WALL) -> str:
    """One helper's verdict: ``jit `layer`: saves 0.41 s of 0.69 s cold start``."""
    name = f"jit `{c.helper}`"
    if c.error:
        return f"{name}: fails under its own jit ({_error_line(c.error)})"
    if c.saving_s is None or c.noise_s is None:
        return f"{name}: not measured enough to judge (measuring stopped)"
    execute = _execute_words(c)
    if not c.significant:
        change = "shorter" if c.saving_s >= 0 else "longer"
        return (f"{name}: no measurable saving ({_cold_start(clock)} {fmt_s(abs(c.saving_s))} "
                f"{change}, within the noise of {fmt_s(c.noise_s)}){execute}")
    return (f"{name}: saves {fmt_s(c.saving_s)} of {fmt_s(flat_cold_s)} {_cold_start(clock)} "
            f"({c.calls} calls){execute}")


def blocks(c: Comparison, png: bytes | None = None) -> list[Block]:
    """Attribution (chart, table) and advice (title, one line per helper), built once."""
    out: list[Block] = [Image(png, "trace time by helper")]
    if c.attribution is not None:
        out += attribution_blocks(c.attribution)
    if c.advice is not None:
        lines = advice_lines(c.advice)
        out += [*partial(c.advice.stopped), Para([(lines[0],)]), Para(lines[1:])]
    return out


def helpers_text(c: Comparison) -> str:
    """Attribution and advice of a comparison as text; empty if it has neither."""
    return as_text(blocks(c))


def _execute_words(c: Candidate) -> str:
    """``; execute 35.5 µs faster per call``, or no measurable change; nothing unjudged."""
    if c.execute_change_s is None or c.execute_significant is None:
        return ""
    if not c.execute_significant:
        return "; execute per call: no measurable change"
    change = c.execute_change_s  # in words, never a bare sign
    return "; execute unchanged per call" if change == 0 else \
        f"; execute {fmt_s(abs(change))} {'slower' if change > 0 else 'faster'} per call"


def _error_line(error: str, width: int = 120) -> str:
    """The exception's own line out of a formatted traceback, cut to ``width``."""
    lines = [ln for ln in error.splitlines() if re.match(r"[A-Za-z_][\w.]*: ", ln)]
    line = (lines or error.splitlines() or [""])[0]
    return cut_to(line, width)


def section(c: Comparison, plot: bool = True, verbose: bool = False) -> tuple[str, str] | None:
    """The per-helper table, chart and advice, where ``--attribute`` or ``--advise`` ran."""
    said = helpers_text(c)
    if not said:
        return None
    return said, as_html(blocks(c, bars_png(c.attribution, plot)))

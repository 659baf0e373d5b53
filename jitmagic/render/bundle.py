"""What a result looks like: the MIME bundles shown and the headless command's HTML file."""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Iterator, Sequence

from ..model import parts as table
from ..model.causes.cause import SAVING, STAGE, Cause
from ..model.comparison import Comparison
from ..model.lines import Lines
from ..model.rows import PHASES, VARIANTS
from ..model.saved.schema import printable
from ..model.stats.rule import INCONCLUSIVE, SAME, median
from ..model.stats.units import counted, fmt_s
from ..model.stats.verdicts import BUDGET
from ..model.stats.witness import CPU, FIRST_CALL, WALL, on
from ..model.sweep import Sweep
from ..model.target import target_of
from . import attribution, lines, orderings
from .blocks import (
    Block,
    Code,
    Image,
    Para,
    Pre,
    Table,
    as_html,
    as_text,
    both,
    first,
    fold,
    more,
    prose,
    sampled_line,
    shown_name,
    wrapped_to,
)
from .causes import constant_arguments, effort, second_start, xla_passes
from .causes.said import blocks as why_blocks
from .causes.said import section as why_section
from .comparison import html_summary, notes, outputs_said, processes, stage_ratio, text_table
from .diff import html as diff_html
from .diff import text as diff_text
from .drawing import load_charts
from .format import PHASE_LABELS
from .headlines import comparison_headline, helpers_named, nothing_measured
from .lines import html_table as lines_html
from .lines import text as lines_text
from .sweep import sweep_html, sweep_text
from .target import section as target_section
from .verdicts import clock_name, interval, say, times, undecided_reason

#: The most characters of one environment value the HTML page shows (``XLA_FLAGS`` is long).
MAX_CHARS = 2000

def chart_png(c: Comparison | Sweep) -> bytes | None:
    """The result's chart as PNG bytes (the sweep chart for a sweep)."""
    load_charts()
    from .charts.phases import phases_figure, to_png
    from .charts.sweep import sweep_figure

    if isinstance(c, Sweep):
        return to_png(sweep_figure(c))
    if not any(v.ok for v in c.variants.values()):
        return None
    return to_png(phases_figure(c))


def bundle(r: Comparison | Sweep, plot: bool = True, verbose: bool = False,
           width: int | None = None, html_path: str | None = None) -> dict[str, str]:
    """``{"text/plain", "text/html"}`` for ``r``: what the magic shows and what ``r`` shows."""
    with wrapped_to(width):  # every section's prose, the full report's too
        return _bundle(r, plot, verbose, html_path)


def _bundle(r: Comparison | Sweep, plot: bool, verbose: bool,
            html_path: str | None) -> dict[str, str]:
    """:func:`bundle`'s, within its width: each part's (text, HTML), one after another."""
    if isinstance(r, Comparison) and (t := target_of(r.env)) is not None:  # --target: no chart
        return _joined([target_section(r, t, verbose), *sections(r, plot, False, verbose)])
    png = chart_png(r) if plot else None
    shown: list[tuple[str, str]] = []
    if isinstance(r, Sweep):  # then its last value's diff and sections, under a line
        if r.baseline is not None:
            shown.append((diff_text(r.baseline, verbose), diff_html(r.baseline, verbose)))
        shown += sections(r.last, plot, why=asked_why(r.last), verbose=verbose)
        value = shown_name(f"{r.name}={r.values[-1]!r}")
        said = f"For {value}, the last value measured (the sweep ran what follows on it alone):"
        shown = [(sweep_text(r, verbose), sweep_html(r, png, verbose)),
                 *([(said, f"<h3>{html.escape(said)}</h3>")] if shown else []), *shown]
    elif at_a_glance(r, verbose):
        return glanced(r, png, plot, html_path)
    else:
        shown = [(text_table(r), html_summary(r, png)), *sections(r, plot, verbose=verbose)]
    return _joined(shown)


def _joined(shown: Sequence[tuple[str, str]]) -> dict[str, str]:
    return {"text/plain": "\n\n".join(t for t, _ in shown),
            "text/html": "\n".join(h for _, h in shown)}


#: Each part's section by its name in :data:`jitmagic.model.parts.PARTS`, its module's: (comparison,
#: plot, verbose) -> (text, HTML), or None where it has nothing to show.
SECTIONS: dict[str, Callable[[Comparison, bool, bool], tuple[str, str] | None]] = {
    m.__name__.rpartition(".")[2]: m.section for m in (
        orderings, attribution, constant_arguments, second_start, xla_passes, effort, lines)}


def at_a_glance(r: Comparison | Sweep, verbose: bool = False) -> bool:
    """Whether :func:`bundle` shows ``r`` at a glance: a comparison, not -v, not --target."""
    return isinstance(r, Comparison) and not verbose and target_of(r.env) is None


def glanced(c: Comparison, png: bytes | None, plot: bool = True,
            html_path: str | None = None) -> dict[str, str]:
    """The comparison at a glance, then what its options added."""
    short = glance(c, html_path)
    added: list[tuple[str, str]] = [(diff_text(c.baseline), diff_html(c.baseline))] \
        if c.baseline is not None else []
    added += sections(c, plot, why=asked_why(c))
    text_ = "\n\n".join([as_text(short), *(t for t, _ in added)])
    causes = [] if asked_why(c) else why_blocks(c)  # else among the sections added
    folded = [("the full report: spreads, both clocks, program sizes, notes, warnings",
               html_summary(c)),
              *([(as_text(causes[:1]), as_html(causes))] if causes else [])]
    page_ = as_html([short[0], Image(png, "the first call in parts, per variant"), *short[1:]])
    return {"text/plain": text_, "text/html": "\n".join(
        [page_, *(h for _, h in added), *(fold(said, body) for said, body in folded)])}


def sections(c: Comparison, plot: bool = True, why: bool = True,
             verbose: bool = False) -> Iterator[tuple[str, str]]:
    """What follows a comparison's table, as (text, HTML): the causes (``why``), each part's."""
    causes = why_section(c, verbose) if why else None
    if causes:
        yield causes
    for part in sorted(table.PARTS, key=lambda p: p.shown):
        if part.name in SECTIONS and (shown := SECTIONS[part.name](c, plot, verbose)):
            yield shown
        record = c.part(part.name)  # where --budget stopped it: after how many rounds
        if getattr(record, "rounds_ended", None) == BUDGET:
            budget = f", {fmt_s(c.budget_s)}" if not math.isnan(c.budget_s) else ""
            yield both([Para([f"The time budget (--budget{budget}) ran out: the {part.label} "
                              f"part stopped after {counted(record.rounds, 'round')} (a larger "
                              "--budget, in seconds, lets it take more)"], "note")])


def asked_why(c: Comparison) -> bool:
    """Whether ``c`` measured a part that tells a cause: its causes are then shown whole."""
    return any(c.part(p.name) is not None for p in table.PARTS if p.in_why)


def stopped_note(parts: list[str]) -> str:
    """The PARTIAL line of a result whose showing Ctrl-C stopped (``parts``: what it left out)."""
    return (f"PARTIAL: Ctrl-C stopped {' and '.join(dict.fromkeys(parts))} (the measurement "
            "had finished: every number is in the tables)")


def with_note(data: dict[str, str], note: str) -> dict[str, str]:
    """``data`` with ``note`` as a line of its own after the rest, in text and HTML."""
    return {**data, "text/plain": f"{data['text/plain']}\n\n{note}",
            "text/html": f"{data['text/html']}\n<p style='color:#a00'>{html.escape(note)}</p>"}


def text(c: Comparison | Sweep | Lines, verbose: bool = False, width: int | None = None,
         html_path: str | None = None) -> str:
    """The plain-text report: at a glance, or in full with ``verbose``."""
    if isinstance(c, Lines):
        return lines_text(c)
    return bundle(c, plot=False, verbose=verbose, width=width, html_path=html_path)["text/plain"]


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 90em; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
td, th {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }}
td:first-child, th:first-child {{ text-align: left; }}
img {{ max-width: 100%; }}
pre {{ background: #f6f6f6; padding: 0.5em; overflow-x: auto; }}
</style></head>
<body>
{body}
</body></html>
"""


def page(title: str, body: str) -> str:
    """The one self-contained HTML page of every report: ``title`` (escaped here) over ``body``."""
    return PAGE.format(title=html.escape(printable(title)), body=body)


def html_document(c: Comparison | Sweep, plot: bool = True, note: str | None = None) -> str:
    """A self-contained HTML page of the report, chart embedded; ``note`` follows it."""
    data = bundle(c, plot=plot)
    body = (with_note(data, note) if note else data)["text/html"]
    shown, left = first(list(c.env.items()))
    rows = [(shown_name(str(k)), shown_name(_env_value(v), MAX_CHARS)) for k, v in shown]
    rows += [(more(left, "entries", len(c.env)), "")] if left else []
    env = Table((), rows, css="jitcompare-env")
    return page(f"jitcompare: {shown_name(c.entry)}",
                f"{body}\n{fold('Where these numbers came from', env.as_html())}")


def _env_value(v: object) -> str:
    """An environment value as the page shows it: a list joined, None and "" said."""
    if isinstance(v, list | tuple):
        return ", ".join(map(str, v))
    return "—" if v is None else "(not set)" if v == "" else str(v)


def forms(c: Comparison | Sweep | Lines) -> dict[str, str]:
    """What a record shows as itself (a ``Comparison``'s bundle, a ``Lines`` table's forms)."""
    if isinstance(c, Lines):
        return {"text/plain": lines_text(c), "text/html": lines_html(c)}
    return bundle(c)


#: The most lines the glance takes (at the terminal's width, where it is known).
GLANCE_LINES = 12


def glance(c: Comparison, html: str | None = None) -> list[Block]:
    """The comparison at a glance, as blocks (``html``: where the HTML report was written):
    what else was found said briefly where in full it would pass :data:`GLANCE_LINES`; then
    a variant's error, whole."""
    first_note = notes(c, 1)[:1] if not c.nested.helpers else []  # why none was nested
    table = [Table((clock_name(c.clock_of(FIRST_CALL)), *VARIANTS, "flat/nested"),
                   [_stage_row(c, p) for p in PHASES], indent="  ")] \
        if not nothing_measured(c) else []
    head = [Para([("jitcompare: ", Code(c.entry), " — ", *prose(verdict_line(c)))], "verdict",
                 bold=True), *table, *first_note]
    errors = [Pre(f"error: {v.error}", "error") for v in c.variants.values() if v.error]
    for brief, terse in ((False, False), (True, False), (True, True)):
        shown = [*head, Para([line for line in (why_line(c, terse), found_line(c, brief),
                                                sampled_line(c, brief), more_line(c, html, terse))
                            if line]), *errors]
        if len(as_text(shown).splitlines()) <= GLANCE_LINES:
            break
    return shown


def verdict_line(c: Comparison) -> str:
    """The glance's verdict: one number on the clock that decides (else the verdict's headline)."""
    first, clock = c.verdict.difference, c.clock_of(FIRST_CALL)
    if not comparison_headline(c, first):  # failed, nothing nested, stopped, not measured
        return c.verdict.headline
    helpers = helpers_named(c)
    flat, nested = (median(on(c.judged(v).samples, FIRST_CALL, clock)) for v in VARIANTS)
    runs = [len(c.judged(v).samples.get(FIRST_CALL, ())) for v in VARIANTS]  # cold ones
    each = f"{counted(runs[0], 'run')} each" if runs[0] == runs[1] else \
        f"{runs[0]} flat and {runs[1]} nested runs"
    numbers = f"{fmt_s(flat)} → {fmt_s(nested)}{' wall time' * (clock == WALL)}, {each}"
    if first.kind == INCONCLUSIVE:
        return (f"nested jit on {helpers}, first call: {say(first, clock)} "
                f"({times(first, clock)} seen, {interval(first, numbers)[1:]}; "
                f"{undecided_reason(first, c.repeats_ended, c.stopped)}")
    said = f"{say(first, clock)} to the first call" if first.kind == SAME else \
        f"the first call{' take' * (clock == CPU)} {say(first, clock)}"
    return f"nested jit on {helpers} makes {said} {interval(first, numbers)}"


def _stage_row(c: Comparison, phase: str) -> list[str]:
    """A stage's medians and ratio on its deciding clock (named where not the header's)."""
    clock = c.clock_of(phase)
    label = PHASE_LABELS[phase]
    if clock != c.clock_of(FIRST_CALL):
        label += f" ({clock_name(clock)})"
    return [label, *(fmt_s(median(on(c.judged(v).samples, phase, clock))) for v in VARIANTS),
            stage_ratio(c, phase)]


def why_line(c: Comparison, terse: bool = False) -> str:
    """The biggest measured cause and what to do about it ("" where none was measured);
    ``terse``: without the programs' sizes."""
    if savings := [x for x in c.why if x.kind == SAVING]:
        return f"why: {_saving(c, savings[0], terse)}"
    stages = [x for x in c.why if x.kind == STAGE]
    if not stages:
        return ""
    x = max(stages, key=lambda s: s.seconds)
    fix = f"; what to do: {x.fix}" if x.fix else ""
    return f"why: {x.name} takes {fmt_s(x.seconds)} of the flat first call{fix}"


def _saving(c: Comparison, x: Cause, terse: bool = False) -> str:
    """``flat inlines `f` at 16 calls (…); `jax.jit` on `f` saves 535 ms``, or its name."""
    if x.maker != "nesting":
        return f"{x.name} saves {fmt_s(x.seconds)}{'; what to do: ' + x.fix if x.fix else ''}"
    calls = sum(c.nested.helper_calls.values())
    helpers = helpers_named(c)
    eqns = (f" ({c.flat.jaxpr_eqns:,} jaxpr equations against {c.nested.jaxpr_eqns:,})"
            if None not in (c.flat.jaxpr_eqns, c.nested.jaxpr_eqns) and not terse else "")
    inlined = f"flat inlines {helpers} at {counted(calls, 'call')}{eqns}; " if calls else ""
    return f"{inlined}{x.fix or 'nesting'} saves {fmt_s(x.seconds)}"


def found_line(c: Comparison, brief: bool = False) -> str:
    """What else the report found, in one line; ``brief``: only a stop and the outputs (the
    clock is in the headline and the table, the rest behind -v)."""
    parts = [f"PARTIAL: {c.stopped}"] if c.stopped else []
    said = outputs_said(c)
    if brief:
        return " · ".join([*parts, said])
    parts += [processes(c).removeprefix(", ")] if processes(c) else []
    if c.clock_of(FIRST_CALL) == CPU:
        wall = c.difference(FIRST_CALL, WALL)
        parts.append(f"busy machine: CPU time judged (wall time: {say(wall)})")
    if (left := sum(len(runs) for runs in c.warm_runs.values())):
        parts.append(f"{counted(left, 'run')} not cold, left out")
    parts.append(said)
    if c.same_compiled is False:  # one program: the execute row says so
        parts.append("XLA compiled them to different programs")
    return " · ".join(parts)


def more_line(c: Comparison, html: str | None, brief: bool = False) -> str:
    """What the full report adds, and where it is (``-v``, ``--why``, the HTML report);
    ``brief``: the flags alone."""
    warned = f", {counted(len(c.warnings), 'warning')}" if c.warnings else ""
    noted = len({n for v in c.variants.values() for n in v.notes})
    noted_said = f", {counted(noted, 'note')}" if noted else ""
    other = WALL if c.clock_of(FIRST_CALL) == CPU else CPU  # the clock the table does not show
    said = ["-v" if brief else
            f"-v (spreads, {clock_name(other)}, program sizes, causes{warned}{noted_said})"
            if not nothing_measured(c) else f"-v (the full report{warned}{noted_said})"]
    if any(x.option for x in c.why if not x.measured):
        said.append("--why")
    if html:
        said.append(f"report: {html}")
    return "more: " + " · ".join(said)

"""What a result looks like, in one place: the MIME bundle the magic displays, the one
a result (or a loaded report) displays as itself, and the self-contained HTML file
of the headless command. Builds figures and text; never displays and imports no
IPython."""

from __future__ import annotations

import html
from collections.abc import Iterator
from inspect import signature
from typing import Any

from ..model import parts as table
from ..model.comparison import Comparison
from ..model.lines import Lines
from ..model.saved.schema import printable
from ..model.sweep import Sweep
from .blocks import Table
from .blocks import first
from .blocks import more
from .blocks import shown_name
from .causes.why import section as why_section
from .comparison import html_summary
from .comparison import text_table
from .diff import html as diff_html
from .diff import text as diff_text
from .drawing import load_charts
from .lines import html_table as lines_html
from .lines import text as lines_text
from .sweep import sweep_html
from .sweep import sweep_text
from .target import record as target_record
from .target import section as target_section

#: The most characters of one environment value the HTML page shows (``XLA_FLAGS`` is long).
MAX_CHARS = 2000

def chart_png(c: Comparison | Sweep) -> bytes | None:
    """The result's chart as PNG bytes (the sweep chart for a sweep)."""
    load_charts()
    from .charts.phases import phases_figure
    from .charts.phases import to_png
    from .charts.sweep import sweep_figure

    if isinstance(c, Sweep):
        return to_png(sweep_figure(c))
    if not any(v.ok for v in c.variants.values()):
        return None
    return to_png(phases_figure(c))


def bundle(r: Comparison | Sweep, plot: bool = True, verbose: bool = False) -> dict[str, str]:
    """``{"text/plain", "text/html"}`` for ``r``: what the magic shows and what ``r`` shows.

    The comparison's table, then the sections its options added (:func:`sections`).
    For a sweep, its table, then the diff against ``--baseline`` and the sections of its
    last value, under a line that says so. Each part shows its answer first, the rest
    folded in HTML and in text only ``verbose`` (``-v``).
    """
    if isinstance(r, Comparison) and (t := target_record(r)) is not None:  # --target
        report, report_page = target_section(r, t, verbose)
        data = {"text/plain": report, "text/html": report_page}
        for text_, page_ in sections(r, plot, why=False, verbose=verbose):
            data = {"text/plain": f"{data['text/plain']}\n\n{text_}",
                    "text/html": f"{data['text/html']}\n{page_}"}
        return data
    png = chart_png(r) if plot else None
    if isinstance(r, Sweep):
        data = {"text/plain": sweep_text(r, verbose), "text/html": sweep_html(r, png, verbose)}
        last = r.last  # its causes where the sweep measured more than the comparison
        asked = any(last.part(p.name) is not None for p in table.PARTS if p.in_why)
        shown = list(sections(last, plot, why=asked, verbose=verbose))
        if shown or r.baseline is not None:
            said = last_value_line(r)  # what follows is of one value, not of the sweep
            data["text/plain"] += f"\n\n{said}"
            data["text/html"] += f"\n<h3>{html.escape(said)}</h3>"
        if r.baseline is not None:  # --baseline: the last value's diff, after the sweep
            shown.insert(0, (diff_text(r.baseline, verbose), diff_html(r.baseline, verbose)))
    else:
        data = {"text/plain": text_table(r), "text/html": html_summary(r, png)}
        shown = list(sections(r, plot, verbose=verbose))
    for text, page in shown:
        data["text/plain"] += "\n\n" + text
        data["text/html"] += "\n" + page
    return data


def sections(c: Comparison, plot: bool = True, why: bool = True,
             verbose: bool = False) -> Iterator[tuple[str, str]]:
    """What follows a comparison's table, as (text, HTML): the measured causes of its
    first call ranked (``why``), then each part's section in the report's order (the
    table of parts' ``shown``: the per-line tables, the big constants passed as
    arguments, the second start, XLA's passes, the four orderings and their chart, so
    that they survive where the toggle widget cannot run, then the per-helper table,
    chart and advice)."""
    causes = why_section(c, verbose) if why else None
    if causes:
        yield causes
    for part in sorted(table.PARTS, key=lambda p: p.shown):
        show = part.renderer()
        told = {"verbose": verbose} if show and "verbose" in signature(show).parameters else {}
        shown = show(c, plot, **told) if show is not None else None
        if shown is not None:
            yield shown


def last_value_line(s: Sweep) -> str:
    """The heading over what a sweep shows of its last value only (the diff against
    ``--baseline``, ``--lines``, the orderings, attribution and advice): which value."""
    value = shown_name(f"{s.name}={s.values[-1]!r}")
    return f"For {value}, the last value measured (the sweep ran what follows on it alone):"


def stopped_note(parts: list[str]) -> str:
    """The PARTIAL line of a result whose showing Ctrl-C stopped (``parts``: what it
    stopped or left out, "the charts"): the measurement itself is whole."""
    return (f"PARTIAL: Ctrl-C stopped {' and '.join(dict.fromkeys(parts))} (the measurement "
            "had finished: every number is in the tables)")


def with_note(data: dict[str, str], note: str) -> dict[str, str]:
    """``data`` with ``note`` as a line of its own after the rest, in text and HTML."""
    return {**data, "text/plain": f"{data['text/plain']}\n\n{note}",
            "text/html": f"{data['text/html']}\n<p style='color:#a00'>{html.escape(note)}</p>"}


def text(c: Comparison | Sweep | Lines, verbose: bool = False) -> str:
    """The plain-text report (a terminal, a log, a CI job); in full where ``verbose``."""
    return lines_text(c) if isinstance(c, Lines) else \
        bundle(c, plot=False, verbose=verbose)["text/plain"]


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
    """The one self-contained HTML page of every report (a comparison's, a ledger's):
    ``title`` (plain text, escaped here) over ``body`` (markup built escaped)."""
    return PAGE.format(title=html.escape(printable(title)), body=body)


def html_document(c: Comparison | Sweep, plot: bool = True, note: str | None = None) -> str:
    """A self-contained HTML page of the report: the chart is embedded as PNG data
    (none without ``plot``), nothing is fetched from a network; ``note`` (a PARTIAL
    line) follows the report. The environment's table lists at most
    :data:`~.blocks.MAX_ITEMS` entries."""
    data = bundle(c, plot=plot)
    body = (with_note(data, note) if note else data)["text/html"]
    shown, left = first(list(c.env.items()))
    rows = [(shown_name(str(k)), shown_name(_env_value(v), MAX_CHARS)) for k, v in shown]
    rows += [(more(left, "entries", len(c.env)), "")] if left else []
    env = Table((), rows, css="jitcompare-env")
    return page(f"jitcompare: {shown_name(c.entry)}",
                f"{body}\n<h4>Where these numbers came from</h4>\n{env.as_html()}")


def _env_value(v: Any) -> str:
    if isinstance(v, list | tuple):
        return ", ".join(map(str, v))
    return "—" if v is None else "(not set)" if v == "" else str(v)


def repr_mimebundle(c: Comparison | Sweep | Lines, include: Any = None,
                    exclude: Any = None) -> dict[str, str]:
    """``_repr_mimebundle_`` of a record: for a ``Comparison`` the same bundle the magic
    displays, with the chart; for a ``Lines`` table (``jitmagic.lines``) its two forms."""
    if isinstance(c, Lines):
        data = {"text/plain": lines_text(c), "text/html": lines_html(c)}
    else:
        data = bundle(c)
    if include:
        data = {k: v for k, v in data.items() if k in include}
    if exclude:
        data = {k: v for k, v in data.items() if k not in exclude}
    return data

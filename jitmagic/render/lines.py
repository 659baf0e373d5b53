"""The per-line table as source with a gutter, like ``%lprun``: text and HTML.

Gutter columns: hits, own equations, inclusive equations, StableHLO ops and
Python seconds while tracing, then the code. In HTML the inclusive count is a
heat bar (static inline CSS, so it survives nbconvert), the hottest lines are
marked and lines that cost nothing are greyed. Every string is escaped.
"""

from __future__ import annotations

import html

from ..model.lines import LineRow, Lines, LineTable
from .format import fmt_s

HEADERS = ("hits", "own", "incl.", "HLO", "time")
#: Lines whose inclusive count reaches this share of the hottest line are marked.
HOT_SHARE = 0.5
_WIDTHS = (8, 8, 8, 7, 9)


def _cells(r: LineRow) -> tuple[str, ...]:
    def n(x: int) -> str:
        return f"{x:,}" if x else ""

    return (n(r.hits), n(r.eqns_own), n(r.eqns_inclusive), n(r.hlo_ops),
            fmt_s(r.trace_s) if r.trace_s else "")


def _blocks(table: LineTable) -> list[tuple[str, list[LineRow]]]:
    """Rows grouped by file, in table order."""
    out: list[tuple[str, list[LineRow]]] = []
    for r in table.rows:
        if not out or out[-1][0] != r.file:
            out.append((r.file, []))
        out[-1][1].append(r)
    return out


def _title(lines: Lines, table: LineTable) -> str:
    return (f"{table.variant}: {table.total_eqns:,} jaxpr equations, "
            f"{table.total_hlo_ops:,} StableHLO ops")


def text_table(lines: Lines, table: LineTable) -> str:
    """One variant's table as plain text."""
    head = "".join(h.rjust(w) for h, w in zip(HEADERS, _WIDTHS, strict=True))
    out = [_title(lines, table), f"{head}  {'line':>5}  code"]
    for file, rows in _blocks(table):
        out.append(f"{'':>{sum(_WIDTHS)}}  {'':>5}  # {file}")
        for r in rows:
            gutter = "".join(c.rjust(w) for c, w in zip(_cells(r), _WIDTHS, strict=True))
            out.append(f"{gutter}  {r.line:>5}  {r.text}")
    return "\n".join(out)


def text(lines: Lines) -> str:
    """Every variant's table, then the hints: for terminals and ``str()``."""
    parts = [f"Program size by source line: {lines.entry}"]
    parts += [text_table(lines, t) for t in lines.tables.values()]
    parts += [f"Hint: {h}" for h in lines.hints()]
    return "\n\n".join(parts)


def _html_row(r: LineRow, peak: int) -> str:
    share = r.eqns_inclusive / peak if peak else 0.0
    hot = peak and share >= HOT_SHARE
    colour = f"rgba(220,60,30,{0.15 + 0.6 * share:.2f})"
    bar = (f'<div style="width:{100 * share:.1f}%;background:{colour};height:1em;'
           f'min-width:{1 if r.eqns_inclusive else 0}px"></div>')
    style = "" if r.costs else "color:#999;"
    style += "font-weight:bold;" if hot else ""
    mark = "🔥" if hot else ""
    cells = "".join(f'<td style="text-align:right;padding:0 .5em">{html.escape(c)}</td>'
                    for c in _cells(r))
    return (f'<tr style="{style}"><td style="width:8em">{bar}</td>{cells}'
            f'<td style="text-align:right;padding:0 .5em">{mark}{r.line}</td>'
            f'<td style="white-space:pre;font-family:monospace">{html.escape(r.text)}</td></tr>')


def html_variant(lines: Lines, table: LineTable) -> str:
    """One variant's table as a static HTML table with a heat-bar gutter."""
    peak = max((r.eqns_inclusive for r in table.rows), default=0)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ("", *HEADERS, "line", "code"))
    body = []
    for file, rows in _blocks(table):
        body.append(f'<tr><td colspan="8" style="font-style:italic">{html.escape(file)}</td></tr>')
        body += [_html_row(r, peak) for r in rows]
    return (f"<h4>{html.escape(_title(lines, table))}</h4>"
            f'<table style="border-collapse:collapse;font-size:90%"><thead><tr>{head}</tr>'
            f"</thead><tbody>{''.join(body)}</tbody></table>")


def html_table(lines: Lines) -> str:
    """Every variant's table, then the hints, as one HTML fragment."""
    parts = [f"<h3>Program size by source line: <code>{html.escape(lines.entry)}</code></h3>"]
    parts += [html_variant(lines, t) for t in lines.tables.values()]
    parts += [f"<p><b>Hint:</b> {html.escape(h)}</p>" for h in lines.hints()]
    return f'<div class="jitmagic-lines">{"".join(parts)}</div>'

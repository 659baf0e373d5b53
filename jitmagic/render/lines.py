"""The per-line table as source with a gutter, like ``%lprun``: text and HTML."""

from __future__ import annotations

import html
from collections.abc import Callable, Collection

from ..model.comparison import Comparison
from ..model.lines import CONSTANT_BYTES, HELPER_SHARE, LineRow, Lines, LineTable, LoopCall
from ..model.saved.schema import printable
from ..model.shown import register
from ..model.stats.units import counted, fmt_bytes, fmt_s
from .blocks import fitted

#: Rows shown per table at most (text and HTML alike).
MAX_ROWS = 300
#: Lines whose inclusive count reaches this share of the hottest line are marked.
HOT_SHARE = 0.5
HOT_MARK = "*"
HOT_LEGEND = (f"{HOT_MARK} hot: the line's inclusive equations reach {HOT_SHARE:.0%} "
              "of the hottest line's")


def _n(x: int | None) -> str:
    return f"{x:,}" if x else ""


#: (header, text width, cell, whether the table has the column)
_COLUMNS: tuple[tuple[str, int, Callable[[LineRow], str], Callable[[LineTable], bool]], ...] = (
    ("hits", 8, lambda r: _n(r.hits), lambda t: t.has_hits),
    ("own", 8, lambda r: _n(r.eqns_own), lambda t: True),
    ("incl.", 8, lambda r: _n(r.eqns_inclusive), lambda t: True),
    ("HLO", 7, lambda r: _n(r.hlo_ops), lambda t: True),
    ("time", 9, lambda r: fmt_s(r.trace_s) if r.trace_s else "", lambda t: t.has_time),
    ("consts", 10, lambda r: fmt_bytes(r.const_bytes), lambda t: t.has_constants),
)


def _columns(table: LineTable) -> list[tuple[str, int, Callable[[LineRow], str]]]:
    return [(h, w, cell) for h, w, cell, has in _COLUMNS if has(table)]


def shown_rows(table: LineTable, limit: int = MAX_ROWS) -> tuple[list[LineRow], int]:
    """The rows to show (at most ``limit``, most inclusive kept) and how many were left out."""
    rows = list(table.rows)
    if len(rows) <= limit:
        return rows, 0
    ranked = sorted(range(len(rows)), key=lambda i: (
        -rows[i].eqns_inclusive, -rows[i].hlo_ops, -(rows[i].hits or 0), i))
    kept = sorted(ranked[:limit])
    return [rows[i] for i in kept], len(rows) - limit


def _blocks(rows: list[LineRow]) -> list[tuple[str, list[LineRow | None]]]:
    """Rows grouped by file, in table order; None where rows in between are not shown."""
    out: list[tuple[str, list[LineRow | None]]] = []
    for r in rows:
        if not out or out[-1][0] != r.file:
            out.append((r.file, []))
        block = out[-1][1]
        last = next((x for x in reversed(block) if x is not None), None)
        if last is not None and r.line > last.line + 1:
            block.append(None)
        block.append(r)
    return out


def _peak(table: LineTable) -> int:
    return max((r.eqns_inclusive for r in table.rows), default=0)


def _hot(r: LineRow, peak: int) -> bool:
    return bool(peak) and r.eqns_inclusive / peak >= HOT_SHARE


def _title(table: LineTable) -> str:
    count, size = table.constants or (0, 0)
    consts = f", {counted(count, 'array constant')} ({fmt_bytes(size)})" if count else ""
    return (f"{table.variant}: {table.total_eqns:,} jaxpr equations, "
            f"{table.total_hlo_ops:,} StableHLO ops{consts}")


def _footer(table: LineTable, left_out: int) -> list[str]:
    peak = _peak(table)
    out = [HOT_LEGEND] if any(_hot(r, peak) for r in table.rows) else []
    if left_out:
        out.append(f"{left_out:,} of {len(table.rows):,} lines left out: shown are the "
                   f"{len(table.rows) - left_out:,} with the most inclusive equations")
    return [x for line in [*out, *(f"Note: {n}" for n in table.notes)] for x in fitted(line)]


def text_table(lines: Lines, table: LineTable) -> str:
    """One variant's table as plain text."""
    cols = _columns(table)
    width = sum(w for _, w, _ in cols)
    head = "".join(h.rjust(w) for h, w, _ in cols)
    out = [_title(table), f"{head}  {'line':>6}  code"]
    rows, left_out = shown_rows(table)
    peak = _peak(table)
    for file, block in _blocks(rows):
        out.append(f"{'':>{width}}  {'':>6}  # {table.label(file)}")
        for r in block:
            if r is None:
                out.append(f"{'':>{width}}  {'...':>6}")
                continue
            gutter = "".join(cell(r).rjust(w) for _, w, cell in cols)
            mark = HOT_MARK if _hot(r, peak) else ""
            out.append(f"{gutter}  {mark + str(r.line):>6}  {r.text}")
    return "\n".join(out + _footer(table, left_out))


def _counted(lines: Lines) -> str:
    """What a stopped ``Lines`` shows: the tables it finished, or that there are none."""
    return "showing the tables counted" if lines.tables else "no table was finished"


def text(lines: Lines, nested: Collection[str] = ()) -> str:
    """Every variant's table, then the hints, as text (``nested``: the helpers nested)."""
    parts = [f"Program size by source line: {lines.entry}"]
    parts += [f"PARTIAL: {lines.stopped}; {_counted(lines)}"] if lines.stopped else []
    parts += [text_table(lines, t) for t in lines.tables.values()]
    parts += ["\n".join(fitted(f"Hint: {h}")) for h in lines.hints(nested)]
    return printable("\n\n".join(parts), lines=True)


_NUM = 'style="text-align:right;padding:0 .5em"'
_CODE = 'style="white-space:pre;text-align:left;font-family:monospace;padding:0 .5em"'


def _html_row(r: LineRow, peak: int, cols: list) -> str:
    share = r.eqns_inclusive / peak if peak else 0.0
    hot = _hot(r, peak)
    colour = f"rgba(220,60,30,{0.15 + 0.6 * share:.2f})"
    bar = (f'<div style="width:{100 * share:.1f}%;background:{colour};height:1em;'
           f'min-width:{1 if r.eqns_inclusive else 0}px"></div>')
    style = "" if r.costs else "color:#999;"
    style += "font-weight:bold;" if hot else ""
    mark = HOT_MARK if hot else ""
    cells = "".join(f"<td {_NUM}>{html.escape(cell(r))}</td>" for _, _, cell in cols)
    return (f'<tr style="{style}"><td style="width:8em;text-align:left">{bar}</td>{cells}'
            f"<td {_NUM}>{mark}{r.line}</td><td {_CODE}>{html.escape(r.text)}</td></tr>")


def html_variant(lines: Lines, table: LineTable) -> str:
    """One variant's table as a static HTML table with a heat-bar gutter."""
    cols = _columns(table)
    span = len(cols) + 3
    peak = _peak(table)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ("", *(c[0] for c in cols), "line"))
    head += '<th style="text-align:left">code</th>'
    rows, left_out = shown_rows(table)
    body = []
    for file, block in _blocks(rows):
        body.append(f'<tr><td colspan="{span}" style="font-style:italic;text-align:left">'
                    f"{html.escape(table.label(file))}</td></tr>")
        body += [f'<tr><td colspan="{span}" style="text-align:left;color:#999">...</td></tr>'
                 if r is None else _html_row(r, peak, cols) for r in block]
    footer = "".join(f'<p style="font-size:90%">{html.escape(n)}</p>'
                     for n in _footer(table, left_out))
    return (f"<h4>{html.escape(_title(table))}</h4>"
            f'<table style="border-collapse:collapse;font-size:90%"><thead><tr>{head}</tr>'
            f"</thead><tbody>{''.join(body)}</tbody></table>{footer}")


def html_table(lines: Lines, nested: Collection[str] = ()) -> str:
    """Every variant's table, then the hints, as one HTML fragment."""
    parts = [f"<h3>Program size by source line: <code>{html.escape(lines.entry)}</code></h3>"]
    if lines.stopped:
        parts.append(f"<p style='color:#a00'><b>Partial:</b> {html.escape(lines.stopped)}; "
                     f"{_counted(lines)}</p>")
    parts += [html_variant(lines, t) for t in lines.tables.values()]
    parts += [f"<p><b>Hint:</b> {html.escape(h)}</p>" for h in lines.hints(nested)]
    return f'<div class="jitmagic-lines">{"".join(parts)}</div>'


def section(c: Comparison, plot: bool = True, verbose: bool = False) -> tuple[str, str] | None:
    """The per-line tables of ``c``, where ``--lines`` counted them."""
    if c.lines is None:
        return None
    nested = c.nested.helper_calls
    return text(c.lines, nested), html_table(c.lines, nested)


# --- the hints: what the numbers say to do -------------------------------------------

#: What to write instead of a scan's ``unroll`` above 1.
UNROLL_FIX = ("`unroll=1` (the default) compiles the body once, its steps then run one after "
              "another (what that saves on the first call, and costs per call, is not measured)")


def unroll_said(x: LoopCall, total: int) -> str:
    """``line 12 calls `jax.lax.scan` with unroll=8, 64 steps: XLA compiles 8 copies …``."""
    steps = f", {x.length:,} steps" if x.length is not None else ""
    times = f" {x.calls:,} times" if x.calls > 1 else ""
    return (f"line {x.line} calls `jax.lax.{x.primitive}`{times} with unroll={x.unroll}"
            f"{steps}: {unroll_copies(x, total)}")


def unroll_copies(x: LoopCall, total: int) -> str:
    """``XLA compiles 8 copies of its body, 7 of the program's 12 jaxpr equations (58%)``."""
    share = f" ({x.body_eqns / total:.0%})" if total else ""
    body = "its body," if x.calls == 1 else "the body in each; their bodies are"
    return (f"XLA compiles {x.copies} copies of {body} {x.body_eqns:,} of the program's "
            f"{total:,} jaxpr equations{share}")


def hints(table: LineTable, nested: Collection[str] = ()) -> list[str]:
    """Advice from ``table``: unrolled loops, helpers traced per call, big constants."""
    unrolled = [f"{unroll_said(x, table.total_eqns)}; {UNROLL_FIX}" for x in table.unrolled()]
    constants = [f"line {r.line} reads {fmt_bytes(r.const_bytes_own)} of array constants "
                 "(arrays that are not arguments: a global's, a closure's, or one made while "
                 "tracing): XLA compiles them into the program; passed to the function as "
                 "an argument they stay out of it"
                 for r in table.rows if (r.const_bytes_own or 0) >= CONSTANT_BYTES]
    return [h for h in (*unrolled, loop_hint(table), *_helper_hints(table, nested), *constants)
            if h]


def loop_hint(table: LineTable) -> str | None:
    """The Python loop that builds most of the program, and what to write instead."""
    found = table.python_loop()
    if found is None:
        return None
    r, share = found
    fix = ("`jax.lax.scan` or `jax.lax.fori_loop` traces the body once (what the "
           "rewrite saves is not measured)")
    loop = table.loop_line(r)
    inside = "a Python loop" if loop in (None, r.line) else f"the Python loop at line {loop}"
    if r.hits is None:
        return (f"line {r.line} built {share:.0%} of the program and runs inside {inside}: "
                f"a Python loop unrolls into the program; {fix}")
    return (f"line {r.line} ran {r.hits:,} times while tracing and built {share:.0%} of the "
            f"program inside {inside}: a Python loop unrolls into the program; {fix}")


def _helper_hints(table: LineTable, nested: Collection[str]) -> list[str]:
    total = table.total_eqns
    out = []
    for f in table.functions:
        calls = f.calls or 0
        if calls < 2 or not f.is_helper_like or f.name == table.entry or not total:
            continue
        owned = sum(r.eqns_own for r in table.rows if f.holds(r))
        if owned >= HELPER_SHARE * total:
            name = f.helper or f.name.rsplit(".", 1)[-1]
            fix = ("the nested variant traces it once, and the comparison above says "
                   "what that changed" if {name, f.name} & set(nested) else
                   f"nesting it (`--nest {name}`) traces it once")
            many = (f"is inlined {calls:,} times (its jit calls in the nested program)"
                    if f.in_program else f"was traced {calls:,} times")
            again = "; " if f.in_program else ": each call is inlined again; "
            out.append(f"`{name}` {many} and its lines built {owned / total:.0%} of the "
                       f"program{again}{fix}")
    return out


def register_hints() -> None:
    """Word a per-line table's hints here (:mod:`jitmagic.model.shown`'s registry)."""
    register("hints", LineTable, hints)
    register("loop hint", LineTable, loop_hint)

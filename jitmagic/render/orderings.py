"""Text and HTML for the vmap/jit orderings, and the verdict, worked out from the numbers.

Every figure shown comes from an :class:`~jitmagic.orderings.Orderings`'
samples; what was not measured shows as "—". The tables here are what a
static export (``jupyter nbconvert --to html``) keeps when widgets cannot run.
"""

from __future__ import annotations

import base64
import html
import math

from ..model.orderings import ORDERINGS, REFERENCE, TOGGLED, OrderingRow, Orderings
from . import comparison
from .format import fmt_ratio, fmt_s

#: Per-call times closer than this ratio are "about the same".
SAME_SPEED = 1.10
COLUMNS = ("ordering", "first call", "per call", "per call / jit(vmap(f))", "JAX compiles",
           "jaxpr eqns", "StableHLO bytes", "same program")


def _count(x: int | None) -> str:
    return "—" if x is None else f"{x:,}"


def _same(row: OrderingRow) -> str:
    if row.name == REFERENCE:
        return "(reference)"
    return {True: "yes", False: "no", None: "—"}[row.same_program]


def _compiles(row: OrderingRow) -> str:
    if row.compile_events is None:
        return "—"
    return f"{row.compile_events} ({fmt_s(row.compile_s)})"


def row_cells(o: Orderings, name: str) -> tuple[str, ...]:
    """One table row, as the strings both the text and the HTML tables show."""
    row, ref = o[name], o[REFERENCE]
    return (name, fmt_s(row.first_call_s), fmt_s(row.execute_s),
            fmt_ratio(row.execute_s / ref.execute_s if ref.execute_s else math.nan),
            _compiles(row), _count(row.jaxpr_eqns), _count(row.stablehlo_bytes), _same(row))


def _title(o: Orderings) -> str:
    how = "one example stacked" if o.built_batch else "your batch, in_axes"
    axes = "" if o.built_batch else f" {o.in_axes}"
    return (f"vmap/jit orderings of {o.entry}: batch {o.batch} ({how}{axes}), "
            f"medians of {_repeats(o)} run(s)")


def _repeats(o: Orderings) -> int:
    return max((len(r.samples.get("first_call_s", [])) for r in o.rows.values()), default=0)


def outputs_line(o: Orderings) -> str:
    """Whether the four orderings returned the same values."""
    return comparison.outputs_line(o.outputs_match, o.max_abs_diff, "the orderings",
                               "an ordering failed")


def verdict(o: Orderings, chosen: str = TOGGLED[0]) -> str:
    """One line on ``chosen`` against the other toggled ordering, from the medians."""
    other = TOGGLED[1] if chosen == TOGGLED[0] else TOGGLED[0]
    a, b = o[chosen].execute_s, o[other].execute_s
    if math.isnan(a) or math.isnan(b) or not a:
        return f"{chosen}: per-call time against {other} was not measured."
    ratio = b / a
    if ratio >= SAME_SPEED:
        speed = f"{chosen} is {ratio:.2g}× faster per call than {other}"
    elif ratio <= 1 / SAME_SPEED:
        speed = f"{chosen} is {1 / ratio:.2g}× slower per call than {other}"
    else:
        speed = f"{chosen} and {other} are within {SAME_SPEED - 1:.0%} per call"
    speed += f" ({fmt_s(a)} against {fmt_s(b)})"
    same = o[TOGGLED[1]].same_program
    if same is None:
        program = "their XLA programs were not compared"
    elif not same:
        program = "they compile to different XLA programs"
    elif ratio >= SAME_SPEED or ratio <= 1 / SAME_SPEED:
        program = ("both compile to the same program; the difference is Python dispatch "
                   "(vmap(jit(f)) batches in Python on every call)")
    else:
        program = "both compile to the same program"
    return f"{speed}; {program}."


def text_table(o: Orderings) -> str:
    """All four orderings as plain text: what a terminal or a text export shows."""
    rows = [COLUMNS] + [row_cells(o, n) for n in ORDERINGS if n in o.rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = [_title(o)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
              for r in rows]
    lines += [outputs_line(o), verdict(o)]
    lines += [f"error in {r.name}: {r.error}" for r in o.rows.values() if r.error]
    return "\n".join(lines)


def png_img(png: bytes, alt: str) -> str:
    """An ``<img>`` with the PNG inline, so it shows with no kernel and no network."""
    data = base64.b64encode(png).decode()
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"/>'


def html_table(o: Orderings, png: bytes | None = None) -> str:
    """All four orderings as an HTML table (with spreads), the chart, outputs and verdict."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    body = []
    for name in ORDERINGS:
        if name not in o.rows:
            continue
        cells = list(row_cells(o, name))
        cells[1] += _spread(o[name], "first_call_s")
        cells[2] += _spread(o[name], "execute_s")
        tds = "".join(f"<td>{c}</td>" for c in [f"<code>{html.escape(cells[0])}</code>"]
                      + cells[1:])
        body.append(f"<tr>{tds}</tr>")
    parts = [f"<h4>{html.escape(_title(o))}</h4>"]
    if png:
        parts.append(png_img(png, "first call and per call, four orderings"))
    parts.append(f'<table class="jitcompare-orderings"><tr>{head}</tr>{"".join(body)}</table>')
    parts.append(f"<p><b>{html.escape(verdict(o))}</b><br>{html.escape(outputs_line(o))}</p>")
    parts += [f"<pre style='color:#a00'>{html.escape(r.name)} failed:\n{html.escape(r.error)}"
              "</pre>" for r in o.rows.values() if r.error]
    return "\n".join(parts)


def _spread(row: OrderingRow, key: str) -> str:
    xs = row.samples.get(key, [])
    if len(xs) < 2 or min(xs) == max(xs):
        return ""
    return f"<br><small>{fmt_s(min(xs))}–{fmt_s(max(xs))}</small>"


def panel_text(o: Orderings, chosen: str) -> str:
    """What the toggle shows for one ordering, as plain text."""
    row = o[chosen]
    lines = [verdict(o, chosen), ""]
    lines += [f"{label}: {value}" for label, value in panel_numbers(o, chosen)]
    lines += ["", f"jaxpr of {chosen}:", row.jaxpr_text or "—"]
    return "\n".join(lines)


def panel_numbers(o: Orderings, chosen: str) -> list[tuple[str, str]]:
    """(label, value) pairs for one ordering's numbers."""
    row = o[chosen]
    return [
        ("first call (cold)", fmt_s(row.first_call_s)),
        ("per call (steady)", fmt_s(row.execute_s)),
        (f"per call / {REFERENCE}", row_cells(o, chosen)[3]),
        ("XLA compiles JAX reported in the first call", _compiles(row)),
        ("jaxpr equations (top level)", _count(row.jaxpr_eqns)),
        ("jit calls in the jaxpr", _count(row.nested_calls)),
        ("StableHLO bytes", _count(row.stablehlo_bytes)),
        ("optimized HLO instructions", _count(row.hlo_instructions)),
        (f"same program as {REFERENCE}", _same(row)),
    ]


def panel_html(o: Orderings, chosen: str, png: bytes | None = None) -> str:
    """What the toggle shows for one ordering: verdict, chart, numbers, jaxpr."""
    row = o[chosen]
    rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>"
                   for k, v in panel_numbers(o, chosen))
    parts = [f'<p class="jitcompare-verdict"><b>{html.escape(verdict(o, chosen))}</b></p>']
    if png:
        parts.append(png_img(png, f"{chosen}: first call and per call"))
    parts.append(f'<table class="jitcompare-ordering">{rows}</table>')
    parts.append(f"<details><summary>jaxpr of <code>{html.escape(chosen)}</code> "
                 f"({_count(row.jaxpr_eqns)} equations)</summary>"
                 f"<pre>{html.escape(row.jaxpr_text)}</pre></details>")
    return "\n".join(parts)

"""Text and HTML tables of a sweep: one row per value, flat and nested per phase,
and a last row with each column's fitted growth exponent."""

from __future__ import annotations

import base64
import html

from ..model.comparison import PHASES, VARIANTS, Comparison
from ..model.sweep import exponents, medians
from .format import fmt_exponent, fmt_s

SHORT = {"trace_s": "trace", "lower_s": "lower", "compile_s": "compile",
         "first_call_s": "first call", "execute_s": "execute"}


def _rows(c: Comparison) -> list[list[str]]:
    """Header, then one row per (value, variant), then one growth row per variant."""
    name, values = c.sweep.name, c.sweep.values
    meds, ks = medians(c), exponents(c)
    rows = [[name, "variant"] + [SHORT[p] for p in PHASES]]
    rows += [[repr(value), v] + [fmt_s(meds[v][p][i]) for p in PHASES]
             for i, value in enumerate(values) for v in VARIANTS]
    rows += [["growth", v] + [fmt_exponent(name, ks[v][p]) for p in PHASES] for v in VARIANTS]
    return rows


def sweep_text(c: Comparison) -> str:
    """The sweep as a plain-text table, with the growth exponents and any warnings."""
    sweep = c.sweep
    rows = _rows(c)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [f"jitcompare sweep: {c.entry} over {sweep.name} = "
             f"{', '.join(map(repr, sweep.values))} (medians per value)"]
    lines += ["  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip()
              for r in rows]
    lines.append(f"growth: seconds ~ {sweep.name}^k, k fitted on log-log medians")
    lines += [f"{kind} ({sweep.name}={v!r}): {w}" for kind, v, w in _warnings(c)]
    lines.append(f"sweep wall time {fmt_s(sweep.wall_s)}")
    return "\n".join(lines)


def sweep_html(c: Comparison, png: bytes | None = None) -> str:
    """The sweep as HTML: the chart (if given), the table, and the warnings."""
    sweep = c.sweep
    rows = _rows(c)
    head = "".join(f"<th>{html.escape(x)}</th>" for x in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{html.escape(x)}</td>" for x in r) + "</tr>"
                   for r in rows[1:])
    parts = [f"<h4>jitcompare sweep: <code>{html.escape(c.entry)}</code> over "
             f"<code>{html.escape(sweep.name)}</code></h4>"]
    if png:
        parts.append(f'<img alt="phases against {html.escape(sweep.name)}" '
                     f'src="data:image/png;base64,{base64.b64encode(png).decode()}"/>')
    parts.append(f'<table class="jitcompare-sweep"><tr>{head}</tr>{body}</table>')
    parts.append(f"<p>growth: seconds ~ {html.escape(sweep.name)}<sup>k</sup>, k fitted "
                 f"on log-log medians; sweep wall time {fmt_s(sweep.wall_s)}</p>")
    parts += [f"<pre style='color:#a60'>{kind} ({html.escape(sweep.name)}="
              f"{html.escape(repr(v))}): {html.escape(w)}</pre>" for kind, v, w in _warnings(c)]
    return "\n".join(parts)


def _warnings(c: Comparison) -> list[tuple[str, object, str]]:
    """(kind, value, message) for each point's failed variants and warnings, in sweep order."""
    sweep = c.sweep
    out = []
    for value, point in zip(sweep.values, sweep.points, strict=True):
        out += [("error", value, v.error) for v in point.variants.values() if v.error]
        out += [("warning", value, w) for w in point.warnings]
    return out

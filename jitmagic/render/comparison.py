"""Text and HTML renderings of a :class:`~jitmagic.result.Comparison`.

Every number shown here comes from the result's samples; a phase that was not
measured shows as "—", never as a made-up value.
"""

from __future__ import annotations

import base64
import html
import math
import re

from ..model.comparison import PHASE_LABELS, PHASES, Comparison
from .format import fmt_ratio, fmt_s

STRUCTURE = (
    ("jaxpr_eqns", "jaxpr equations"),
    ("nested_calls", "nested jit calls"),
    ("stablehlo_bytes", "StableHLO bytes"),
    ("stablehlo_calls", "`call` ops in StableHLO"),
    ("compiled_calls", "`call` ops after XLA"),
)


def _ratio_cell(c: Comparison, phase: str) -> str:
    """The flat/nested ratio, flagged where the repeats' spread is wider than the gap."""
    flag = " (not significant)" if c.significant(phase) is False else ""
    return fmt_ratio(c.ratio(phase)) + flag


def _spread(c: Comparison, variant: str, phase: str) -> str:
    lo, hi = c.variants[variant].spread(phase)
    return "" if math.isnan(lo) or lo == hi else f"{fmt_s(lo)}–{fmt_s(hi)}"


def _median_and_spread(c: Comparison, variant: str, phase: str) -> str:
    spread = _spread(c, variant, phase)
    return fmt_s(c.variants[variant].median(phase)) + (f" [{spread}]" if spread else "")


def _fmt_count(x: int | None) -> str:
    return "—" if x is None else f"{x:,}"


def verdict(c: Comparison) -> str:
    """One sentence on what nesting changed, worked out from the medians."""
    if not (c.flat.ok and c.nested.ok):
        return "Only one variant ran; see its error below."
    flat, nested = c.flat.cold_start_s, c.nested.cold_start_s
    if math.isnan(flat) or math.isnan(nested):
        return "Some stages were not measured: cannot compare cold starts."
    if not c.nested.helpers:
        return (f"`{c.entry}` calls no helper of yours, so both variants are the same program: "
                "nothing to nest.")
    helpers = ", ".join(f"`{h}`" for h in c.nested.helpers)
    if nested < flat:
        return (f"Nested jit on {helpers} cuts trace+lower+compile from {fmt_s(flat)} to "
                f"{fmt_s(nested)} ({flat / nested:.3g}× less).")
    return (f"Nested jit on {helpers} does not help here: trace+lower+compile "
            f"{fmt_s(flat)} flat against {fmt_s(nested)} nested.")


def text_table(c: Comparison) -> str:
    """A plain-text table: what a terminal, a log, or a static export shows."""
    rows = [("phase", "flat", "nested", "flat/nested")]
    rows += [(PHASE_LABELS[p], *(_median_and_spread(c, v, p) for v in ("flat", "nested")),
              _ratio_cell(c, p)) for p in PHASES]
    rows += [(label, _fmt_count(getattr(c.flat, key)), _fmt_count(getattr(c.nested, key)), "")
             for key, label in STRUCTURE]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [f"jitcompare: {c.entry} (medians of {_repeats(c)} cold runs [min–max])"]
    if c.stopped:
        lines.append(f"PARTIAL: {c.stopped}; showing what was measured so far")
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
              for r in rows]
    lines.append(f"nested helpers: {', '.join(c.nested.helpers) or 'none'}")
    lines.append(_outputs_line(c))
    lines.append(verdict(c))
    lines += [f"error: {v.error}" for v in c.variants.values() if v.error]
    lines += [f"note: {n}" for v in c.variants.values() for n in v.notes]
    lines += [f"warning: {w}" for w in c.warnings]
    lines.append(f"wall time {fmt_s(c.wall_s)}, of which measured {fmt_s(c.measured_s())}")
    return "\n".join(lines)


def _repeats(c: Comparison) -> int:
    return max(len(v.samples.get("trace_s", [])) for v in c.variants.values())


def outputs_line(match: bool | None, max_abs_diff: float | None, between: str,
                 unfinished: str) -> str:
    """Whether the measured functions returned the same values; a mismatch is never hidden."""
    if match is None:
        return f"outputs: not compared ({unfinished})"
    diff = "" if max_abs_diff is None else f" (largest difference {max_abs_diff:.3g})"
    return (f"outputs: {between} match" if match else f"outputs: MISMATCH between {between}") \
        + diff


def _outputs_line(c: Comparison) -> str:
    return outputs_line(c.outputs_match, c.max_abs_diff, "flat and nested",
                        "a variant did not finish")


def _code(text: str) -> str:
    """Escape ``text`` for HTML, showing its `backquoted` names as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def html_summary(c: Comparison, png: bytes | None = None) -> str:
    """An HTML table with spreads, the chart (if given) and the jaxprs, collapsed."""
    head = "<tr><th>phase</th><th>flat</th><th>nested</th><th>flat / nested</th></tr>"
    body = []
    for p in PHASES:
        cells = [f"{fmt_s(c.variants[v].median(p))}<br><small>{_spread(c, v, p)}</small>"
                 for v in ("flat", "nested")]
        body.append(f"<tr><td>{PHASE_LABELS[p]}</td><td>{cells[0]}</td><td>{cells[1]}</td>"
                    f"<td>{_ratio_cell(c, p)}</td></tr>")
    for key, label in STRUCTURE:
        body.append(f"<tr><td>{html.escape(label)}</td><td>{_fmt_count(getattr(c.flat, key))}"
                    f"</td><td>{_fmt_count(getattr(c.nested, key))}</td><td></td></tr>")
    parts = [f"<h4>jitcompare: <code>{html.escape(c.entry)}</code></h4>"]
    if c.stopped:
        parts.append(f"<p style='color:#a00'><b>Partial:</b> {html.escape(c.stopped)}; "
                     "showing what was measured so far.</p>")
    if png:
        parts.append(f'<img alt="phases per variant" src="data:image/png;base64,'
                     f'{base64.b64encode(png).decode()}"/>')
    parts.append(f'<table class="jitcompare">{head}{"".join(body)}</table>')
    parts.append(f"<p>{_code(verdict(c))}<br>"
                 f"nested helpers: {html.escape(', '.join(c.nested.helpers) or 'none')}<br>"
                 f"{html.escape(_outputs_line(c))}<br>"
                 f"wall time {fmt_s(c.wall_s)}, of which measured {fmt_s(c.measured_s())}</p>")
    for v in c.variants.values():
        if v.error:
            parts.append(f"<pre style='color:#a00'>{html.escape(v.error)}</pre>")
        parts += [f"<p><i>note ({v.name}):</i> {html.escape(n)}</p>" for n in v.notes]
    parts += [f"<p style='color:#a60'>warning: {html.escape(w)}</p>" for w in c.warnings]
    for v in c.variants.values():
        if v.jaxpr_text:
            parts.append(f"<details><summary>jaxpr, {v.name} ({_fmt_count(v.jaxpr_eqns)} "
                         f"equations)</summary><pre>{html.escape(v.jaxpr_text)}</pre></details>")
    return "\n".join(parts)

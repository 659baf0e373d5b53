"""Text and HTML for "which helpers to jit": the attribution table and the advice list.

Both read the records' JSON dicts (``Comparison.attribution``/``advice``,
``to_dict()``), so a report re-read with ``Comparison.from_dict`` shows the same.
"""

from __future__ import annotations

import base64
import html
import re
from typing import Any

from ..model.advice import NOISE_FACTOR
from ..model.comparison import Comparison
from .format import fmt_s

#: Above this spread (relative to flat's cold start) the advice says the machine was noisy.
NOISY = 0.25


def attribution_lines(a: dict[str, Any]) -> list[str]:
    """The flat trace split by helper, heaviest first, as aligned text rows."""
    rows = [("helper", "calls", "inclusive", "own", "share of trace")]
    for h in a["helpers"]:
        rows.append((h["helper"], str(h["calls"]), fmt_s(h["inclusive_s"]), fmt_s(h["own_s"]),
                     f"{h['inclusive_share']:.0%} (own {h['share']:.0%})"))
    rows.append((f"{a['entry']} (entry)", "1", fmt_s(a["trace_s"]), fmt_s(a["entry_own_s"]),
                 f"own {a['entry_share']:.0%}"))
    rows.append(("  of which JAX around it", "", "", fmt_s(a["jax_s"]), ""))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = [f"trace time by helper (flat variant, one cold trace of {fmt_s(a['trace_s'])}; "
             f"own times add up to it):"]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
              for r in rows]
    return lines


def advice_lines(adv: dict[str, Any]) -> list[str]:
    """The advice in plain words, best saving first."""
    cold = adv["flat_cold_s"]
    lines = [f"which helpers to jit (cold start = first call from cleared caches, median of "
             f"{adv['repeat']}; a saving counts above its noise: {NOISE_FACTOR} standard errors "
             f"of the difference):"]
    if not adv["ranked"]:
        lines.append("  no helper is called twice or more: nothing to advise")
    for i, c in enumerate(adv["ranked"], 1):
        lines.append(f"  {i}. {candidate_words(c, cold)}")
    everything = ("nesting every helper fails" if adv["all_nested_saving_s"] is None
                  else f"nesting every helper saves {fmt_s(adv['all_nested_saving_s'])}")
    if adv["recommended"]:
        names = ",".join(adv["recommended"])
        lines.append(f"  recommended: --nest {names} saves {fmt_s(adv['recommended_saving_s'])}; "
                     f"{everything}")
    else:
        lines.append(f"  no helper saves measurably on its own; {everything}")
    if adv["noise_s"] is not None and adv["noise_s"] > NOISY * cold:
        lines.append(f"  noisy: the noise reached {adv['noise_s'] / cold:.0%} of the cold start; "
                     f"more repeats (-r) or a quieter machine resolve smaller savings")
    if adv["not_tried"]:
        lines.append(f"  not tried (called once): {', '.join(adv['not_tried'])}")
    return lines


def candidate_words(c: dict[str, Any], flat_cold_s: float) -> str:
    """One helper's verdict: ``jit `layer`: saves 0.41 s of 0.69 s cold start``."""
    name = f"jit `{c['helper']}`"
    if c["error"]:
        return f"{name}: fails under its own jit ({_error_line(c['error'])})"
    execute = (f"; execute {_signed(c['execute_change_s'])} per call"
               if c["execute_change_s"] is not None else "")
    if not c["significant"]:
        change = "shorter" if c["saving_s"] >= 0 else "longer"
        return (f"{name}: no measurable saving (cold start {fmt_s(abs(c['saving_s']))} {change}, "
                f"within the noise of {fmt_s(c['noise_s'])}){execute}")
    return (f"{name}: saves {fmt_s(c['saving_s'])} of {fmt_s(flat_cold_s)} cold start "
            f"({c['calls']} calls; noise {fmt_s(c['noise_s'])}){execute}")


def helpers_text(c: Comparison) -> str:
    """Attribution and advice of a comparison as text; empty if it has neither."""
    lines: list[str] = []
    if c.attribution is not None:
        lines += attribution_lines(c.attribution.to_dict())
    if c.advice is not None:
        lines += advice_lines(c.advice.to_dict())
    return "\n".join(lines)


def helpers_html(c: Comparison, png: bytes | None = None) -> str:
    """The same as HTML: the chart (if given) above the text, preformatted."""
    parts = []
    if png:
        parts.append(f'<img alt="trace time by helper" src="data:image/png;base64,'
                     f'{base64.b64encode(png).decode()}"/>')
    parts.append(f"<pre>{html.escape(helpers_text(c))}</pre>")
    return "\n".join(parts)


def _signed(x: float) -> str:
    return ("+" if x >= 0 else "−") + fmt_s(abs(x))


def _error_line(error: str, width: int = 120) -> str:
    """The exception's own line out of a formatted traceback, cut to ``width``."""
    lines = [ln for ln in error.splitlines() if re.match(r"[A-Za-z_][\w.]*: ", ln)]
    line = (lines or error.splitlines() or [""])[0]
    return line if len(line) <= width else line[:width - 1] + "…"

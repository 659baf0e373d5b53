"""The ledger's chart: compile seconds per function, in parts coloured by reason."""

from __future__ import annotations

from collections.abc import Mapping

from matplotlib.figure import Figure

from ...model.ledger import Ledger
from ...model.ledger.compiles import KINDS
from ...model.stats.units import fmt_s
from .phases import to_png
from .style import (
    BLUE,
    BLUISH_GREEN,
    DPI,
    LABEL_PT,
    LEGEND_PT,
    ORANGE,
    REDDISH_PURPLE,
    SKY_BLUE,
    VERMILLION,
    YELLOW,
    plain,
)

#: One colour per reason; a first compile (a warm-up, not a recompile) is grey.
REASON_COLOURS = dict(zip(KINDS, ("#c8c8c8", VERMILLION, BLUE, SKY_BLUE, ORANGE,
                                  REDDISH_PURPLE, BLUISH_GREEN, YELLOW, "#8c8c8c", "#000000",
                                  "#5a5a5a", "#56b4e9", BLUISH_GREEN), strict=True))
#: Functions drawn (the costliest).
MAX_BARS = 10


def figure(ledger: Ledger, words: Mapping[str, str]) -> Figure | None:
    """The chart, or None where nothing compiled."""
    rows = ledger.functions()[:MAX_BARS]
    if not rows:
        return None
    fig = Figure(figsize=(7.5, 0.9 + 0.42 * len(rows)), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    used: dict[str, None] = {}
    for y, row in enumerate(reversed(rows)):
        left = 0.0
        for reason in sorted(row.reasons, key=lambda r: KINDS.index(r.kind)):
            ax.barh(y, reason.seconds, left=left, color=REASON_COLOURS[reason.kind],
                    edgecolor="white", linewidth=0.5, height=0.6,
                    label=words[reason.kind] if reason.kind not in used else None)
            used.setdefault(reason.kind, None)
            left += reason.seconds
        ax.text(left, y, f" {fmt_s(row.seconds)}, {row.compiles}×", va="center",
                fontsize=LABEL_PT)
    ax.set_yticks(range(len(rows)), [plain(r.function) for r in reversed(rows)],
                  fontsize=LABEL_PT)
    ax.set_xlabel("compile seconds (trace + lower + XLA compile; wall time, JAX's events)",
                  fontsize=LABEL_PT)
    ax.margins(x=0.25)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(title="compiled for", fontsize=LEGEND_PT, title_fontsize=LEGEND_PT,
              loc="lower right", frameon=False)
    return fig


def png(ledger: Ledger, words: Mapping[str, str]) -> bytes | None:
    fig = figure(ledger, words)
    return None if fig is None else to_png(fig)

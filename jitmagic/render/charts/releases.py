"""The releases' chart: the flat program's stages, a log-scale bar per release."""

from __future__ import annotations

import math

from matplotlib.figure import Figure

from ...model.reports.releases import Releases
from ...model.rows import PHASES
from ...model.stats.rule import spread
from ..format import PHASE_LABELS
from . import style as p
from .style import DPI, LEGEND_PT, plain, whisker

#: One colour per release, in the order measured (Okabe and Ito's, as every chart's).
COLORS = (p.SKY_BLUE, p.ORANGE, p.BLUISH_GREEN, p.BLUE, p.VERMILLION, p.REDDISH_PURPLE)


def releases_figure(r: Releases) -> Figure | None:
    """One group of bars per stage, a bar per release (None where none measured)."""
    shown = [(x.release, c.flat) for x in r.results
             if (c := x.measured) is not None and "flat" in c.variants]
    if not shown:
        return None
    fig = Figure(figsize=(9, 4), layout="constrained", dpi=DPI)
    ax = fig.subplots()
    width = 0.8 / len(shown)
    for j, (release, flat) in enumerate(shown):
        at = [i + (j - (len(shown) - 1) / 2) * width for i in range(len(PHASES))]
        medians = [flat.median(p) for p in PHASES]
        ax.bar(at, [0 if math.isnan(m) else m for m in medians], width,
               color=COLORS[j % len(COLORS)], label=plain(release))
        for x, phase in zip(at, PHASES, strict=True):
            if (rng := spread(flat.samples.get(phase, []))) is not None:
                whisker(ax, x, *rng, horizontal=False)
    ax.set_yscale("log")
    ax.set_xticks(range(len(PHASES)), [PHASE_LABELS[p] for p in PHASES])
    ax.set_ylabel("seconds, wall time (median, min–max; log scale)")
    ax.legend(title="jax", fontsize=LEGEND_PT)
    ax.set_title("the flat program's stages under each JAX release", fontsize=11)
    return fig

"""Charts of a comparison, as matplotlib ``Figure`` objects or PNG bytes; never displays."""

from __future__ import annotations

import dataclasses
import io
import math
import textwrap

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ...model.comparison import EXECUTE, Comparison
from ...model.rows import FROM_EVENTS, PHASES, STAGE_PHASES, VARIANTS, VariantResult
from ...model.stats.units import fmt_s, time_unit
from ...model.stats.witness import CPU, FIRST_CALL, Clock, on
from ..comparison import stage_ratio
from ..format import PHASE_LABELS, REST_LABEL
from ..verdicts import clock_name
from .style import DPI, LABEL_PT, LEGEND_PT, PHASE, plain, whisker

#: What each part of a bar is called in the legend.
PART_LABELS = {**PHASE_LABELS, "rest_s": REST_LABEL}
#: The legend's title: its ratios are flat/nested medians.
LEGEND_TITLE = "parts of the first call (flat/nested)"
#: The legend entry of the first-call marker (drawn where the stages were staged).
MARKER = "first call (median)"
#: The most label characters one legend row holds at 10 pt on the 9-inch figure.
LEGEND_ROW_CHARS = 64
#: The x-axis note on a busy machine, where the bars are CPU time, as the verdict is.
BUSY_NOTE = "the machine was busy: wall time stretched with the load, so CPU time (all threads)"
#: The characters a line of the narrow execute panel's title holds.
EXECUTE_TITLE_CHARS = 16
#: The x-axis note where a variant's stages were timed apart from its first call.
STAGED_NOTE = "stages from a separate staged run: they need not add up to the first call"


def _finite(x: float) -> float:
    return 0.0 if math.isnan(x) else x


def bar_parts(v: VariantResult) -> dict[str, float]:
    """The parts a variant's bar stacks, in order (``first_call_parts``; unmeasured: 0)."""
    return {k: _finite(x) for k, x in v.first_call_parts().items()}


def staged(v: VariantResult) -> bool:
    """Whether the variant's stages were timed, but not inside its first call."""
    return v.stages_from != FROM_EVENTS and any(v.samples.get(p) for p in STAGE_PHASES)


def on_clock(c: Comparison, name: str, clock: Clock) -> VariantResult:
    """Variant ``name`` as the report judges it, its samples those of ``clock``."""
    v = c.judged(name)
    return dataclasses.replace(v, samples={k: on(v.samples, k, clock) for k in PHASES})


def phases_figure(c: Comparison) -> Figure:
    """The cold first call per variant in parts, and per-call execute bars; legend below."""
    fig = Figure(figsize=(9, 4), layout="constrained", dpi=DPI)
    cold, steady = fig.subplots(1, 2, width_ratios=(3, 1))
    names = [n for n in VARIANTS if n in c.variants and c.variants[n].ok]
    _cold_panel(cold, c, names)
    _execute_panel(steady, c, names)
    handles, labels = cold.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: labels[i] == MARKER)  # marker last
    # one legend row where the labels fit the figure's width at 10 pt, else two
    columns = max(len(labels), 1) if sum(map(len, labels)) <= LEGEND_ROW_CHARS else \
        -(-len(labels) // 2)
    fig.legend([handles[i] for i in order], [labels[i] for i in order], title=LEGEND_TITLE,
               loc="outside lower center", ncol=columns, fontsize=LEGEND_PT,
               title_fontsize=LEGEND_PT, frameon=False)
    return fig


def _cold_panel(ax: Axes, c: Comparison, names: list[str]) -> None:
    """One bar per variant: its parts stacked, the first call's whisker and median label."""
    clock = c.clock_of(FIRST_CALL)  # the verdict's clock, named once, on the axis
    variants = [on_clock(c, n, clock) for n in names]
    unit, scale = time_unit([x for v in variants
                             for x in [*v.samples.get("first_call_s", []), *bar_parts(v).values()]])
    labelled: set[str] = set()
    right = 0.0
    for row, v in enumerate(variants):
        end = _stack(ax, c, row, v, scale, labelled)
        right = max(right, _first_call(ax, row, v, end, scale, labelled))
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    note = f"\n{STAGED_NOTE}" if any(staged(v) for v in variants) else ""
    note += f"\n{BUSY_NOTE}" if clock == CPU else ""
    ax.set_xlabel(f"{unit}, {clock_name(clock)}, cold first call (caches cleared); "
                  f"whiskers: its min–max{note}")
    ax.set_title(f"{plain(c.entry)}: first call, flat/nested {stage_ratio(c, FIRST_CALL)}")
    if right > 0:
        ax.set_xlim(0, right)


def _stack(ax: Axes, c: Comparison, row: int, v: VariantResult, scale: float,
           labelled: set[str]) -> float:
    """The variant's parts, left to right; returns where the bar ends (seconds)."""
    left = 0.0
    for part, width in bar_parts(v).items():
        label = None
        if part not in labelled:
            labelled.add(part)
            label = PART_LABELS[part] if part == "rest_s" else \
                f"{PART_LABELS[part]} {stage_ratio(c, part)}"
        ax.barh(row, width / scale, left=left / scale, color=PHASE[part], label=label)
        left += width
    return left


#: The cold panel's width in points, about: the room a label at a bar's end has.
PANEL_PT = 380.0


def _first_call(ax: Axes, row: int, v: VariantResult, end: float, scale: float,
                labelled: set[str]) -> float:
    """The first call's whisker, marker and label; returns how far right the axis must reach."""
    reach = end / scale * 1.05
    if (rng := v.spread("first_call_s")) is not None:
        whisker(ax, row, rng[0] / scale, rng[1] / scale)
        reach = max(reach, rng[1] / scale * 1.05)
    first = v.first_call_s
    if math.isnan(first):
        text, at = f"stages {fmt_s(end)}", end
    else:
        text, at = f"first call {fmt_s(first)}", max(end, first)
    if staged(v) and not math.isnan(first):
        marker = MARKER if "marker" not in labelled else None
        labelled.add("marker")
        ax.plot([first / scale] * 2, [row - 0.4, row + 0.4], color=PHASE["first_call_s"],
                lw=2, label=marker)
    ax.annotate(text, (at / scale, row), xytext=(4, 5), textcoords="offset points",
                va="bottom", fontsize=LABEL_PT)
    label = (4 + 0.6 * LABEL_PT * len(text)) / PANEL_PT  # its width, a share of the panel
    return max(reach, at / scale / max(1 - label, 0.3))


def _execute_panel(ax: Axes, c: Comparison, names: list[str]) -> None:
    """Median seconds per call for each variant with min–max, on the deciding clock."""
    clock = c.clock_of(EXECUTE)
    variants = [on_clock(c, n, clock) for n in names]
    unit, scale = time_unit([x for v in variants for x in v.samples[EXECUTE]])
    ax.bar(range(len(names)), [_finite(v.execute_s) / scale for v in variants],
           color=PHASE["execute_s"])
    for i, v in enumerate(variants):
        if (rng := v.spread(EXECUTE)) is not None:
            whisker(ax, i, rng[0] / scale, rng[1] / scale, horizontal=False)
    ax.set_xticks(range(len(names)), names)
    named = f", {clock_name(clock)}" if clock != c.clock_of(FIRST_CALL) else ""
    ax.set_ylabel(f"{unit} per call{named}")
    label = stage_ratio(c, EXECUTE)
    # a narrow panel: a long label goes below, wrapped (it was cut at the figure's edge)
    below = "\n" if len(label) > 12 else " "
    ax.set_title(f"execute{below}{textwrap.fill(f'({label})', EXECUTE_TITLE_CHARS)}")


def to_png(fig: Figure, dpi: int = DPI) -> bytes:
    """PNG bytes of a figure (for inline display and self-contained HTML)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()

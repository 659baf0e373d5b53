"""The answer first: the verdict's headline under every title, and a chart whose bar is
the first call in parts. Records are built by hand (no timing): crafted samples only."""

from __future__ import annotations

import colorsys
import dataclasses
import re
import struct
from html.parser import HTMLParser
from types import SimpleNamespace

import pytest
from matplotlib.patches import Rectangle
from support import comparison, variant

from jitmagic.frontends.script.process import show
from jitmagic.model.attribution import Attribution, HelperTime
from jitmagic.model.orderings import Orderings
from jitmagic.model.rows import FROM_EVENTS, FROM_STAGED, OrderingRow
from jitmagic.model.stats.rule import SAME, difference
from jitmagic.model.stats.units import fmt_s
from jitmagic.model.sweep import Sweep
from jitmagic.render.blocks import as_text, fitted
from jitmagic.render.bundle import bundle, html_document, text
from jitmagic.render.causes.said import blocks as why_blocks
from jitmagic.render.charts import style as palette
from jitmagic.render.charts.bars import attribution_figure, orderings_figure
from jitmagic.render.charts.phases import STAGED_NOTE, phases_figure, to_png
from jitmagic.render.charts.style import DPI
from jitmagic.render.charts.sweep import sweep_figure
from jitmagic.render.comparison import html_summary, text_table
from jitmagic.render.format import REST_LABEL, REST_ROW, marked_ratio
from jitmagic.render.orderings import panel_html, panel_text

FLAT = {"trace_s": [0.30, 0.32, 0.31], "lower_s": [0.05, 0.05, 0.06],
        "compile_s": [0.20, 0.22, 0.21], "first_call_s": [0.60, 0.64, 0.62],
        "execute_s": [1e-4, 1.1e-4, 1e-4]}
NESTED = {"trace_s": [0.03, 0.032, 0.031], "lower_s": [0.02, 0.02, 0.021],
          "compile_s": [0.10, 0.11, 0.105], "first_call_s": [0.17, 0.18, 0.175],
          "execute_s": [1e-4, 1.05e-4, 1e-4]}


def measured(flat_from: str | None = FROM_EVENTS, nested_from: str | None = FROM_EVENTS,
             **fields):
    """Flat and nested with the crafted samples above, the stages timed as given."""
    return comparison(variant("flat", FLAT, stages_from=flat_from),
                      variant("nested", NESTED, stages_from=nested_from,
                              helper_calls={"layer": 4}), wall_s=3.0, **fields)


def orderings() -> Orderings:
    rows = {name: OrderingRow(name, {"first_call_s": [0.1, 0.11, 0.12], "execute_s": xs},
                              same_program=True)
            for name, xs in (("jit(vmap(f))", [1e-4, 1.1e-4, 1.05e-4]),
                             ("vmap(jit(f))", [2e-4, 2.1e-4, 2.2e-4]))}
    return Orderings("f", 8, 0, True, rows)


class Elements(HTMLParser):
    """The page's top-level elements in order: (tag, class, text inside)."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.found: list[list[str]] = []
        self.depth = 0
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        if tag in ("br", "img"):
            if self.depth == 0:
                self.found.append([tag, dict(attrs).get("class") or "", ""])
            return
        if self.depth == 0:
            self.found.append([tag, dict(attrs).get("class") or "", ""])
        self.depth += 1

    def handle_endtag(self, tag):
        if tag not in ("br", "img"):
            self.depth -= 1

    def handle_data(self, data):
        if self.depth and self.found:
            self.found[-1][2] += data


# --- the headline ------------------------------------------------------------------


def test_the_headline_is_the_line_under_the_title_in_text():
    c = measured()
    lines = text(c, verbose=True).splitlines()
    assert lines[0].startswith("jitcompare: model")
    assert lines[1] == c.verdict.headline
    assert lines[1].startswith("Nested jit on `layer`: first call 3.54× faster (")
    assert lines[2].startswith("phase")  # then the table, then the details
    assert c.verdict.text in lines


def test_the_headline_is_the_first_element_after_the_title_in_html():
    c = measured()
    for png in (None, to_png(phases_figure(c))):
        (title, first, after, *_) = Elements(html_summary(c, png)).found
        assert title[0] == "h4" and first[:2] == ["p", "jitcompare-verdict"]
        assert first[2] == c.verdict.headline.replace("`", "")
        assert after[0] == ("img" if png else "table")


def test_a_verdict_that_is_its_headline_is_shown_once():
    c = measured()
    c = dataclasses.replace(c, variants={**c.variants, "nested": dataclasses.replace(
        c.nested, samples={**NESTED, "first_call_s": []})})
    assert c.verdict.text == c.verdict.headline
    assert text(c).count(c.verdict.text) == 1


def test_the_command_prints_the_headline_second(capsys):
    c = measured()
    show([text(c, verbose=True)])
    printed = capsys.readouterr().out.splitlines()
    assert printed[1] == c.verdict.headline


def test_orderings_start_with_their_headline_in_the_table_and_each_panel():
    o = orderings()
    c = measured(orderings=o)
    plain = bundle(c, plot=False)["text/plain"].splitlines()
    title = next(i for i, ln in enumerate(plain) if ln.startswith("vmap/jit orderings"))
    # the section's answer: the verdict's full text, its ratio said once (not the headline,
    # then the text saying the same ratio again)
    assert plain[title + 1] == o.verdict().text and o.verdict().headline not in plain
    for chosen in ("jit(vmap(f))", "vmap(jit(f))"):
        v = o.verdict(chosen)
        assert panel_text(o, chosen).splitlines()[0] == v.headline
        assert v.headline.startswith(chosen) and "per call" in v.headline
        first, *_ = Elements(panel_html(o, chosen)).found
        assert first[:2] == ["p", "jitcompare-verdict"] and first[2] == v.headline
        assert panel_html(o, chosen).count("jitcompare-verdict") == 1  # the browser finds one
        assert v.text in panel_text(o, chosen)


# --- the table ---------------------------------------------------------------------


def rest_row(c) -> list[str] | None:
    row = next((ln for ln in text(c, verbose=True).splitlines() if ln.startswith(REST_ROW)),
               None)
    return None if row is None else row[len(REST_ROW):].split()


def test_the_table_shows_the_rest_of_the_first_call_only_where_measured():
    lines = text(measured(), verbose=True).splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith(REST_ROW))
    assert lines[at - 1].startswith("XLA compile") and lines[at + 1].startswith("first call")
    # the median runs' (the third of each): 620 − 580, 175 − 157; the row says so, since
    # a median of each stage above it need not add up with it to the median first call
    assert REST_ROW == "rest of first call, median run"
    assert rest_row(measured()) == ["40", "ms", "18", "ms"]
    assert rest_row(measured(FROM_EVENTS, FROM_STAGED)) == ["40", "ms", "—"]
    assert rest_row(measured(FROM_STAGED, None)) is None  # a staged report: no such row


# --- the chart ---------------------------------------------------------------------


def bars(ax) -> dict[int, list[Rectangle]]:
    """The stacked bars' parts by row, left to right."""
    rows: dict[int, list[Rectangle]] = {}
    for p in ax.patches:
        rows.setdefault(round(p.get_y() + p.get_height() / 2), []).append(p)
    return {r: sorted(ps, key=lambda p: p.get_x()) for r, ps in rows.items()}


def test_a_bar_from_events_is_the_first_call_in_parts():
    c = measured()
    cold = phases_figure(c).axes[0]
    assert cold.get_xlabel().startswith("ms,") and STAGED_NOTE not in cold.get_xlabel()
    for row, v in enumerate((c.flat, c.nested)):
        parts = bars(cold)[row]
        assert [p.get_facecolor() for p in parts][-1][:3] == pytest.approx(
            tuple(int(palette.PHASE["rest_s"][i:i + 2], 16) / 255 for i in (1, 3, 5)))
        assert len(parts) == 4  # trace, lower, XLA compile, the rest
        for left, right in zip(parts, parts[1:], strict=False):
            assert right.get_x() == pytest.approx(left.get_x() + left.get_width())
        assert sum(p.get_width() for p in parts) == pytest.approx(v.first_call_s * 1e3)
        label = cold.texts[row]
        assert label.xy[0] == pytest.approx(v.first_call_s * 1e3)  # at the bar's end
        assert label.get_text() == f"first call {fmt_s(v.first_call_s)}"
    assert not [ln for ln in cold.lines if ln.get_color() == palette.PHASE["first_call_s"]]


def test_a_staged_bar_keeps_its_marker_and_says_where_the_stages_came_from():
    c = measured(FROM_STAGED, None)
    fig = phases_figure(c)
    cold = fig.axes[0]
    assert STAGED_NOTE in cold.get_xlabel()
    for row, v in enumerate((c.flat, c.nested)):
        parts = bars(cold)[row]
        assert len(parts) == 3  # the stages only: no rest where none was measured
        assert sum(p.get_width() for p in parts) == pytest.approx(
            (v.trace_s + v.lower_s + v.compile_s) * 1e3)
        assert cold.texts[row].xy[0] == pytest.approx(v.first_call_s * 1e3)
    markers = [ln for ln in cold.lines if len(ln.get_xdata()) == 2
               and ln.get_color() == palette.PHASE["first_call_s"]]
    assert [m.get_xdata()[0] for m in markers] == pytest.approx([620, 175])
    assert fig.legends[0].get_texts()[-1].get_text() == "first call (median)"


def test_ratios_the_rule_does_not_call_are_marked_not_significant():
    fig = phases_figure(measured())
    cold, steady = fig.axes
    # 100 µs both: no difference
    assert steady.get_title() == "execute\n(no measurable\ndifference)"  # the table's words
    assert cold.get_title().endswith("flat/nested 3.54×")  # its clock named once, on the axis
    assert cold.get_xlabel().startswith("ms, wall time, cold first call")
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["trace 10.0×", "lower 2.50×", "XLA compile 2.00×", REST_LABEL]


def test_the_execute_title_fits_its_panel_when_both_compiled_the_same_program():
    # "execute (same compiled program)" ran past the narrow panel into the cold one, and
    # on one line below it, past the figure's edge (a new user saw "(same compiled program")
    fig = phases_figure(dataclasses.replace(measured(), same_compiled=True))
    cold, steady = fig.axes
    # the glance table's own words: "no measurable difference: same compiled program"
    assert steady.get_title() == "execute\n(no measurable\ndifference: same\ncompiled\nprogram)"
    fig.canvas.draw()
    title = steady.title.get_window_extent()
    assert cold.get_window_extent().x1 <= title.x0 and title.x1 <= fig.bbox.x1


@pytest.mark.parametrize(("kind", "significant", "shown"), [
    ("faster", True, "2.00×"), ("slower", True, "2.00×"),
    ("no measurable difference", False, "2.00× no measurable difference"),
    ("inconclusive", False, "2.00× inconclusive"),
])
def test_only_a_called_difference_is_unmarked(kind, significant, shown):
    d = SimpleNamespace(kind=kind, significant=significant, enough_data=True)
    assert marked_ratio(2.0, d) == shown
    assert marked_ratio(float("nan"), d) == "—"


def test_a_same_is_decided_and_still_marked():
    """``decided`` has one meaning: the rule needs no more runs, which a "same" is."""
    quiet = [1.0, 1.01, 0.99, 1.005, 0.995, 1.0, 1.002, 0.998, 1.001]
    d = difference(quiet, list(reversed(quiet)))
    assert d.kind == SAME and d.decided and not d.significant
    assert marked_ratio(d.ratio, d).endswith(" no measurable difference")


def legend_sizes(fig) -> list[float]:
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    assert legends
    return [t.get_fontsize() for lg in legends for t in (*lg.get_texts(), lg.get_title())
            if t.get_text()]


def test_legends_and_labels_are_at_least_10_pt_at_100_dpi():
    c = measured()
    fig = phases_figure(c)
    assert min(legend_sizes(fig)) >= 10
    assert min(t.get_fontsize() for t in fig.axes[0].texts) >= 10
    assert min(t.get_fontsize() for t in orderings_figure(orderings()).axes[0].texts) >= 10
    png = to_png(fig)
    width, height = struct.unpack(">II", png[16:24])  # the PNG header's IHDR
    assert DPI >= 100 and (width, height) == (900, 400)  # 10 pt is 14 px
    point = dataclasses.replace(c, warned=())
    sweep = Sweep.from_dict({"schema": "jitmagic.sweep/1", "name": "n", "values": [1, 2],
                             "wall_s": 1.0, "points": [point.to_dict()] * 2, "warnings": []})
    assert min(legend_sizes(sweep_figure(sweep))) >= 10


def test_the_attribution_legend_is_legible():
    a = Attribution("model", trace_s=1.0, entry_s=0.95, entry_code_s=0.1,
                    helpers=(HelperTime("layer", calls=4, inclusive_s=0.8, own_s=0.6),))
    fig = attribution_figure(a)
    assert min(legend_sizes(fig)) >= 10 and min(t.get_fontsize() for t in fig.axes[0].texts) >= 10


# --- the palette -------------------------------------------------------------------


def hue_saturation(colour: str) -> tuple[float, float]:
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    h, _, s = colorsys.rgb_to_hls(r, g, b)
    return h * 360, s


def is_red(colour: str) -> bool:
    h, s = hue_saturation(colour)
    return s > 0.25 and (h < 20 or h > 340)


def is_green(colour: str) -> bool:
    h, s = hue_saturation(colour)
    return s > 0.25 and 80 <= h <= 150


def every_colour() -> list[str]:
    return [*palette.PHASE.values(), palette.TRACE_INCLUSIVE, *palette.VARIANT.values(),
            palette.ORDERING_HIGHLIGHT, palette.ORDERING_TOGGLED, palette.ORDERING_REFERENCE,
            palette.EDGE, palette.RANGE]


def test_the_palette_has_no_red_and_green_pair():
    colours = every_colour()
    assert not (any(map(is_red, colours)) and any(map(is_green, colours))), colours
    assert is_red("#ff0000") and is_green("#00ff00")  # the rule bites, on pure colours
    assert is_red("#c44e52") and is_green("#55a868")  # and on the old palette's pair
    assert not is_red(palette.VARIANT["flat"])  # vermillion is Okabe-Ito's, not a pure red


def test_the_stacked_parts_differ_in_lightness_too():
    """Told apart without hue (in grey, or with any colour-vision deficiency)."""
    def lightness(colour: str) -> float:
        r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    parts = [palette.PHASE[p] for p in ("trace_s", "lower_s", "compile_s", "rest_s")]
    light = [lightness(c) for c in parts]
    assert all(abs(a - b) > 0.08 for a, b in zip(light, light[1:], strict=False)), light


def test_the_legend_fits_the_figure_even_with_every_ratio_marked():
    near = {k: [x * 1.03 for x in xs] for k, xs in FLAT.items()}
    worst = comparison(variant("flat", FLAT, stages_from=FROM_EVENTS),
                       variant("nested", near, stages_from=FROM_STAGED), entry="a_long_name")
    for c in (measured(), worst):
        fig = phases_figure(c)
        fig.draw_without_rendering()  # lays the figure out as saving it does
        box, page = fig.legends[0].get_window_extent(), fig.bbox
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0, (box, page)
    assert [t.get_text() for t in fig.legends[0].get_texts()][-1] == "first call (median)"


# --- the answer at a glance --------------------------------------------------------

STAGE_ROWS = ["trace", "lower", "XLA compile", "first call", "execute (per call)"]


def glance_rows(said: str) -> dict[str, str]:
    """The glance's stage rows by label: the lines under its header, indented two."""
    lines = said.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith(("  wall time", "  CPU time")))
    return {ln[2:].split("  ")[0]: ln for ln in lines[at + 1:at + 6]}


def test_the_glance_is_the_answer_in_at_most_twelve_lines_of_the_terminals_width():
    c = measured()
    assert str(c) == c.report() == text(c)  # the default, wherever a comparison is said
    for width in (100, 80):
        said = text(c, width=width)
        lines = said.splitlines()
        assert len(lines) <= 12 and max(map(len, lines)) <= width, said
        assert " ".join(ln.strip() for ln in lines[:2]).startswith(
            "jitcompare: model — nested jit on `layer` makes the first call 3.54× faster "
            "(2.22×–5.65×; 620 ms → 175 ms wall time, 3 runs each)")
        assert list(glance_rows(said)) == STAGE_ROWS
        assert lines[-1].startswith("more: -v (spreads, CPU time, program sizes, causes")
    assert glance_rows(str(c))["trace"].split()[-1] == "10.0×"
    assert "rest of first call" not in str(c) and "min–max" not in str(c)  # behind -v
    # the demo's at 80 columns read 13 lines: its report's path took a line of its own,
    # and on a TPU its fresh samples another, the why line two with the programs' sizes
    fresh = comparison(variant("flat", FLAT, jaxpr_eqns=8208),
                       variant("nested", NESTED, helper_calls={"layer": 16}, jaxpr_eqns=544),
                       env={"cold_samples": {"where": "fresh", "sample_s": 18.7}})
    said = text(fresh, width=80, html_path="jitmagic-demo.html").splitlines()
    assert len(said) <= 12 and said[-1] == "more: -v · --why · report: jitmagic-demo.html", said
    assert "why: flat inlines `layer` at 16 calls; `jax.jit` on `layer` saves" in said[-4]
    assert "(8,208 jaxpr equations against 544)" in text(fresh, width=1000)  # where it fits


def test_the_glance_says_the_rest_briefly_where_in_full_it_would_pass_twelve_lines():
    """A trial's 13 lines: three helpers and an inconclusive verdict (three lines of
    headline), a busy machine, different programs and fresh samples (two lines more)."""
    runs = {"first_call_s": [0.31, 0.52, 0.26], "wait_s": [0.2] * 3}
    c = comparison(
        variant("flat", {**runs, "first_call_cpu_s": [0.283, 0.30, 0.27]}, every=0.01),
        variant("nested", {**runs, "first_call_cpu_s": [0.287, 0.27, 0.31]}, every=0.01,
                helpers=("loss", "mlp", "mylayers.layer")),
        entry="step", same_compiled=False,
        env={"cold_samples": {"where": "fresh", "sample_s": 21.4}})
    assert c.busy and c.verdict.difference.kind == "inconclusive"
    full = text(c, width=1000)  # every line whole: what the glance says when it fits
    assert "busy machine: CPU time judged" in full and "different programs" in full
    for width in (100, 80):
        lines = text(c, width=width).splitlines()
        assert len(lines) <= 12, "\n".join(lines)
        said = "\n".join(lines)
        assert "inconclusive" in said.split("  CPU time")[0] and lines[-1].startswith("more: -v")
        assert "cold samples: each a fresh process running the file (21.4 s each)" in \
            " ".join(lines)
        assert "busy machine" not in said  # the headline and the table name CPU time
    differ = text(dataclasses.replace(c, outputs_match=False), width=80).splitlines()
    assert len(differ) <= 12 and "outputs: MISMATCH between flat and nested" in differ


def test_a_glance_of_nothing_measured_shows_no_table_of_dashes():
    """``--timeout 0.3``: a trial read 'nothing was measured', five rows of dashes, then a
    pointer to spreads and program sizes that were never measured."""
    c = comparison(variant("flat", {}), variant("nested", {}),
                   stopped="stopped by --timeout after finding your helpers")
    lines = text(c, width=100).splitlines()
    assert "nothing was measured" in lines[0] and not any("—" in ln for ln in lines[1:])
    assert lines[-1].startswith("more: -v (the full report)")


def test_a_variant_that_failed_is_said_at_a_glance_with_its_error():
    """A trial's 55 lines where the nested variant raised: the full table of program sizes,
    notes and causes; the glance says the headline, flat's stages and the error."""
    error = "the nested variant failed:\nValueError: layer cannot run under its own jit"
    c = comparison(variant("flat", FLAT), variant("nested", {}, error=error),
                   outputs_match=None)
    lines = text(c, width=100).splitlines()
    assert lines[0] == "jitcompare: model — Only one variant ran; see its error below."
    assert glance_rows("\n".join(lines))["first call"].split()[2:5] == ["620", "ms", "—"]
    assert lines[-2:] == [f"error: {error}".splitlines()[0], error.splitlines()[1]]
    assert len(lines) <= 12 + 2 and "cold runs [min–max]" not in text(c, width=100)
    assert "cold runs [min–max]" in text(c, verbose=True)  # the full report: one flag away


def test_the_glance_never_breaks_a_number_across_lines():
    c = measured()
    for width in range(30, 101):
        said = text(c, width=width, html_path="/a/folder/of/reports/jitmagic-demo.html")
        assert not re.search(r"\d\n +(ms|µs|s|runs?|→)", said), (width, said)
        assert not re.search(r"→\n", said)
    assert fitted("the first call " + "923 ms → 366 ms", 24) == [
        "the first call", "    923 ms → 366 ms"]
    # an option keeps its number (a trial read "(say -r" / "9) may tell")
    assert fitted("-r auto or a larger -r (say -r 9) may tell", 31) == [
        "-r auto or a larger -r (say", "    -r 9) may tell"]
    assert fitted("try --budget 10", 10) == ["try", "    --budget 10"]


def test_verbose_is_the_full_report_as_before():
    c = measured()
    full = text(c, verbose=True)
    assert full == text_table(c) + "\n\n" + as_text(why_blocks(c))
    assert c.report(verbose=True) == full
    assert full.splitlines()[1] == c.verdict.headline and REST_ROW in full


def test_where_xla_built_one_program_the_glance_says_why_the_figures_differ():
    c = dataclasses.replace(measured(), same_compiled=True)
    rows = glance_rows(str(c))
    # the compile differs though the program is the same: its input was smaller
    assert rows["XLA compile"].endswith("2.00× (same program, from a smaller input)")
    # 100 µs against 100 µs of one program: no difference, said so, with no ratio
    assert rows["execute (per call)"].endswith("no measurable difference: same compiled program")
    assert ("XLA compiled both variants to the same program, instruction by instruction (the "
            "same flops, bytes and memory): nesting changed JAX's work, not XLA's result; its "
            "XLA compile was 2.00× faster (") in c.report(verbose=True)
    assert "nested: XLA's input, before it inlines the calls, is smaller" in c.report(
        verbose=True)
    other = glance_rows(str(measured()))
    assert other["XLA compile"].endswith("  2.00×") and "program" not in other["execute (per call)"]
    assert "XLA's input" not in measured().report(verbose=True)


def test_in_html_the_verdict_chart_and_short_table_come_first_and_the_rest_is_folded():
    c = measured()
    page = bundle(c)["text/html"]
    (verdict, chart, table, found, *rest) = Elements(page).found
    assert verdict[:2] == ["p", "jitcompare-verdict"] and verdict[2].startswith(
        "jitcompare: model — nested jit on layer makes the first call 3.54× faster")
    assert chart[0] == "img" and table[0] == "table" and found[2].startswith("why: ")
    assert [tag for tag, *_ in rest] == ["details"] * len(rest) and len(rest) >= 2
    assert rest[0][2].startswith("the full report: ") and REST_ROW in rest[0][2]
    assert rest[1][2].startswith("Why the first call takes 620 ms (flat)")
    body = html_document(c).split("<body>")[1].split("</body>")[0]
    assert Elements(body).found[-1][0] == "details"  # folded too
    assert Elements(body).found[-1][2].startswith("Where these numbers came from")
    # the chart's title gives the headline's one number; its axis names the one clock
    cold = phases_figure(c).axes[0]
    assert cold.get_title() == "model: first call, flat/nested 3.54×"
    assert ", wall time, cold first call" in cold.get_xlabel()

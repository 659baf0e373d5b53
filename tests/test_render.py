"""Rendering a report: escaping at one place, charts that survive any name, readable units.

A real comparison (a small MLP-like model, measured with --vmap, --attribute and
--advise) is turned into a report dict; every string field is then replaced by
an HTML payload, as a crafted report loaded in a notebook would carry, and the
rendered page must contain no markup but the renderer's own.
"""

from __future__ import annotations

import copy
import html
import math
from html.parser import HTMLParser

import jax
import jax.numpy as jnp
import pytest
from matplotlib.container import ErrorbarContainer
from support import comparison, variant

import jitmagic
from jitmagic.measure.sampling.stops import first_line
from jitmagic.measure.sampling.structure import jaxpr_text
from jitmagic.model.comparison import Comparison
from jitmagic.model.orderings import Orderings
from jitmagic.model.stats.rule import median
from jitmagic.model.stats.units import cut_to, fmt_s, time_unit
from jitmagic.model.stats.witness import WALL, on
from jitmagic.model.sweep import Sweep
from jitmagic.render.blocks import Details, as_html, as_text, shown_name
from jitmagic.render.bundle import bundle, html_document
from jitmagic.render.charts import style as palette
from jitmagic.render.charts.bars import orderings_figure
from jitmagic.render.charts.phases import phases_figure, to_png
from jitmagic.render.charts.style import plain
from jitmagic.render.charts.sweep import sweep_figure
from jitmagic.render.comparison import text_table

PAYLOAD = "<img src=x onerror=alert(1)>"
MATH = r"$\frac{$"
#: Every tag the renderer itself writes (the page, the tables, prose, the charts).
OWN_TAGS = {"html", "head", "meta", "title", "style", "body", "h4", "p", "br", "b", "code",
            "small", "table", "tr", "th", "td", "pre", "details", "summary", "img"}


def dense(w, x):
    return jnp.tanh(x @ w)


def mlp(w, x):
    """Two layers through the same helper: what --attribute and --advise look at."""
    return dense(w, dense(w, x)).sum()


@pytest.fixture(scope="module")
def report() -> dict:
    c = jitmagic.compare(mlp, jnp.eye(4) * 0.5, jnp.ones((2, 4)), repeat=3, number=1, vmap=True,
                         attribute=True, advise=True)
    return c.to_dict()


def poisoned(d: dict, text: str = PAYLOAD) -> dict:
    """``d`` with every string field a report can carry replaced by ``text``.

    (Non-string fields holding markup, such as a third variant key or a text in
    ``compile_events``, are refused by ``from_dict`` before anything renders.)"""
    d = copy.deepcopy(d)
    d.update(entry=text, warnings=[text], stopped=text, env={text: text, "devices": [text]})
    for v in d["variants"].values():
        v.update(helpers=[text], notes=[text], jaxpr=text)
    d["variants"]["nested"]["error"] = text
    if "orderings" in d:
        o = d["orderings"]
        o.update(entry=text, warnings=[text], built_batch=False)
        for row in o["rows"].values():
            row.update(jaxpr=text)
        o["rows"]["vmap(f)"]["error"] = text
    if "attribution" in d:
        d["attribution"]["entry"] = text
        for h in d["attribution"]["helpers"]:
            h["helper"] = text
    if "advice" in d:
        adv = d["advice"]
        adv.update(recommended=[text], not_tried=[text])
        for cand in adv["ranked"]:
            cand["helper"] = text
        adv["ranked"].append({**adv["ranked"][0], "error": f"ValueError: {text}"})
    return d


def with_sweep(point: dict, name: str, values: list) -> dict:
    """A sweep report over ``values`` whose points are ``point`` (stripped of its extras)."""
    core = {k: v for k, v in point.items() if k not in ("orderings", "attribution", "advice")}
    return {"schema": "jitmagic.sweep/1", "name": name, "values": values, "wall_s": 1.0,
            "points": [core for _ in values], "warnings": core.get("warnings", [])}


class StartTags(HTMLParser):
    """Every start tag of a page with its attributes, as a browser would parse them."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def assert_only_own_markup(page: str) -> None:
    tags = StartTags(page).tags
    assert {t for t, _ in tags} <= OWN_TAGS, {t for t, _ in tags} - OWN_TAGS
    for tag, attrs in tags:
        assert not any(a.startswith("on") for a in attrs), (tag, attrs)
        if tag == "img":
            assert attrs["src"].startswith("data:image/png;base64,"), attrs
    assert html.escape(PAYLOAD) in page  # the payload is shown, as text


def test_a_crafted_report_renders_no_live_markup(report):
    c = Comparison.from_dict(poisoned(report))
    data = bundle(c)
    assert PAYLOAD in data["text/plain"]
    for page in (data["text/html"], html_document(c), c._repr_mimebundle_()["text/html"]):
        assert_only_own_markup(page)
    shown = data["text/html"]
    assert shown.count(f"<code>{html.escape(PAYLOAD)}</code>") >= 3  # entry, helpers, ranked


def test_a_crafted_sweep_renders_no_live_markup(report):
    c = Sweep.from_dict(with_sweep(poisoned(report), PAYLOAD, [PAYLOAD, MATH]))
    data = bundle(c)
    assert_only_own_markup(data["text/html"])
    assert_only_own_markup(html_document(c))
    # a point's warning names its value (with the details: -v)
    assert f"{PAYLOAD}={PAYLOAD!r}" in bundle(c, verbose=True)["text/plain"]


def test_mathtext_in_names_draws_as_plain_text(report):
    math_report = {**report, "entry": MATH}
    c = Comparison.from_dict(math_report)
    fig = phases_figure(c)
    assert to_png(fig).startswith(b"\x89PNG")
    assert fig.axes[0].texts and MATH.replace("$", r"\$") in fig.axes[0].get_title()
    o = Orderings.from_dict({**report["orderings"], "entry": MATH})
    assert to_png(orderings_figure(o)).startswith(b"\x89PNG")
    sweep = Sweep.from_dict(with_sweep(math_report, MATH, [MATH, "b"]))
    assert to_png(sweep_figure(sweep)).startswith(b"\x89PNG")


def test_time_unit_follows_the_data():
    assert time_unit([17_500e-6]) == ("ms", 1e-3)
    assert time_unit([3e-8, 9e-7]) == ("ns", 1e-9)
    assert time_unit([2.5, 0.1])[0] == "s"
    assert time_unit([math.nan])[0] == "s"


def test_every_layer_cuts_a_long_line_the_one_way():
    assert cut_to("abc", 3) == "abc"
    assert cut_to("abcdef", 4) == "abc…"
    long = "x" * 500
    assert shown_name(long, 10) == plain(long, 10) == cut_to(long, 10) == "x" * 9 + "…"
    assert cut_to(first_line(ValueError(long + "\nmore")), 100) == cut_to(long, 100)


def test_execute_panel_counts_in_ms_when_calls_take_ms(report):
    slow = copy.deepcopy(report)
    for v in slow["variants"].values():
        v["samples"] |= dict.fromkeys(("execute_s", "execute_cpu_s"), [0.0175, 0.0171, 0.0182])
    fig = phases_figure(Comparison.from_dict(slow))
    steady = fig.axes[1]
    assert steady.get_ylabel().startswith("ms per call")  # whichever clock decides
    assert max(p.get_height() for p in steady.patches) == pytest.approx(17.5)


#: Seconds per unit of an axis label's unit (the label starts with the unit).
SECONDS_PER = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}


def whiskers(ax, horizontal: bool = True) -> list[tuple[float, float, float]]:
    """(bar position, low end, high end) of every whisker drawn on ``ax``, in the axis's
    unit, read from the drawn line (not from the numbers the chart was given)."""
    spans = []
    for container in ax.containers:
        if isinstance(container, ErrorbarContainer):
            _, _, (line,) = container.lines
            ((x0, y0), (x1, y1)), = line.get_segments()
            spans.append((y0, x0, x1) if horizontal else (x0, y0, y1))
    return sorted(spans)


def unit_of(ax) -> str:
    """The unit of a horizontal time axis: its label starts with it."""
    return ax.get_xlabel().split(",")[0]


def min_max(at: int, samples: list[float], unit: str) -> tuple[float, float, float]:
    """The whisker a bar at ``at`` should carry: its least and its greatest raw sample."""
    scale = SECONDS_PER[unit]
    return (at, min(samples) / scale, max(samples) / scale)


def assert_spans(drawn: list, expected: list) -> None:
    assert len(drawn) == len(expected), (drawn, expected)
    for got, want in zip(drawn, expected, strict=True):
        assert got == pytest.approx(want, rel=1e-9), (drawn, expected)


def test_bars_carry_their_sample_range_and_labels_stay_clear(report):
    c = Comparison.from_dict(report)
    cold, steady = phases_figure(c).axes
    names = [t.get_text() for t in cold.get_yticklabels()]
    assert names == ["flat", "nested"]
    # The whisker of a cold bar is the spread of the first call itself, on the clock that
    # decides it (CPU time where this machine was busy), as the verdict reads it
    runs = {n: on(c.judged(n).samples, "first_call_s", c.clock_of("first_call_s"))
            for n in names}
    assert all(len(r) == 3 for r in runs.values())  # three runs each: each bar has a spread
    unit = cold.get_xlabel().split(",")[0]
    assert_spans(whiskers(cold), [min_max(i, runs[n], unit) for i, n in enumerate(names)])
    unit = steady.get_ylabel().split()[0]
    execute = {n: on(c.judged(n).samples, "execute_s", c.clock_of("execute_s")) for n in names}
    assert_spans(whiskers(steady, horizontal=False),
                 [min_max(i, execute[n], unit) for i, n in enumerate(names)])
    assert cold.get_legend() is None  # the legend sits below the panels, not on the bars
    for row, name in enumerate(names):
        label = cold.texts[row]
        first = median(runs[name]) / SECONDS_PER[unit_of(cold)]
        assert label.xy[0] >= first - 1e-9 and label.xy[1] == row
        assert label.get_text() == f"first call {fmt_s(median(runs[name]))}"
    o = c.orderings
    first, per_call = orderings_figure(o).axes
    rows = [t.get_text() for t in first.get_yticklabels()]
    assert sorted(rows) == sorted(o.rows)  # every ordering has a bar (none failed here)
    # per call on the verdict's clock (CPU time where the machine was busy), named
    for ax, key, clock in ((first, "first_call_s", WALL), (per_call, "execute_s", o.clock())):
        unit = ax.get_xlabel().split(",")[0]
        assert ax.get_xlabel().endswith(f"{'CPU' if clock == 'CPU' else 'wall'} time")
        assert_spans(whiskers(ax), [min_max(i, on(o[n].samples, key, clock), unit)
                                    for i, n in enumerate(rows)])


def test_one_run_draws_its_bar_without_a_whisker(report):
    one = copy.deepcopy(report)
    for key in ("execute_s", "execute_cpu_s"):  # whichever clock decides
        one["variants"]["flat"]["samples"][key] = [0.0175]
        one["variants"]["nested"]["samples"][key] = [0.0171, 0.0182, 0.0175]
    steady = phases_figure(Comparison.from_dict(one)).axes[1]
    assert steady.get_ylabel().startswith("ms per call")
    assert_spans(whiskers(steady, horizontal=False), [(1, 17.1, 18.2)])


def test_long_jaxprs_are_cut_and_html_has_no_backquotes(report):
    long = "\n".join(f"  b{i}:f32[] = add a{i} 1.0" for i in range(1000))
    block = Details("jaxpr", long)
    shown = as_html([block])
    assert "b299:" in shown and "b300:" not in shown and "… 700 more lines" in shown
    assert as_text([block]) == ""  # collapsed blocks stay out of the text report
    page = bundle(Comparison.from_dict(report))["text/html"]
    assert "`" not in page and "<code>call</code> ops" in page


def test_each_colour_means_one_thing():
    colours = [*palette.PHASE.values(), palette.TRACE_INCLUSIVE, *palette.VARIANT.values(),
               palette.ORDERING_HIGHLIGHT, palette.ORDERING_TOGGLED, palette.ORDERING_REFERENCE,
               palette.EDGE, palette.RANGE]
    assert len({c.lower() for c in colours}) == len(colours)


def test_the_title_says_how_many_runs_each_median_is_of():
    three = {"first_call_s": [1.0, 1.1, 1.2]}
    # and the clock of the rows that do not name one (a title of no clock was read as CPU)
    assert "(medians of 3 cold runs [min–max]; wall time)" in text_table(
        comparison(three, three, every=0.01))
    timed = {"first_call_s": [1.0, 1.1, 1.2], "first_call_cpu_s": [1.5, 1.6, 1.7]}
    assert ("(medians of 3 cold runs [min–max]; wall time where a row does not say CPU "
            "time)") in text_table(comparison(timed, timed, every=0.01))
    # a stop between the variants' third runs: each row's own count, not the larger
    stopped = comparison(three, {"first_call_s": [0.5, 0.6]}, every=0.01)
    assert "(medians of 3 flat and 2 nested cold runs [min–max]; wall" in text_table(stopped)
    one = {"first_call_s": [1.0]}
    assert "(1 cold run; wall time)" in text_table(comparison(one, one, every=0.01))


def test_a_note_of_both_variants_is_said_once():
    both = "`step` donates its arguments: measured without donation"
    c = comparison(variant("flat", {"first_call_s": [1.0]}, every=0.01, noted=(both,)),
                   variant("nested", {"first_call_s": [0.5]}, every=0.01,
                           noted=(both, "`layer` stays inline: it leaks a tracer")))
    shown = text_table(c)
    assert shown.count(both) == 1 and f"note: {both}" in shown
    assert "note (nested): `layer` stays inline" in shown


@pytest.mark.parametrize("nested_s", [0.0722, 0.0688, 0.002])
def test_the_first_call_labels_fit_inside_the_panel(nested_s):
    c = comparison({"first_call_s": [0.0682, 0.0688, 0.069]},
                   {"first_call_s": [nested_s * 0.99, nested_s, nested_s * 1.01]},
                   every=0.005)
    fig = phases_figure(c)
    to_png(fig)  # drawn: the labels have their extents
    panel = fig.axes[0].get_window_extent()
    labels = [t for t in fig.axes[0].texts if t.get_text().startswith("first call")]
    assert len(labels) == 2
    assert all(t.get_window_extent().x1 <= panel.x1 for t in labels)


@pytest.mark.parametrize("seconds, shown", [
    (0.9996, "1 s"), (0.0009996, "1 ms"), (0.0175, "17.5 ms"), (2.81, "2.81 s"),
    (1234.5, "1,230 s"), (3.2e-8, "32 ns"), (float("nan"), "—"),
])
def test_seconds_are_written_in_the_unit_of_what_is_shown(seconds, shown):
    # 999.6 ms rounds to three figures as 1 s: it was written "1e+03 ms"
    assert fmt_s(seconds) == shown


def test_a_long_jaxpr_is_printed_only_as_far_as_it_shows():
    def unrolled(x):
        for i in range(1000):
            x = x * 1.001 + i
        return x

    closed = jax.jit(unrolled).trace(1.0).jaxpr  # what a cold run holds
    for jaxpr in (closed, closed.jaxpr):
        text = jaxpr_text(jaxpr, max_lines=50).splitlines()
        assert len(closed.eqns) == 2000 and len(text) == 51
        assert text[:50] == str(jaxpr).splitlines()[:50]  # the lines JAX itself prints
        assert text[-1] == "... the rest cut (2000 top-level equations in all)"
    short = jax.jit(lambda x: x * 2.0).trace(1.0).jaxpr
    assert jaxpr_text(short) == str(short)


def test_a_jaxpr_captured_in_a_notebook_has_no_colour_codes(monkeypatch):
    """A teacher's notebook folds read ``a[35m:f32[32,64][39m``: JAX colours its printer's
    output where it runs under Jupyter. The jaxpr is captured without colour (the user's
    config left as it was), and a report saved with colour codes folds without them."""
    from jax._src import pretty_printer

    monkeypatch.setattr(pretty_printer, "CAN_USE_COLOR", True)  # as under Jupyter
    closed = jax.jit(lambda x: jnp.sin(x) * 2.0).trace(jnp.ones((32, 64))).jaxpr
    assert "\x1b[" in str(closed) and jax.config.jax_pprint_use_color  # JAX colours it
    assert "\x1b" not in jaxpr_text(closed) and "a:f32[32,64]" in jaxpr_text(closed)
    assert jax.config.jax_pprint_use_color  # the user's config as it was
    coloured = str(closed)
    page = as_html([Details("jaxpr, flat", coloured)])
    assert "\x1b" not in page and "a:f32[32,64]" in page
    text = as_text([Details("jaxpr, flat", coloured, in_text=True)])
    assert "x1b" not in text and "a:f32[32,64]" in text


def test_the_full_report_wraps_its_prose_to_the_width_and_keeps_tables_whole(report):
    """``COLUMNS=100 python -m jitmagic -v``: 19 of 49 lines ran past 100 columns, the
    longest 380. Now every line of prose fits; only a table row (its columns two spaces
    apart) may be wider, where its columns need it."""
    c = Comparison.from_dict(report)
    for shown in (c.report(verbose=True, width=100), c.report(width=100)):
        over = [x for x in shown.splitlines() if len(x) > 100]
        assert all("  " in x.strip() for x in over), over  # table rows alone
    prose = [x for x in c.report(verbose=True).splitlines() if len(x) > 100 and "  " not in x]
    assert prose  # without a width nothing wraps: there was prose to wrap

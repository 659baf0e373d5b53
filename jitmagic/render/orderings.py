"""Text and HTML for the vmap/jit orderings, and the verdict, worked out from the numbers."""

from __future__ import annotations

from ..model.orderings import EXECUTE, ORDERINGS, REFERENCE, TOGGLED, Orderings
from ..model.rows import OrderingRow
from ..model.stats.rule import median
from ..model.stats.units import counted, fmt_ratio, fmt_s
from ..model.stats.witness import CPU, Clock, on
from . import blocks as ui
from . import comparison
from .drawing import bars_png
from .format import fmt_count, fmt_spread, marked_ratio, medians_of, unmarked_clock
from .verdicts import clock_name, cpu_mark

COLUMNS = ("ordering", "first call", "per call", "per call / jit(vmap(f))", "JAX compiles",
           "jaxpr eqns", "StableHLO bytes", "same program")


def _equations(row: OrderingRow) -> str:
    """``1 equation``, ``8,208 equations``; ``— equations`` where not measured."""
    return "— equations" if row.jaxpr_eqns is None else counted(row.jaxpr_eqns, "equation")


def _same(row: OrderingRow) -> str:
    if row.name == REFERENCE:
        return "(reference)"
    return {True: "yes", False: "no", None: "—"}[row.same_program]


def _compiles(row: OrderingRow) -> str:
    if row.compile_events is None:
        return "—"
    return f"{row.compile_events} ({fmt_s(row.compile_s)})"


def _per_call(o: Orderings, name: str, clock: Clock) -> float:
    return median(on(o[name].samples, EXECUTE, clock))


def _ratio(o: Orderings, name: str) -> str:
    """Per call over the reference's, marked as tables mark an undecided ratio (or not judged)."""
    if name == REFERENCE:
        return fmt_ratio(1.0)
    d = o.against_reference(name)
    if o.withheld(name):
        return f"{fmt_ratio(d.ratio)} not judged: same compiled program"
    return marked_ratio(d.ratio, d)


def columns(o: Orderings) -> tuple[str, ...]:
    """The table's columns; on a busy machine the per-call CPU time and its ratio too."""
    if o.clock() != CPU:
        return COLUMNS
    return (*COLUMNS[:3], "per call, CPU time", f"{COLUMNS[3]}, CPU time", *COLUMNS[4:])


def row_cells(o: Orderings, name: str) -> list[ui.Cell]:
    """One table row (medians with their min–max spread), for both text and HTML."""
    row, clock = o[name], o.clock()
    cpu = ([ui.Cell(fmt_s(_per_call(o, name, CPU)),
                    fmt_spread(on(row.samples, EXECUTE, CPU)))] if clock == CPU else [])
    return [ui.Cell(name, code=True),
            ui.Cell(fmt_s(row.first_call_s), fmt_spread(row.samples.get("first_call_s", []))),
            ui.Cell(fmt_s(row.execute_s), fmt_spread(row.samples.get("execute_s", []))),
            *cpu, ui.Cell(_ratio(o, name)), ui.Cell(_compiles(row)),
            ui.Cell(fmt_count(row.jaxpr_eqns)), ui.Cell(fmt_count(row.stablehlo_bytes)),
            ui.Cell(_same(row))]


def verdict(o: Orderings, chosen: str = TOGGLED[0]) -> str:
    """One line on ``chosen`` against the other toggled ordering, per call."""
    return o.verdict(chosen).text


def answer(o: Orderings) -> list[ui.Block]:
    """What ``--vmap`` asks, first: which ordering is faster per call, then what went wrong."""
    how = "one example stacked" if o.built_batch else f"your batch, in_axes {o.in_axes}"
    out: list[ui.Block] = [ui.Heading((f"vmap/jit orderings of {o.entry}: batch {o.batch} ({how}), "
                                       f"per call on {clock_name(o.clock())}",)),
                           ui.Para([o.verdict().text], "verdict", bold=True),
                           *comparison.partial(o.stopped)]
    out += [ui.Para([("warning: ", w)], "warning") for w in o.warnings]
    out += [ui.Pre(f"error in {r.name}: {r.error}", "error") for r in o.rows.values() if r.error]
    return out


def details(o: Orderings, png: bytes | None = None) -> list[ui.Block]:
    """The rest, behind ``-v`` or a click: table, chart, outputs, jaxprs (HTML only)."""
    rows = [row_cells(o, n) for n in ORDERINGS if n in o.rows]
    runs = {name: len(r.samples.get("first_call_s", [])) for name, r in o.rows.items()}
    title = f"{medians_of(runs, 'run')}, {unmarked_clock(o.clock() == CPU, 'column')}:"
    outputs = comparison.outputs_line(o, "the orderings", "measuring stopped" if o.stopped
                                      else "an ordering failed")
    return [ui.Para([title]), ui.Image(png, "first call and per call, four orderings"),
            ui.Table(columns(o), rows, css="jitcompare-orderings"), ui.Para([outputs]),
            *(ui.Details(("jaxpr of ", ui.Code(n), f" ({_equations(o[n])})"),
                         o[n].jaxpr_text) for n in TOGGLED if n in o.rows)]


def blocks(o: Orderings, png: bytes | None = None) -> list[ui.Block]:
    """All of the orderings' section, the answer then the rest, built once for text and HTML."""
    return [*answer(o), *details(o, png)]


def text_table(o: Orderings) -> str:
    """All four orderings as plain text: what a terminal or a text export shows."""
    return ui.as_text(blocks(o))


def panel_blocks(o: Orderings, chosen: str, png: bytes | None = None) -> list[ui.Block]:
    """What the toggle shows for one ordering: headline, chart, numbers, verdict, jaxpr."""
    row, v = o[chosen], o.verdict(chosen)
    full = comparison.details(v)
    return [comparison.headline(v),
            ui.Image(png, f"{chosen}: first call and per call"),
            ui.Table((), [(f"{k}:", value) for k, value in panel_numbers(o, chosen)],
                     css="jitcompare-ordering"),
            *([ui.Para([(t,) for t in full])] if full else []),
            ui.Details(("jaxpr of ", ui.Code(chosen), f" ({_equations(row)})"),
                       row.jaxpr_text, in_text=True)]


def panel_text(o: Orderings, chosen: str) -> str:
    """What the toggle shows for one ordering, as plain text."""
    return ui.as_text(panel_blocks(o, chosen))


def panel_numbers(o: Orderings, chosen: str) -> list[tuple[str, str]]:
    """(label, value) pairs for one ordering's numbers (busy: the per-call CPU time too)."""
    row, clock = o[chosen], o.clock()
    cpu = cpu_mark(clock)
    return [
        ("first call (cold)", fmt_s(row.first_call_s)),
        ("per call (steady)", fmt_s(row.execute_s)),
        *([("per call, CPU time", fmt_s(_per_call(o, chosen, CPU)))] if cpu else []),
        (f"per call / {REFERENCE}{cpu}", _ratio(o, chosen)),
        ("XLA compiles JAX reported in the first call", _compiles(row)),
        ("jaxpr equations (top level)", fmt_count(row.jaxpr_eqns)),
        ("jit calls in the jaxpr", fmt_count(row.nested_calls)),
        ("StableHLO bytes", fmt_count(row.stablehlo_bytes)),
        ("optimized HLO instructions", fmt_count(row.hlo_instructions)),
        (f"same program as {REFERENCE}", _same(row)),
    ]


def panel_html(o: Orderings, chosen: str, png: bytes | None = None) -> ui.Html:
    """What the toggle shows for one ordering, as HTML."""
    return ui.as_html(panel_blocks(o, chosen, png))


def static_toggle(o: Orderings, panels: dict[str, ui.Html], key: str,
                  chosen: str = TOGGLED[0]) -> ui.Html:
    """The toggle without a kernel: the panels behind radio buttons (:func:`~.blocks.switch`)."""
    names = [name for name in TOGGLED if name in panels]
    return ui.switch(key, [(n, panels[n]) for n in names],
                     names.index(chosen) if chosen in names else 0)


#: What the orderings' section folds (in HTML) or shows only with ``-v`` (in text).
FOLDED = "all four orderings (table, chart, jaxprs)"

section = ui.part_section("orderings", lambda o, _: answer(o),
                          lambda o, _, plot: details(o, bars_png(o, plot)), FOLDED)

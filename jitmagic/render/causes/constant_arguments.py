"""Text and HTML for the big constants measured passed as arguments."""

from __future__ import annotations

import math

from ...model.causes.constant_arguments import (
    CAPTURED,
    COMPARED,
    FORMS,
    PASSED,
    ConstantArguments,
    ConstantVariant,
    subject,
)
from ...model.stats.rule import FASTER, SAME, SLOWER
from ...model.stats.units import counted, fmt_bytes, fmt_s, time_unit
from ...model.stats.witness import CPU
from ..blocks import Block, Cell, Heading, Para, Table, as_text, first, more, part_section
from ..comparison import partial
from ..format import fmt_count, fmt_spread
from ..verdicts import cpu_mark, interval, times
from .said import said_of

TITLE = "Big constants"
#: Each form as the table calls it.
FORM_LABELS = {CAPTURED: "captured (as traced)", PASSED: "passed as arguments"}


def sentence(v: ConstantVariant) -> str:
    """What passing ``v``'s constants as arguments did to its cold first call."""
    if not v.constants:
        count, size = v.captured_constants
        return (f"{v.variant}: the program captures {counted(count, 'array constant')} "
                f"({fmt_bytes(size)}): no constant was passed as an argument (see the notes)")
    said = subject(v.constants)
    if not v.measured:
        why = v.error or "measuring stopped before both forms ran"
        return f"{v.variant}: {said}: passed as arguments, not measured ({why})"
    d = v.difference
    cpu = cpu_mark(v.clock)
    as_args = "passed as an argument" if len(v.constants) == 1 else "passed as arguments"
    if d.kind in (FASTER, SLOWER):
        amount, span = _saving(v)
        less = "less" if d.kind == FASTER else "more"
        return (f"{v.variant}: {said}: {as_args}, the cold first call takes {amount} "
                f"{less}{cpu}{f' ({span})' if span else ''}, {times(d, v.clock)} "
                f"{interval(d)}".rstrip())
    if d.kind == SAME:
        return (f"{v.variant}: {said}: {as_args}, no measurable difference in the cold first "
                f"call{cpu_mark(v.clock, ' in ')}")
    # inconclusive, no single run a side: worded as every cause words it
    return f"{v.variant}: {said}: {as_args}, {said_of('the cold first call', d, v.clock)}"


def _saving(v: ConstantVariant) -> tuple[str, str]:
    """(``0.55 s``, ``0.41–0.70 s``): the saving's size and its interval, in one unit."""
    saved = abs(v.saved_s)
    low, high = sorted(abs(x) for x in v.saved_interval)
    unit, scale = time_unit([saved, high])
    amount = f"{_figures(saved / scale)} {unit}"
    if math.isnan(low) or math.isnan(high):
        return amount, ""
    return amount, f"{_figures(low / scale)}–{_figures(high / scale)} {unit}"


def _figures(x: float) -> str:
    """Two significant figures, never an exponent: ``0.55``, ``1.2``, ``51``, ``140``."""
    return f"{x:.0f}" if x >= 10 else f"{x:.1f}" if x >= 1 else f"{x:.2f}"


def constants_table(record: ConstantArguments) -> Table:
    """The constants passed, one row each (a variant's, where they differ)."""
    rows: list[list[str | Cell]] = []
    seen = set()
    for v in record.variants.values():
        for c in v.constants:
            key = (c.name, c.nbytes, c.shape, c.dtype, c.lines)
            if key in seen:
                continue
            seen.add(key)
            rows.append([Cell(c.name or "(no name found)", code=bool(c.name)),
                         fmt_bytes(c.nbytes), f"{c.dtype}[{','.join(map(str, c.shape))}]",
                         ", ".join(str(n) for n in c.line_numbers) or "—"])
    shown, left = first(rows)
    return Table(("constant", "bytes", "shape", "read on lines"),
                 [*shown, *([[more(left, "constants", len(rows)), "", "", ""]] if left else [])])


def forms_table(record: ConstantArguments) -> Table:
    """Each measured variant's two forms: first call, XLA compile, constants, equations."""
    rows: list[list[str | Cell]] = []
    for v in record.variants.values():
        for form in FORMS:
            if form not in v.samples:
                continue
            calls = v.samples[form].get(COMPARED, [])
            compiles = v.samples[form].get("compile_s", [])
            rows.append([v.variant, FORM_LABELS[form],
                         Cell(fmt_s(v.stage_median(form, COMPARED)), fmt_spread(calls)),
                         Cell(fmt_s(v.stage_median(form, "compile_s")), fmt_spread(compiles)),
                         _left(v, form), fmt_count(v.eqns.get(form))])
    return Table(("variant", "form", "cold first call (wall)", "XLA compile (wall)",
                  "constants captured", "jaxpr eqns"), rows)


def _left(v: ConstantVariant, form: str) -> str:
    """The captured constants of a form's program (count, bytes)."""
    if form == CAPTURED:
        count, size = v.captured_constants
    elif v.constants_left is None:
        return "—"
    else:
        count, size = v.constants_left
    return f"{count} ({fmt_bytes(size) or '0 B'})"


#: How the forms' outputs matched, by their ``outputs_kind`` (none where not compared).
OUTPUTS = {"exact": "the two forms' outputs are equal",
           "rounding": "the two forms' outputs agree within rounding (largest difference "
                       "{diff:.3g}: XLA may compute on a captured constant at compile time, in "
                       "another order)",
           "mismatch": "the two forms' outputs differ beyond rounding"}


def answer(record: ConstantArguments) -> list[Block]:
    """What passing the big constants as arguments did, first: a sentence a variant."""
    return [Heading(TITLE), *partial(record.stopped),
            Para([sentence(v) for v in record.variants.values()], "verdict")]


def details(record: ConstantArguments) -> list[Block]:
    """The rest, behind ``-v`` or a click: the constants, both forms' timings, notes."""
    out: list[Block] = []
    if any(v.constants for v in record.variants.values()):
        out.append(constants_table(record))
    if any(v.samples for v in record.variants.values()):
        cpu = [v.variant for v in record.variants.values() if v.measured and v.clock == CPU]
        busy = [f"The machine was busy: the sentence{'s' * (len(cpu) > 1)} above "
                f"({', '.join(cpu)}) compare{'s' * (len(cpu) == 1)} the process's CPU time, "
                "saving included; the table's seconds are wall time."] if cpu else []
        runs = max(len(s.get(COMPARED, [])) for v in record.variants.values()
                   for s in v.samples.values())
        out += [forms_table(record),
                Para([f"Cold first calls from cleared caches, captured and passed "
                      f"interleaved: medians of {runs} [min–max], wall time. Both forms "
                      "replay the variant's traced program; only the constants' way in "
                      "differs.", *busy])]
    notes = [n for v in record.variants.values() for n in (
        v.outputs_kind in OUTPUTS and f"{v.variant}: "
        + OUTPUTS[v.outputs_kind].format(diff=v.max_abs_diff), *v.notes) if n]
    notes += list(record.notes)
    if notes:
        out.append(Para(notes, "note"))
    return out


def blocks(record: ConstantArguments) -> list[Block]:
    """The section in full, as blocks: :func:`answer`, then :func:`details`."""
    return [*answer(record), *details(record)]


def text(record: ConstantArguments) -> str:
    return as_text(blocks(record))


#: What the section folds (in HTML) or shows only with ``-v`` (in text).
FOLDED = "the constants, both forms' timings and notes"

section = part_section("constant_arguments", lambda r, _: answer(r), lambda r, *_: details(r),
                       FOLDED)

"""Where XLA spends the compile (``--xla``), as blocks: per variant the HLO passes, code
generation and the rest as shares of its profiled compile, the top passes, and what
nesting changed in those shares.

One profiled compile per variant is one sample: the section gives each part's share of
that compile, and never calls one variant's compile faster than the other's (the
comparison's own table does that, by the rule, from its samples). What the profile did
not hold is "not read", never 0.
"""

from __future__ import annotations

from ...model.causes.xla_passes import PROFILED
from ...model.causes.xla_passes import VERIFIER
from ...model.causes.xla_passes import ProfiledCompile
from ...model.causes.xla_passes import XlaPasses
from ...model.comparison import Comparison
from ...model.stats.units import fmt_s
from ..blocks import Block
from ..blocks import Cell
from ..blocks import Heading
from ..blocks import Para
from ..blocks import Table
from ..blocks import as_html
from ..blocks import as_text

HEADING = "Where XLA spends the compile"
#: Passes shown per variant, the biggest first.
TOP = 8
INTRO = ("One extra cold compile per variant under JAX's profiler, after the comparison and "
         "not one of its samples: one sample each, so read the shares of each compile, not "
         "the variants' seconds against each other. Seconds are wall time, as the profiler "
         "records them.")
SAME = "Nothing was nested: one profiled compile, of the flat program."


def pct(share: float | None) -> str:
    """A share as a person reads it (``2.4%``, ``0.03%``; "not read" where None)."""
    if share is None:
        return "not read"
    return f"{share:.2%}" if share < 0.001 else f"{share:.1%}" if share < 0.1 else f"{share:.0%}"


def blocks(x: XlaPasses) -> list[Block]:
    """The section: heading, the reason where nothing was measured, else each variant's."""
    out: list[Block] = [Heading(HEADING)]
    if x.reason is not None:
        return [*out, Para([x.reason], kind="note")]
    out.append(Para([INTRO] + ([SAME] if x.same_program else [])))
    for variant in PROFILED[:1] if x.same_program else PROFILED:
        c = x.compiles.get(variant)
        if c is None:
            why = x.notes.get(variant, "not measured: the measurement stopped before it")
            out.append(Para([f"{variant}: {why}"], kind="note"))
            continue
        out += _variant(variant, c)
    said = nesting_sentence(x)
    if said:
        out.append(Para([said]))
    if x.stopped:
        out.append(Para([f"PARTIAL: {x.stopped}"], kind="warning"))
    return out


def _variant(variant: str, c: ProfiledCompile) -> list[Block]:
    llvm = f"; LLVM's compile to machine code {pct(c.share(c.llvm_s))}" \
        if c.llvm_s is not None else ""
    line = (f"{variant}: profiled compile {fmt_s(c.compile_s)}; before XLA's passes (the "
            f"module converted to HLO) {_part(c, c.before_passes_s)}, HLO passes "
            f"({len(c.passes)} kinds) {_part(c, c.hlo_passes_s)}, code generation "
            f"{_part(c, c.codegen_s, llvm)}, the rest (Python, PjRt, loading) "
            f"{_part(c, c.rest_s)}.")
    if not c.passes:
        return [Para([line, "no HLO pass was read from the profile"], kind="note")]
    ranked = sorted(c.passes, key=lambda p: (-p.seconds, p.name))
    rows: list[list[str | Cell]] = [[Cell(_named(p.name), code=True), fmt_s(p.seconds),
                                     pct(c.share(p.seconds)), f"{p.runs:,}"]
                                    for p in ranked[:TOP]]
    left = sum(p.seconds for p in ranked[TOP:])
    if ranked[TOP:]:
        rows.append([f"{len(ranked) - TOP} more passes", fmt_s(left), pct(c.share(left)), ""])
    columns = ("HLO pass", "seconds, wall time", "share of the compile", "runs")
    return [Para([line]), Table(columns, rows, indent="  ")]


def _part(c: ProfiledCompile, seconds: float | None, more: str = "") -> str:
    """``4.91 ms (2.4%)``: seconds and their share of the compile ("not read": None)."""
    return "not read" if seconds is None else f"{fmt_s(seconds)} ({pct(c.share(seconds))}{more})"


def _named(name: str) -> str:
    return f"{name} (the HLO verifier)" if name == VERIFIER else name


#: The least move of one pass's share of the compile that is named (one sample a side).
MOVED = 0.01


def nesting_sentence(x: XlaPasses) -> str:
    """What nesting changed in the shares of the compile, as the two profiled compiles
    show it ("" where there are not two)."""
    flat, nested = x.compiles.get("flat"), x.compiles.get("nested")
    if x.same_program or flat is None or nested is None:
        return ""
    f, n = _shares(flat), _shares(nested)
    added = sorted(n.keys() - f.keys())
    gone = sorted(f.keys() - n.keys())
    moved = max(f.keys() | n.keys(), key=lambda k: (abs(n.get(k, 0.0) - f.get(k, 0.0)), k))
    said = [f"Nesting: the HLO passes took {pct(flat.share(flat.hlo_passes_s))} of the flat "
            f"compile and {pct(nested.share(nested.hlo_passes_s))} of the nested one, code "
            f"generation {pct(flat.share(flat.codegen_s))} and "
            f"{pct(nested.share(nested.codegen_s))}, the time before the passes "
            f"{pct(flat.share(flat.before_passes_s))} and "
            f"{pct(nested.share(nested.before_passes_s))}"]
    if added or gone:
        said += [_listed("only the nested compile ran", added),
                 _listed("only the flat one ran", gone)]
    if abs(n.get(moved, 0.0) - f.get(moved, 0.0)) >= MOVED:  # smaller moves are noise
        said.append(f"the pass whose share moved most is `{moved}` ({pct(f.get(moved, 0.0))} "
                    f"flat, {pct(n.get(moved, 0.0))} nested)")
    return "; ".join(s for s in said if s) + ". One compile each: shares, not a speed-up."


def _shares(c: ProfiledCompile) -> dict[str, float]:
    return {p.name: p.seconds / c.compile_s for p in c.passes}


def _listed(what: str, names: list[str]) -> str:
    return f"{what} {', '.join(f'`{n}`' for n in names)}" if names else ""


def text(x: XlaPasses) -> str:
    return as_text(blocks(x))


def html(x: XlaPasses) -> str:
    return as_html(blocks(x))


def section(c: Comparison, plot: bool = True) -> tuple[str, str] | None:
    """The table of parts' entry (:data:`jitmagic.model.parts.PARTS`): where XLA spent
    its profiled compiles, where ``--xla`` measured them."""
    record = c.xla_passes
    return None if record is None else (text(record), html(record))

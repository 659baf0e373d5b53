"""Where XLA spends the compile (``--xla``): each profiled compile's parts and passes."""

from __future__ import annotations

from ...backends import named as backend_named
from ...backends import profile as compile_events
from ...backends.profile import VERIFIER
from ...model.causes.xla_passes import PROFILED, ProfiledCompile, XlaPasses
from ...model.comparison import Comparison
from ...model.stats.cold import COMPILE, WARM_SHARE, reference, warm_extra
from ...model.stats.units import fmt_s
from ...model.stats.witness import WALL, on
from ...model.target import target_of
from ..blocks import Block, Cell, Heading, Para, Table, as_text, part_section
from .said import xla_parts

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


def blocks(x: XlaPasses, warm: dict[str, float] | None = None,
           where: str | None = None) -> list[Block]:
    """The section in full (``warm``: :func:`warm_compiles`; ``where``: what it compiled for)."""
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
        out += _variant(variant, c, where)
        if variant in (warm or {}):
            out.append(Para([f"Not cold: the {variant} profiled compile took "
                             f"{fmt_s(c.compile_s)}, under {WARM_SHARE:.0%} of a cold compile "
                             f"of the comparison's runs ({fmt_s((warm or {})[variant])}): the "
                             "compiler kept something from earlier compiles in this process, "
                             "so these shares are of a compile that did less work than a cold "
                             "one."], kind="warning"))
    if said := nesting_sentence(x):
        out.append(Para([said]))
    if x.stopped:
        out.append(Para([f"PARTIAL: {x.stopped}"], kind="warning"))
    return out


#: Each part of a compile as the user reads it (by :data:`~jitmagic.backends.profile.PARTS`).
PART_WORDS = {
    "before_passes": "before XLA's passes (the module converted to HLO)",
    "serialize": "the program serialized for the backend's plugin",
    "deserialize": "read back by the plugin",
    "hlo_passes": "HLO passes",
    "codegen": "code generation",
    "rest": "the rest (Python, PjRt, loading)",
}


def _variant(variant: str, c: ProfiledCompile, where: str | None = None) -> list[Block]:
    parts = ", ".join(_part_said(c, part) for part in compile_events.of(c.backend).parts)
    on = "" if c.backend is None else f" on the {backend_named(c.backend).label}"
    line = f"{variant}: profiled compile {fmt_s(c.compile_s)}{where or on}; {parts}."
    if c.read_s and c.backend is not None:
        line += f" The parts read cover {pct(c.share(c.read_s))} of the compile."
    if not c.passes:
        return [Para([line, "no HLO pass was read from the profile"], kind="note")]
    ranked = sorted(c.passes, key=lambda p: (-p.seconds, p.name))
    rows: list[list[str | Cell]] = [[Cell(p.name + " (the HLO verifier)" * (p.name == VERIFIER),
                                          code=True), fmt_s(p.seconds),
                                     pct(c.share(p.seconds)), f"{p.runs:,}"]
                                    for p in ranked[:TOP]]
    left = sum(p.seconds for p in ranked[TOP:])
    if ranked[TOP:]:
        rows.append([f"{len(ranked) - TOP} more passes", fmt_s(left), pct(c.share(left)), ""])
    columns = ("HLO pass", "seconds, wall time", "share of the compile", "runs")
    return [Para([line]), Table(columns, rows, indent="  ")]


def _part_said(c: ProfiledCompile, part: str) -> str:
    """``HLO passes (87 kinds) 3.32 s (79%; ...)``: a part's words, seconds and share."""
    seconds = getattr(c, f"{part}_s")  # the record's field of each part
    words = PART_WORDS[part]
    if part == "hlo_passes":
        words += f" ({len(c.passes)} kinds)"
    if seconds is None:  # "read back by the plugin: not read", never "... plugin not read"
        return f"{words}: not read"
    return f"{words} {fmt_s(seconds)} ({pct(c.share(seconds))}{_inside(c, part)})"


def _inside(c: ProfiledCompile, part: str) -> str:
    """``; the main fusion pass `Main fusion (jit_g)` 3.02 s, 72%``: what was read inside."""
    events = compile_events.of(c.backend)
    said = [f"{named.label} {f'`{n.biggest}` ' * (n.events == 1 and part == 'hlo_passes')}"
            f"{fmt_s(n.seconds)}, {pct(c.share(n.seconds))}" for n in c.named
            if (named := events.named_as(n.key)) is not None and named.within == part]
    if part == "codegen" and c.llvm_s is not None:
        said.append(f"LLVM's compile to machine code {pct(c.share(c.llvm_s))}")
    return "".join(f"; {s}" for s in said)


#: The least move of one pass's share of the compile that is named (one sample a side).
MOVED = 0.01
#: The least share of either compile a named part takes to be in the nesting sentence.
NAMED_SHARE = 0.05


def nesting_sentence(x: XlaPasses) -> str:
    """What nesting changed in the shares of the compile ("" where not two compiles)."""
    flat, nested = x.compiles.get("flat"), x.compiles.get("nested")
    if x.same_program or flat is None or nested is None:
        return ""
    f, n = _shares(flat), _shares(nested)
    added = sorted(n.keys() - f.keys())
    gone = sorted(f.keys() - n.keys())
    moved = max(f.keys() | n.keys() or {""},
                key=lambda k: (abs(n.get(k, 0.0) - f.get(k, 0.0)), k))
    said = [f"Nesting: the HLO passes took {pct(flat.share(flat.hlo_passes_s))} of the flat "
            f"compile and {pct(nested.share(nested.hlo_passes_s))} of the nested one, code "
            f"generation {pct(flat.share(flat.codegen_s))} and "
            f"{pct(nested.share(nested.codegen_s))}, the time before the passes "
            f"{pct(flat.share(flat.before_passes_s))} and "
            f"{pct(nested.share(nested.before_passes_s))}{_named_both(flat, nested)}"]
    if added or gone:
        said += [_listed("only the nested compile ran", added),
                 _listed("only the flat one ran", gone)]
    if moved and abs(n.get(moved, 0.0) - f.get(moved, 0.0)) >= MOVED:  # smaller: noise
        said.append(f"the pass whose share moved most is `{moved}` ({pct(f.get(moved, 0.0))} "
                    f"flat, {pct(n.get(moved, 0.0))} nested)")
    return "; ".join(s for s in said if s) + ". One compile each: shares, not a speed-up."


def _named_both(flat: ProfiledCompile, nested: ProfiledCompile) -> str:
    """``, the main fusion pass 72% and 75%``: named parts both compiles read."""
    events = compile_events.of(flat.backend)
    said = [f", {named.label} {pct(flat.share(f.seconds))} and {pct(nested.share(n.seconds))}"
            for f in flat.named if (n := nested.named_as(f.key)) is not None
            and (named := events.named_as(f.key)) is not None
            and max(flat.share(f.seconds) or 0.0, nested.share(n.seconds) or 0.0) >= NAMED_SHARE]
    return "".join(said)


def _shares(c: ProfiledCompile) -> dict[str, float]:
    return {p.name: p.seconds / c.compile_s for p in c.passes}


def _listed(what: str, names: list[str]) -> str:
    return f"{what} {', '.join(f'`{n}`' for n in names)}" if names else ""


def text(x: XlaPasses) -> str:
    return as_text(blocks(x))


def warm_compiles(x: XlaPasses, c: Comparison) -> dict[str, float]:
    """The variants whose profiled compile was not cold, each with its runs' cold compile."""
    return {v: reference(on(c.variants[v].samples, COMPILE, WALL))
            for v, p in x.compiles.items() if v in c.variants
            and warm_extra(p.compile_s, c.variants[v].samples, c.env.get("backend"))}


def answer(x: XlaPasses, warm: dict[str, float]) -> list[Block]:
    """Where XLA spent each profiled compile, biggest part first; or why nothing was measured."""
    if x.reason is not None:
        return [Heading(HEADING), Para([x.reason], kind="note")]
    lines = [f"{v}: profiled compile {fmt_s(c.compile_s)}{' (not cold)' * (v in warm)}: "
             f"{xla_parts(c)}"
             for v in (PROFILED[:1] if x.same_program else PROFILED)
             if (c := x.compiles.get(v)) is not None]
    return [Heading(HEADING), Para(lines or ["no compile was profiled"])]


#: What the section folds (in HTML) or shows only with ``-v`` (in text).
FOLDED = "each compile's parts and HLO passes, and what nesting moved"


def _rest(x: XlaPasses, c: Comparison, plot: bool) -> list[Block]:
    """All but the heading, for what the comparison compiled (``--target``: this host's)."""
    t = target_of(c.env)
    where = None if t is None else (
        f" for the TPU {t.topology}, on this host ({t.host}): this host's seconds")
    return blocks(x, warm_compiles(x, c), where)[1:] if x.reason is None else []


section = part_section("xla_passes", lambda x, c: answer(x, warm_compiles(x, c)), _rest, FOLDED)

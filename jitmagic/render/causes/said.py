"""The words of every cause of a slow first call (``said``, ``fix``), and the ranked section."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ...model.causes.cause import (
    KINDS,
    NO_ONE_STAGE,
    NOT_MEASURED,
    NOTHING,
    SAVING,
    SMALL_REST,
    STAGE,
    STAGES,
    UNDECIDED,
    UNMEASURABLE,
    Cause,
    Compared,
    clock_of,
    flat_table,
    is_rewrite,
    split,
    stage_parts,
)
from ...model.causes.constant_arguments import BIG_BYTES, subject
from ...model.causes.second_start import CacheRow, SecondStart, samples
from ...model.comparison import Comparison
from ...model.rows import VariantResult
from ...model.shown import register
from ...model.stats.rule import FASTER, INCONCLUSIVE, SAME, Difference, median
from ...model.stats.units import counted, fmt_bytes, fmt_s
from ...model.stats.witness import CPU, FIRST_CALL, Clock, on
from ..blocks import Block, Heading, Html, Para, answer_first, both
from ..lines import UNROLL_FIX, unroll_copies
from ..verdicts import cpu_mark, interval, say, stated, times
from .effort import cause_words as effort_words
from .second_start import NOT_READ, cache_fixes

#: Why a part with an option did not run where nothing stopped: it was not asked for.
NOT_RUN = "not run this time"
#: Said of XLA's compile where a Python loop builds most of the program.
UNROLLED = "the unrolled Python loop (under Python tracing) also multiplies what XLA compiles"
#: The end of each loop's sentence: no figure of the rewrite was had.
NOT_TIMED = ("what rewriting it saves is not measured (jitmagic does not rewrite your loops)")
#: The share of a compile from which its biggest HLO pass is named.
NAMED_PASS = 0.05
#: What a warm cache's saving is judged against (the first start in reports of 0.5 or older).
NO_CACHE = "with no cache"
FIRST_START = "on the first start, which writes the cache"

Words = tuple[str, str]


def said_of(what: str, d: Difference, clock: Clock, section: Clock | None = None) -> str:
    """The rule's verdict on ``what``, "inconclusive" first where it is; clock named if wall."""
    said = stated(what, d, clock, wall_named=section == CPU)
    return f"{say(d)}, {said}" if d.kind == INCONCLUSIVE else said


def of_clock(c: Compared, clock: Clock) -> str:
    """`` of CPU time`` / `` of wall time`` where ``clock`` is not the section's own."""
    return "" if clock == clock_of(c) else cpu_mark(clock, " of ") or " of wall time"


def stopped_first(c: Compared) -> str:
    """``the measurement stopped first (…)``; empty where nothing stopped."""
    stopped = c.stopped_anywhere
    return f"the measurement stopped first ({stopped})" if stopped else ""


def why_not(c: Compared) -> str:
    """Why a part did not run: the stop that came first, else not asked for, or failed."""
    return stopped_first(c) or NOT_RUN


def _saved(x: Cause, said: str, clock: Clock) -> str:
    """A judged saving's verdict ``said``, then its seconds on ``clock``."""
    return f"{said}, {fmt_s(x.seconds)}{of_clock(x.of, clock)} less" if x.kind == SAVING else said


# --- where the first call's time goes ---------------------------------------------------

def stage_words(x: Cause) -> Words:
    """A stage: what is known of it, and its hint (the loop ``--lines`` found, the scan)."""
    c, table = x.of, flat_table(x.of)
    if x.case == "trace_s":
        return "", (table.loop_hint() or "") if table is not None else ""
    if x.case == "compile_s":
        return _compile_detail(c), compile_fix(c)
    return "", ""


def _compile_detail(c: Compared) -> str:
    """What is known of XLA's compile: the same program for both; where ``--xla`` saw it go."""
    said = ["XLA built the same program from both variants, instruction by instruction"
            ] if c.same_compiled else []
    profiled = c.xla_passes.of("flat") if c.xla_passes is not None else None
    if profiled is not None:
        said.append(f"of an extra profiled compile, {xla_parts(profiled)}")
        if (c.flat.constant_bytes or 0) >= BIG_BYTES and profiled.before_passes_s:
            said.append("converting the module to HLO includes its big constants")
    elif c.xla_passes is not None and c.xla_passes.reason:
        said.append(f"its passes: {c.xla_passes.reason}")
    return "; ".join(said)


def xla_parts(profiled: Any) -> str:
    """``code generation 92%, HLO passes 4% (the biggest pass: `algsimp`, 6%)``."""
    parts = [(name, seconds) for name, seconds in (
        ("code generation", profiled.codegen_s), ("HLO passes", profiled.hlo_passes_s),
        ("converting the module to HLO", profiled.before_passes_s))
        if seconds is not None]
    said = ", ".join(f"{name} {profiled.share(s):.0%}" for name, s in
                     sorted(parts, key=lambda part: -part[1]))
    if profiled.top_passes and profiled.share(profiled.top_passes[0][1]) >= NAMED_PASS:
        name, seconds = profiled.top_passes[0]
        said += f" (the biggest pass: `{name}`, {profiled.share(seconds):.0%})"
    return said or "no part read"


def compile_fix(c: Compared) -> str:
    """What to do where a loop multiplies the compile: ``unroll=1``, else the loop's rewrite."""
    table = flat_table(c)
    if table is None:
        return ""
    if unrolled := table.unrolled():
        return "; ".join(f"line {x.line}'s `unroll={x.unroll}`: {UNROLL_FIX}" for x in unrolled)
    if table.python_loop() is not None:
        return f"{UNROLLED}; `jax.lax.scan` compiles its body once"
    return ""


def loop_words(x: Cause) -> Words:
    """A loop's rewrite, not measured: the share of the program it builds."""
    table = flat_table(x.of)
    assert table is not None  # a loop's cause is made from it
    if x.case == "unrolled":
        return f"{unroll_copies(x.detail, table.total_eqns)}; {NOT_TIMED}", UNROLL_FIX
    row, share = x.detail
    loop = table.loop_line(row)
    what = "it builds" if loop in (None, row.line) else f"line {row.line}, inside it, builds"
    return (f"{what} {share:.0%} of the program's {table.total_eqns:,} jaxpr equations, unrolled; "
            f"as `jax.lax.scan` or `jax.lax.fori_loop` its body is traced once; {NOT_TIMED}"), ""


# --- what a fix saved -------------------------------------------------------------------

def nesting_words(x: Cause) -> Words:
    """What nesting the helpers saved, split over the stages it was measured in."""
    c = x.of
    nested = c.nested
    if x.case == "none nested":
        return "no helper could be nested (the notes say why)", ""
    if x.case == "no helper":
        return "no helper of yours is called, so nothing was nested", ""
    if x.case == "not run":
        return why_not(c), ""
    first, clock = c.difference(FIRST_CALL), clock_of(c)
    names = ", ".join(f"`{h}`" for h in nested.helpers[:3])
    names += ", ..." if len(nested.helpers) > 3 else ""
    said = f"nesting {names}: {said_of('the first call', first, clock)}"
    if first.kind == INCONCLUSIVE:
        said += faster_stages(c)
    if x.case == "costs":
        return said, "keep them inline: their own jit costs more than it saves"
    if x.kind != SAVING:
        return said, ""
    return f"{_saved(x, said, clock)}; {_where(c, x.seconds)}", nesting_fix(nested)


def nesting_fix(v: VariantResult, most: int = 3) -> str:
    """What to do where nesting ``v``'s helpers pays (at most ``most`` of each named)."""
    def named(hs: list[str]) -> str:
        return ", ".join(f"`{h}`" for h in hs[:most]) + (", ..." if len(hs) > most else "")

    added = [h for h in v.helpers if h not in v.own_jit]
    own = [h for h in v.helpers if h in v.own_jit]
    parts = [f"`jax.jit` on {named(added)}"] if added else []
    if own:
        parts.append(f"keep your own `jax.jit` on {named(own)}: the nested variant ran "
                     f"{'them' if len(own) > 1 else 'it'} under it")
    return "; ".join(parts)


def _where(c: Compared, total: float) -> str:
    """``by stage: Python tracing 150 ms less (...), 40 ms in no one stage``."""
    parts = stage_parts(c)
    rest = split(total, parts)[1]
    clock = clock_of(c)
    said = []
    for label, s, phase in parts:
        d = c.difference(phase, clock)
        verdict = f"{times(d, clock)}, {interval(d)[1:-1]}"
        said.append(f"{label} {fmt_s(abs(s))} {'less' if s >= 0 else 'more'} ({verdict})")
    if not parts:
        return (f"no stage differs measurably ({', '.join(x for _, x in STAGES)}): "
                f"the {fmt_s(total)} are in {NO_ONE_STAGE}")
    if rest >= SMALL_REST * total:
        said.append(f"{fmt_s(rest)} in {NO_ONE_STAGE}")
    elif rest < -SMALL_REST * total:
        said.append(f"the stages' parts add up to {fmt_s(-rest)} more than the first call's "
                    "saving (medians of the parts and of the whole are taken apart)")
    return f"by stage: {', '.join(said)}"


def faster_stages(c: Compared) -> str:
    """``; its trace is 1.6× faster (…)``: faster stages where the first call is undecided."""
    clock = clock_of(c)
    judged_ = ((label, c.difference(phase, clock)) for phase, label in (
        ("trace_s", "trace"), ("lower_s", "lowering"), ("compile_s", "XLA compile")))
    return "".join(f"; {said_of(f'its {label}', d, clock)}" for label, d in judged_
                   if d.kind == FASTER)


def constants_words(x: Cause) -> Words:
    """Arrays captured from Python: what passing the biggest as arguments saved."""
    c = x.of
    count, size = c.flat.constants, c.flat.constant_bytes
    if x.case == "not counted":
        return (why_not(c) if c.stopped_anywhere else "not counted (a report older than 0.4)"
                ), ""
    if x.case == "small":
        return (f"{counted(count, 'array constant')} captured, {fmt_bytes(size)}"
                if count else "no array constant captured"), ""
    if x.case == "not passed":
        return (f"{fmt_bytes(size)} of array constants captured, not measured passed as "
                f"arguments: {why_not(c)}"), ""
    if x.case == "none passable":
        return (f"{fmt_bytes(size)} of array constants captured, none of which could be "
                "passed as an argument (the notes say why)"), ""
    variant = c.constant_arguments.variants["flat"]
    said = (f"{subject(variant.constants)}; passed as arguments, "
            f"{said_of('the first call', variant.difference, variant.clock, clock_of(c))}")
    return _saved(x, said, variant.clock), ("pass the array to the function as an argument: "
                                             "XLA then neither embeds nor folds it"
                                             if x.kind == SAVING else "")


def second_start_words(x: Cause) -> Words:
    """What a warm persistent cache saved, and apart from it what the first start's writing cost."""
    c = x.of
    if x.case == "not read":
        return (f"{NOT_READ} on a warm start (JAX caches no program with host callbacks "
                "such as `jax.debug.print`)"), ""
    measured: SecondStart = c.second_start
    row = measured.rows["flat"]
    d, clock = row.difference, row.clock()
    before, after = row.medians_on(clock)
    named = of_clock(c, clock) or cpu_mark(clock, " of ")  # the figures' clock
    against, short = (NO_CACHE, NO_CACHE) if row.no_cache else (FIRST_START, "on the first start")
    said = (f"with a warm persistent cache, "
            f"{said_of('the first call', d, clock, clock_of(c))}{_than(d, against)}")
    rest = (f" ({fmt_s(after)} warm against {fmt_s(before)}{named} {short}, measured pair "
            f"by pair){_writing(c, row)}")
    fix = _cache_fix(measured) if x.kind == SAVING else ""
    return _saved(x, said, clock) + rest, fix  # the figures follow the saving


def _than(d: Difference, against: str) -> str:
    """`` than with no cache``; `` from the first call with no cache`` after "no difference"."""
    return f" from the first call {against}" if d.kind == SAME else f" than {against}"


def _writing(c: Compared, row: CacheRow) -> str:
    """``; the first start, which also writes the cache, is 1.84× slower (...)``, where measured."""
    if not row.no_cache:
        return ""
    d, clock = row.writing, row.writing_clock()
    cold, none = (median(on(samples(x), FIRST_CALL, clock)) for x in (row.cold, row.no_cache))
    named = of_clock(c, clock) or cpu_mark(clock, " of ")
    verdict = said_of("the first start, which also writes the cache,", d, clock, clock_of(c))
    return f"; {verdict}{_than(d, NO_CACHE)} ({fmt_s(cold)} against {fmt_s(none)}{named})"


def _cache_fix(measured: SecondStart) -> str:
    """The setting that would give the user a warm cache, from their own settings."""
    return "; then ".join(fix for _, fix in cache_fixes(measured)) or \
        "your settings already cache this program: a second start reads it"


#: Each maker of causes' words, by the cause's ``maker``.
MAKERS: dict[str, Callable[[Cause], Words]] = {
    "stage": stage_words, "not run": lambda x: (why_not(x.of), ""), "nesting": nesting_words,
    "loop": loop_words, "constants": constants_words, "second start": second_start_words,
    "effort": effort_words,
}


def register_causes() -> None:
    """Word every cause here, by its maker's row of :data:`MAKERS` (what it says, what to do)."""
    register("cause", Cause, lambda x: MAKERS[x.maker](x))


#: Said under two or more measured seconds.
OVERLAP = ("the causes overlap (a big constant's cost is part of XLA's compile; a warm cache "
           "skips the compile), so their seconds do not add up")
#: How each kind that has no seconds is introduced, in order.
UNRANKED = ((UNDECIDED, "inconclusive (more runs may tell)"),
            (NOTHING, "nothing measurable to gain"), (UNMEASURABLE, "not measurable here"))


#: What the section folds (in HTML) or shows only with ``-v`` (in text).
FOLDED = "every cause in full: its figures, the stages, what was not measured"


def section(c: Comparison, verbose: bool = False) -> tuple[str, Html] | None:
    """The section as (text, HTML); none where nothing was measured and nothing stopped."""
    full = blocks(c)
    if not full or verbose:
        return both(full) if full else None
    return answer_first(answer(c), full[1:], FOLDED)


def answer(c: Comparison) -> list[Block]:
    """What ``--why`` asks, briefly: the biggest saving and its fix, then where time goes."""
    of = _by_kind(c)
    clock = clock_of(c)
    first = median(on(c.judged("flat").samples, "first_call_s", clock))
    lines = []
    if of[SAVING]:
        x, more = of[SAVING][0], len(of[SAVING]) - 1
        fix = f"; what to do: {x.fix}" if x.fix else ""
        others = f" (and {counted(more, 'more measured saving')})" if more else ""
        lines.append(f"the biggest measured saving: {x.name}, {fmt_s(x.seconds)}{fix}{others}")
    lines.append(_stages(of[STAGE], first) if of[STAGE] else
                 f"no stage of the first call was measured: {stopped_first(c)}")
    if not of[SAVING]:
        lines += [f"  {x.name}: what to do: {x.fix}" for x in of[STAGE] if x.fix][:1]
    return [Heading(_title(first, clock)), Para(lines)]


def _by_kind(c: Comparison) -> dict[str, list[Cause]]:
    return {kind: [x for x in c.why if x.kind == kind] for kind in KINDS}


def blocks(c: Comparison) -> list[Block]:
    """The section in full as blocks; none where nothing at all was measured and nothing stopped."""
    of = _by_kind(c)
    if not of[STAGE] and not c.stopped_anywhere:
        return []
    clock, stop = clock_of(c), stopped_first(c)
    first = median(on(c.judged("flat").samples, "first_call_s", clock))
    out: list[Block] = [Heading(_title(first, clock))]
    if of[SAVING]:
        rewrites = [x.name for x in of[NOT_MEASURED] if is_rewrite(x)]
        unranked = ([f"not ranked among them, as not measured, and possibly bigger: "
                     f"rewriting {', '.join(rewrites)} (below)"] if rewrites else [])
        out.append(Para(["measured savings, the biggest first:",
                         *(_saving(i, x) for i, x in enumerate(of[SAVING], 1)), *unranked]))
    if of[STAGE]:
        out.append(Para([_stages(of[STAGE], first), *_details(of[STAGE])]))
    else:
        out.append(Para([f"no stage of the first call was measured: {stop}"]))
    lines = [line for kind, label in UNRANKED if of[kind]
             for line in (f"{label}:", *(f"  {x.name}: {x.said}" for x in of[kind]))]
    if cut := [x.name for x in of[NOT_MEASURED] if x.said == stop]:
        lines.append(f"not measured, since {stop}: {', '.join(cut)}")
    if left := [x for x in of[NOT_MEASURED] if x.said != stop]:
        lines += ["not measured:", *(f"  {_unmeasured(x)}" for x in left)]
    if of[SAVING]:
        lines.append(OVERLAP)
    return out + ([Para(lines)] if lines else [])


def _title(first: float, clock: Clock) -> str:
    """``Why the first call takes 1.2 s (flat)``; on a busy machine, in CPU time."""
    if math.isnan(first):
        return "Why the first call is slow (flat)"
    on_cpu = ", CPU time: the machine was busy" if clock == CPU else ""
    return f"Why the first call takes {fmt_s(first)} (flat{on_cpu})"


def _saving(i: int, x: Cause) -> str:
    fix = f"; what to do: {x.fix}" if x.fix else ""
    return f"{i}. {x.name}, {fmt_s(x.seconds)}: {x.said}{fix}"


def _stages(stages: list[Cause], first: float) -> str:
    """``where it goes: XLA compile 205 ms (92%), Python tracing 12 ms (5%), ...``."""
    def share(x: Cause) -> str:
        return "" if math.isnan(first) or not first else f" ({min(1.0, x.seconds / first):.0%})"
    return "where it goes: " + ", ".join(f"{x.name} {fmt_s(x.seconds)}{share(x)}"
                                         for x in stages)


def _details(stages: list[Cause]) -> list[str]:
    """A stage's line where there is more to say: what was seen in it, what to do."""
    return [f"  {x.name}: {said}" for x in stages if (said := "; ".join(
        part for part in (x.said, f"what to do: {x.fix}" if x.fix else "") if part))]


def _unmeasured(x: Cause) -> str:
    """``a second start: use `--cache` ``, or why it was not measured."""
    if not x.option:
        return f"{x.name}: {x.said}"
    if x.said == NOT_RUN:
        return f"{x.name}: use `{x.option}`"
    return f"{x.name}: {x.said}; `{x.option}` measures it"

"""Why the first call is slow: what this run measured, the biggest first.

A comparison takes the flat first call (``jax.jit(f)``, the program as written) apart
into its stages (Python tracing, lowering, XLA's compile) and measures what nesting the
helpers saves; its later parts measure more (``--lines``: which lines build the
program; the big captured constants passed as arguments; ``--xla``: XLA's passes;
``--cache``: a second start). :func:`causes` sorts each into one :data:`KINDS` and
ranks within it by seconds:

* a *saving*: what a fix saved, measured, where the one rule calls it significant;
* a *stage*: where the first call's time goes, with the hint found for it (the loop
  ``--lines`` names);
* *inconclusive*, *nothing to gain* (the rule found no saving), *not measurable* (a
  figure could not be had: the cache was not read), and *not measured* (by this run: the
  option that measures it, or the stop that came first), never guessed.

The causes are derived from the record, never stored apart from it: a saved report gives
the same causes when loaded.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ..stats.rule import SAME
from ..stats.rule import Difference
from ..stats.rule import median
from ..stats.units import fmt_bytes
from ..stats.units import fmt_s
from ..stats.witness import CPU
from ..stats.witness import FIRST_CALL
from ..stats.witness import on
from .cause import KINDS
from .cause import NOT_MEASURED
from .cause import NOTHING
from .cause import STAGE
from .cause import UNMEASURABLE
from .cause import Cause
from .cause import clock_of
from .cause import judged
from .cause import of_clock
from .cause import said_of
from .cause import why_not
from .compared import Compared
from .constant_arguments import BIG_BYTES
from .constant_arguments import CAPTURED
from .constant_arguments import PASSED
from .constant_arguments import subject
from .loops import compile_fix
from .loops import loops
from .nesting import nesting
from .second_start import NOT_READ
from .second_start import CacheRow
from .second_start import SecondStart
from .second_start import cache_fixes
from .second_start import samples


def causes(c: Compared, parts: tuple[Callable[[Compared], Iterator[Cause]], ...] = ()
           ) -> tuple[Cause, ...]:
    """The causes of ``c``'s (a :class:`~jitmagic.model.comparison.Comparison`) slow
    first call, kind by kind in the order of :data:`KINDS`, the most seconds first: the
    comparison's own (:data:`CAUSES`), then those ``parts`` add (the table of parts'
    makers, :func:`jitmagic.model.parts.part_causes`)."""
    found = [cause for make in (*CAUSES, *parts) for cause in make(c)]
    return tuple(sorted(found, key=lambda x: (KINDS.index(x.kind),
                                              -x.seconds if not math.isnan(x.seconds) else 0)))


def _flat_median(c: Compared, phase: str) -> float:
    """The flat variant's median of ``phase``, on the section's clock."""
    return median(on(c.flat.samples, phase, clock_of(c)))


def stages(c: Compared) -> Iterator[Cause]:
    """Where the flat first call's time goes: its stages, each with its hint; what
    tells more of them (``--lines``, ``--xla``) where this run did not."""
    for phase, name, detail, fix in (
            ("trace_s", "Python tracing", "", _loop_hint(c)),
            ("lower_s", "lowering to StableHLO", "", ""),
            ("compile_s", "XLA compile", _compile_detail(c), compile_fix(c))):
        seconds = _flat_median(c, phase)
        if not math.isnan(seconds):
            yield Cause(name, STAGE, seconds, detail, fix)
    if c.lines is None:
        yield Cause("which lines build the program", NOT_MEASURED, said=why_not(c),
                    option="--lines")
    if c.xla_passes is None:
        yield Cause("where XLA spends its compile", NOT_MEASURED, said=why_not(c),
                    option="--xla")


def _loop_hint(c: Compared) -> str:
    """The Python loop ``--lines`` found building most of the program, and the rewrite."""
    if c.lines is None or "flat" not in c.lines.tables:
        return ""
    return c.lines.flat.loop_hint() or ""


def _compile_detail(c: Compared) -> str:
    """What is known of XLA's compile: the same program for both variants; where the
    ``--xla`` profile saw its time go."""
    said = ["XLA built the same program from both variants, instruction by instruction"
            ] if c.same_compiled else []
    profiled = c.xla_passes.of("flat") if c.xla_passes is not None else None
    if profiled is not None:
        said.append(f"of an extra profiled compile, {_xla_parts(profiled)}")
        if (c.flat.constant_bytes or 0) >= BIG_BYTES and profiled.before_passes_s:
            said.append("converting the module to HLO includes its big constants")
    elif c.xla_passes is not None and c.xla_passes.reason:
        said.append(f"its passes: {c.xla_passes.reason}")
    return "; ".join(said)


#: The share of a compile from which its biggest HLO pass is named.
NAMED_PASS = 0.05


def _xla_parts(profiled: Any) -> str:
    """``code generation 92%, HLO passes 4% (the biggest pass: `algsimp`, 6%)``: the parts
    of XLA's compile the profile read, biggest first."""
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


def constants(c: Compared) -> Iterator[Cause]:
    """Arrays captured from Python, compiled into the program as constants: what passing
    the biggest as arguments saved, where they were big enough to be measured so."""
    name, count, size = "big constants", c.flat.constants, c.flat.constant_bytes
    if count is None or size is None:
        said = why_not(c) if c.stopped_anywhere else "not counted (a report older than 0.4)"
        yield Cause(name, NOT_MEASURED, said=said)
        return
    if size < BIG_BYTES:
        said = (f"{count} array constant{'s' * (count != 1)} captured, {fmt_bytes(size)}"
                if count else "no array constant captured")
        yield Cause(name, NOTHING, said=said)
        return
    variant = c.constant_arguments.variants.get("flat") if c.constant_arguments else None
    if variant is None or not variant.measured:
        yield Cause(name, NOT_MEASURED, said=f"{fmt_bytes(size)} of array constants "
                    f"captured, not measured passed as arguments: {why_not(c)}")
        return
    if not variant.constants:
        yield Cause(name, UNMEASURABLE, said=f"{fmt_bytes(size)} of array constants "
                    "captured, none of which could be passed as an argument (the notes say "
                    "why)")
        return
    said = (f"{subject(variant.constants)}; passed as arguments, "
            f"{said_of('the first call', variant.difference, variant.clock, clock_of(c))}")
    forms = variant.samples
    yield judged(c, name, variant.difference, variant.clock, (forms[CAPTURED], forms[PASSED]),
                  said,
                  "pass the array to the function as an argument: XLA then neither embeds "
                  "nor folds it")


def second_start(c: Compared) -> Iterator[Cause]:
    """What JAX's persistent compilation cache saves on the next start (``--cache``): the
    warm first call against the first call with no cache (``docs/why.md``), both measured
    pair by pair in the section (the comparison's own runs, taken earlier under another
    load, once gave a saving larger than the whole XLA compile a cache can save). What the
    first start, which also writes the cache, costs is said apart: against it, an 8 MiB
    entry's writing made the saving rank above a fix that saved more."""
    name, measured = "a second start", c.second_start
    row = measured.rows.get("flat") if measured is not None else None
    if measured is None or row is None or not row.warm:
        yield Cause(name, NOT_MEASURED, said=why_not(c), option="--cache")
        return
    if not row.read:
        yield Cause(name, UNMEASURABLE, said=f"{NOT_READ} on a warm start (JAX "
                    "caches no program with host callbacks such as `jax.debug.print`)")
        return
    d, clock = row.difference, row.clock()
    before, after = row.medians_on(clock)
    named = of_clock(c, clock) or " of CPU time" * (clock == CPU)  # the figures' clock
    against, short = (NO_CACHE, NO_CACHE) if row.no_cache else (FIRST_START, "on the first start")
    said = (f"with a warm persistent cache, "
            f"{said_of('the first call', d, clock, clock_of(c))}{_than(d, against)}")
    rest = (f" ({fmt_s(after)} warm against {fmt_s(before)}{named} {short}, measured pair "
            f"by pair){_writing(c, row)}")
    cause = judged(c, name, d, clock, (samples(row.baseline), samples(row.warm)), said,
                   _cache_fix(measured))
    yield replace(cause, said=cause.said + rest)  # the figures follow the saving


#: What a warm cache's saving is judged against: the first call with no cache; in a
#: report of jitmagic 0.5 or older, which measured none, the first start.
NO_CACHE = "with no cache"
FIRST_START = "on the first start, which writes the cache"


def _than(d: Difference, against: str) -> str:
    """`` than with no cache``; `` from the first call with no cache`` after "shows no
    measurable difference"."""
    return f" from the first call {against}" if d.kind == SAME else f" than {against}"


def _writing(c: Compared, row: CacheRow) -> str:
    """``; the first start, which also writes the cache, is 1.84× slower (...) than with
    no cache (542 ms against 295 ms)``: what writing the entry costs, apart from the
    saving (none in a report that measured no start without the cache)."""
    if not row.no_cache:
        return ""
    d, clock = row.writing, row.writing_clock()
    cold, none = (median(on(samples(x), FIRST_CALL, clock)) for x in (row.cold, row.no_cache))
    named = of_clock(c, clock) or " of CPU time" * (clock == CPU)
    verdict = said_of("the first start, which also writes the cache,", d, clock, clock_of(c))
    return f"; {verdict}{_than(d, NO_CACHE)} ({fmt_s(cold)} against {fmt_s(none)}{named})"


def _cache_fix(measured: SecondStart) -> str:
    """The setting that would give the user a warm cache, from their own settings."""
    fixes = cache_fixes(measured)
    if not fixes:
        return "your settings already cache this program: a second start reads it"
    return "; then ".join(fix for _, fix in fixes)


#: The makers of the comparison's own causes, in the order a tie keeps (the parts'
#: follow them, in the table of parts' order).
CAUSES: tuple[Callable[[Compared], Iterator[Cause]], ...] = (stages, nesting, loops)

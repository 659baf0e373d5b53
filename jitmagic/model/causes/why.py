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
from dataclasses import dataclass
from typing import Any

from ..stats.rule import FASTER
from ..stats.rule import INCONCLUSIVE
from ..stats.rule import SAME
from ..stats.rule import Difference
from ..stats.rule import difference
from ..stats.rule import median
from ..stats.units import fmt_bytes
from ..stats.units import fmt_s
from ..stats.verdicts import interval
from ..stats.verdicts import times
from ..stats.verdicts import verb
from ..stats.witness import CPU
from ..stats.witness import FIRST_CALL
from ..stats.witness import clock_for
from ..stats.witness import on
from .compared import Compared
from .constant_arguments import BIG_BYTES
from .constant_arguments import CAPTURED
from .constant_arguments import PASSED
from .constant_arguments import subject
from .second_start import NOT_READ
from .second_start import SecondStart
from .second_start import cache_fixes
from .second_start import samples

KINDS = SAVING, STAGE, UNDECIDED, NOTHING, UNMEASURABLE, NOT_MEASURED = (
    "saving", "stage", "inconclusive", "nothing to gain", "not measurable", "not measured")


@dataclass(frozen=True)
class Cause:
    """One cause of a slow first call, of one of the :data:`KINDS`.

    ``seconds``: a saving's seconds, or a stage's median (NaN for the other kinds);
    ``said``: what was measured; ``fix``: what to do (empty where nothing follows);
    ``option``: for one not measured, the option that measures it.
    """

    name: str
    kind: str
    seconds: float = math.nan
    said: str = ""
    fix: str = ""
    option: str = ""

    @property
    def measured(self) -> bool:
        return self.kind != NOT_MEASURED

    def to_dict(self) -> dict[str, Any]:
        return {"cause": self.name, "kind": self.kind, "measured": self.measured,
                "seconds": None if math.isnan(self.seconds) else self.seconds,
                "said": self.said, "fix": self.fix, "option": self.option or None}


def causes(c: Compared, parts: tuple[Callable[[Compared], Iterator[Cause]], ...] = ()
           ) -> tuple[Cause, ...]:
    """The causes of ``c``'s (a :class:`~jitmagic.model.comparison.Comparison`) slow
    first call, kind by kind in the order of :data:`KINDS`, the most seconds first: the
    comparison's own (:data:`CAUSES`), then those ``parts`` add (the table of parts'
    makers, :func:`jitmagic.model.parts.part_causes`)."""
    found = [cause for make in (*CAUSES, *parts) for cause in make(c)]
    return tuple(sorted(found, key=lambda x: (KINDS.index(x.kind),
                                              -x.seconds if not math.isnan(x.seconds) else 0)))


def said_of(what: str, d: Difference, clock: str) -> str:
    """``the first call is 2.1× faster (1.5×–3.0×)``, ``... takes 2.1× less CPU time``:
    the rule's verdict on ``what``, led by "inconclusive" where it is."""
    said = f"{what} {'is' if d.kind == SAME else verb(clock)} {times(d, clock)}"
    said = f"{said} {interval(d)}".rstrip()
    return f"inconclusive, {said}" if d.kind == INCONCLUSIVE else said


def _judged(c: Compared, name: str, d: Difference, clock: str,
            samples: tuple[dict[str, list[float]], dict[str, list[float]]],
            said: str, fix: str) -> Cause:
    """A measured fix as the rule judged it on ``clock``: a saving only where it calls it
    faster, of the seconds ``samples`` (before, after) differ by on that same clock (said
    where it is not the section's own)."""
    if d.kind != FASTER:
        return Cause(name, UNDECIDED if d.kind == INCONCLUSIVE else NOTHING, said=said)
    before, after = (median(on(x, FIRST_CALL, clock)) for x in samples)
    seconds = before - after
    of = "" if clock == clock_of(c) else " of CPU time" if clock == CPU else " of wall time"
    return Cause(name, SAVING, seconds, f"{said}, {fmt_s(seconds)}{of} less", fix)


def clock_of(c: Compared) -> str:
    """The one clock the section's seconds are on: the one that decides the comparison's
    first call (the process's CPU time on a busy machine, else wall time)."""
    return c.clock_of(FIRST_CALL)


def _flat_median(c: Compared, phase: str) -> float:
    """The flat variant's median of ``phase``, on the section's clock."""
    return median(on(c.flat.samples, phase, clock_of(c)))


def stages(c: Compared) -> Iterator[Cause]:
    """Where the flat first call's time goes: its stages, each with its hint; what
    tells more of them (``--lines``, ``--xla``) where this run did not."""
    loop = _loop_hint(c)
    compile_fix = (f"{UNROLLED}; `jax.lax.scan` compiles its body once" if loop else "")
    for phase, name, detail, fix in (
            ("trace_s", "Python tracing", "", loop),
            ("lower_s", "lowering to StableHLO", "", ""),
            ("compile_s", "XLA compile", _compile_detail(c), compile_fix)):
        seconds = _flat_median(c, phase)
        if not math.isnan(seconds):
            yield Cause(name, STAGE, seconds, detail, fix)
    if c.lines is None:
        yield Cause("which lines build the program", NOT_MEASURED, said=_why_not(c),
                    option="--lines")
    if c.xla_passes is None:
        yield Cause("where XLA spends its compile", NOT_MEASURED, said=_why_not(c),
                    option="--xla")


#: Said of XLA's compile where a Python loop builds most of the program.
UNROLLED = "the unrolled Python loop (under Python tracing) also multiplies what XLA compiles"


def _loop_hint(c: Compared) -> str:
    """The Python loop ``--lines`` found building most of the program, and the rewrite."""
    if c.lines is None or "flat" not in c.lines.tables:
        return ""
    return c.lines.flat.loop_hint() or ""


def _compile_detail(c: Compared) -> str:
    """What is known of XLA's compile: the same program for both variants; where the
    ``--xla`` profile saw its time go."""
    said = ["both variants compiled to the same program: nesting does not change XLA's "
            "work"] if c.same_compiled else []
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


def nesting(c: Compared) -> Iterator[Cause]:
    """Helpers traced again on every call: what nesting them saved, by the one rule."""
    name, nested = "helpers traced on every call", c.nested
    if not nested.helpers and nested.inline:
        yield Cause(name, UNMEASURABLE, said="no helper could be nested (the notes say why)")
        return
    if not nested.helpers:
        yield Cause(name, NOTHING, said="no helper of yours is called, so nothing was nested")
        return
    first, clock = c.difference(FIRST_CALL), c.clock_of(FIRST_CALL)
    if math.isnan(first.ratio):
        yield Cause(name, NOT_MEASURED, said=_why_not(c))
        return
    names = ", ".join(f"`{h}`" for h in nested.helpers[:3])
    names += ", ..." if len(nested.helpers) > 3 else ""
    said = f"nesting {names}: {said_of('the first call', first, clock)}"
    if first.kind == INCONCLUSIVE:
        said += _faster_stages(c)
    cause = _judged(c, name, first, clock, (c.flat.samples, nested.samples), said,
                    nested.nesting_fix())
    if first.significant and first.kind != FASTER:
        cause = Cause(name, NOTHING, said=said,
                      fix="keep them inline: their own jit costs more than it saves")
    yield cause


def _faster_stages(c: Compared) -> str:
    """``; its trace is 1.6× faster (1.3×–2.5×)``: the stages the rule calls faster
    nested where the first call as a whole is undecided."""
    judged = ((label, c.difference(phase), c.clock_of(phase)) for phase, label in (
        ("trace_s", "trace"), ("lower_s", "lowering"), ("compile_s", "XLA compile")))
    return "".join(f"; {said_of(f'its {label}', d, clock)}" for label, d, clock in judged
                   if d.kind == FASTER)


def constants(c: Compared) -> Iterator[Cause]:
    """Arrays captured from Python, compiled into the program as constants: what passing
    the biggest as arguments saved, where they were big enough to be measured so."""
    name, count, size = "big constants", c.flat.constants, c.flat.constant_bytes
    if count is None or size is None:
        said = _why_not(c) if c.stopped_anywhere else "not counted (a report older than 0.4)"
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
                    f"captured, not measured passed as arguments: {_why_not(c)}")
        return
    if not variant.constants:
        yield Cause(name, UNMEASURABLE, said=f"{fmt_bytes(size)} of array constants "
                    "captured, none of which could be passed as an argument (the notes say "
                    "why)")
        return
    said = (f"{subject(variant.constants)}; passed as arguments, "
            f"{said_of('the first call', variant.difference, variant.clock)}")
    forms = variant.samples
    yield _judged(c, name, variant.difference, variant.clock, (forms[CAPTURED], forms[PASSED]),
                  said,
                  "pass the array to the function as an argument: XLA then neither embeds "
                  "nor folds it")


def _why_not(c: Compared) -> str:
    """Why a part did not run: the stop that came first; else it was not asked for, or
    failed (the notes say which)."""
    return stopped_first(c) or NOT_RUN


def stopped_first(c: Compared) -> str:
    """``the measurement stopped first (stopped by --timeout after ...)``; empty where
    nothing stopped."""
    stopped = c.stopped_anywhere
    return f"the measurement stopped first ({stopped})" if stopped else ""


#: Why a part with an option did not run where nothing stopped: it was not asked for.
NOT_RUN = "not run this time"


def second_start(c: Compared) -> Iterator[Cause]:
    """What JAX's persistent compilation cache saves on the next start (``--cache``):
    the warm first call against the comparison's, which had no cache."""
    name, measured = "a second start", c.second_start
    row = measured.rows.get("flat") if measured is not None else None
    if measured is None or row is None or not row.warm:
        yield Cause(name, NOT_MEASURED, said=_why_not(c), option="--cache")
        return
    if not row.read:
        yield Cause(name, UNMEASURABLE, said=f"{NOT_READ} on a warm start (JAX "
                    "caches no program with host callbacks such as `jax.debug.print`)")
        return
    warm, cold = samples(row.warm), samples(row.cold)
    clock = clock_for([c.flat.samples, warm], FIRST_CALL)
    before, after = on(c.flat.samples, FIRST_CALL, clock), on(warm, FIRST_CALL, clock)
    d = difference(before, after)
    cpu = " of CPU time" * (clock == CPU)
    said = (f"with a warm persistent cache, {said_of('the first call', d, clock)}: "
            f"{fmt_s(median(after))} against {fmt_s(median(before))}{cpu} with no cache; "
            f"the first start, which also writes the cache, took "
            f"{fmt_s(median(on(cold, FIRST_CALL, clock)))}")
    yield _judged(c, name, d, clock, (c.flat.samples, warm), said, _cache_fix(measured))


def _cache_fix(measured: SecondStart) -> str:
    """The setting that would give the user a warm cache, from their own settings."""
    fixes = cache_fixes(measured)
    if not fixes:
        return "your settings already cache this program: a second start reads it"
    return "; then ".join(fix for _, fix in fixes)


#: The makers of the comparison's own causes, in the order a tie keeps (the parts'
#: follow them, in the table of parts' order).
CAUSES: tuple[Callable[[Compared], Iterator[Cause]], ...] = (stages, nesting)

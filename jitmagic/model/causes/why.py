"""Why the first call is slow: each cause this run measured, the biggest first.

A comparison takes the flat first call apart (trace, lower, XLA compile) and measures
what nesting the helpers saves; its later parts measure more causes (``--lines``: which
lines build the program; the big constants passed as arguments; ``--xla``: XLA's
passes; ``--cache``: a second start). :func:`causes` ranks what was measured by the
seconds of the flat first call it accounts for, each with what to do; a cause this run
did not measure is listed last as "not measured", with the option that measures it,
never guessed. The section is derived from the record, never stored apart from it: a
saved report gives the same causes when loaded.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..stats.rule import FASTER
from ..stats.rule import INCONCLUSIVE
from ..stats.rule import SLOWER
from ..stats.rule import median
from ..stats.units import fmt_bytes
from ..stats.units import fmt_s
from ..stats.verdicts import interval
from ..stats.verdicts import times
from ..stats.witness import on
from .constant_arguments import BIG_BYTES


@dataclass(frozen=True)
class Cause:
    """One cause of a slow first call.

    ``seconds``: what it accounts for in the flat first call (a stage's median, or a
    measured saving); NaN where it was measured and accounts for nothing measurable.
    ``measured`` False: this run did not measure it, and ``option`` does.
    """

    name: str
    measured: bool
    seconds: float = math.nan
    said: str = ""
    fix: str = ""
    option: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"cause": self.name, "measured": self.measured,
                "seconds": None if math.isnan(self.seconds) else self.seconds,
                "said": self.said, "fix": self.fix, "option": self.option or None}


def causes(c: Any) -> tuple[Cause, ...]:
    """The causes of ``c``'s (a :class:`~jitmagic.model.comparison.Comparison`) slow
    first call: measured ones by seconds, biggest first; then those measured to account
    for nothing; then those not measured."""
    found = [cause for make in CAUSES for cause in make(c)]
    measured = sorted((x for x in found if x.measured and not math.isnan(x.seconds)),
                      key=lambda x: -x.seconds)
    nothing = [x for x in found if x.measured and math.isnan(x.seconds)]
    return (*measured, *nothing, *(x for x in found if not x.measured))


def _flat_median(c: Any, phase: str) -> float:
    return median(c.flat.samples.get(phase, []))


def _share(c: Any, seconds: float) -> str:
    """``, 42% of the 1.2 s first call`` (empty where the first call was not measured)."""
    first = _flat_median(c, "first_call_s")
    if math.isnan(first) or not first:
        return ""
    return f", {min(1.0, seconds / first):.0%} of the {fmt_s(first)} first call"


def _stage(c: Any, phase: str, name: str, what: str) -> Cause | None:
    seconds = _flat_median(c, phase)
    if math.isnan(seconds):
        return None
    return Cause(name, True, seconds, f"{what} took {fmt_s(seconds)}{_share(c, seconds)}")


def tracing(c: Any) -> Iterator[Cause]:
    """Python tracing: the flat trace stage, with the loop ``--lines`` found in it."""
    cause = _stage(c, "trace_s", "Python tracing", "tracing your Python into a jaxpr")
    if cause is None:
        return
    loop = _loop_hint(c)
    if loop:
        fix = loop
    elif c.lines is None:
        fix = ("`--lines` shows which lines build the program; a Python loop unrolls into "
               "it (`jax.lax.scan` or `jax.lax.fori_loop` traces the body once)")
    else:
        fix = "no line runs in a Python loop that builds most of the program"
    yield Cause(cause.name, True, cause.seconds, cause.said, fix)


def _loop_hint(c: Any) -> str:
    if c.lines is None or "flat" not in c.lines.tables:
        return ""
    return c.lines.flat.loop_hint() or ""


def lowering(c: Any) -> Iterator[Cause]:
    """Lowering the jaxpr to StableHLO: it grows with the program's equations."""
    cause = _stage(c, "lower_s", "lowering to StableHLO", "lowering the jaxpr")
    if cause is not None:
        yield Cause(cause.name, True, cause.seconds, cause.said,
                    "it grows with the jaxpr: what shrinks the trace shrinks it")


def compiling(c: Any) -> Iterator[Cause]:
    """XLA's compile, with where its time goes where ``--xla`` measured it."""
    cause = _stage(c, "compile_s", "XLA compile", "XLA's compile")
    if cause is None:
        return
    said = cause.said
    if c.same_compiled:
        said += ("; both variants compiled to the same program: nesting does not change "
                 "XLA's work")
    fix = ("XLA's time grows with the program it is given, after inlining: fewer and "
           "smaller operations compile faster")
    profiled = c.xla_passes.of("flat") if c.xla_passes is not None else None
    if profiled is not None:
        said += f"; of an extra profiled compile, {_xla_parts(profiled)}"
    elif c.xla_passes is not None and c.xla_passes.reason:
        said += f"; its passes: {c.xla_passes.reason}"
    else:
        fix += "; `--xla` shows which passes take it"
    yield Cause(cause.name, True, cause.seconds, said, fix)


#: The share of a compile from which its biggest HLO pass is named.
NAMED_PASS = 0.05


def _xla_parts(profiled: Any) -> str:
    """``code generation 92%, HLO passes 4% (most: `algsimp` 1%)``: the parts of XLA's
    compile the profile read, biggest first."""
    parts = [(name, seconds) for name, seconds in (
        ("code generation", profiled.codegen_s), ("HLO passes", profiled.hlo_passes_s),
        ("before the passes (the module converted to HLO)", profiled.before_passes_s))
        if seconds is not None]
    said = ", ".join(f"{name} {profiled.share(s):.0%}" for name, s in
                     sorted(parts, key=lambda part: -part[1]))
    if profiled.top_passes and profiled.share(profiled.top_passes[0][1]) >= NAMED_PASS:
        name, seconds = profiled.top_passes[0]
        said += f" (the biggest pass: `{name}`, {profiled.share(seconds):.0%})"
    return said or "no part read"


def nesting(c: Any) -> Iterator[Cause]:
    """Helpers traced again on every call: what nesting them saved, by the one rule."""
    nested = c.nested
    if not nested.helpers:
        said = ("no helper of yours is called, so nothing was nested" if not nested.inline
                else "no helper could be nested (the notes say why)")
        yield Cause("helpers traced on every call", True, said=said)
        return
    first = c.difference("first_call_s")
    clock = c.clock_of("first_call_s")
    names = ", ".join(f"`{h.rsplit('.', 1)[-1]}`" for h in nested.helpers[:3])
    names += ", ..." if len(nested.helpers) > 3 else ""
    flat, inner = (median(on(v.samples, "first_call_s", clock)) for v in (c.flat, nested))
    said = f"the first call {times(first, clock)} {interval(first)}".rstrip()
    said = f"nesting {names}: {'inconclusive, ' * (first.kind == INCONCLUSIVE)}{said}"
    if first.kind == FASTER:
        yield Cause("helpers traced on every call", True, flat - inner,
                    f"{said}, {fmt_s(flat - inner)} less", f"`jax.jit` on {names}")
    elif first.kind == SLOWER:
        yield Cause("helpers traced on every call", True, said=said,
                    fix="keep them inline: their own jit costs more than it saves")
    else:
        yield Cause("helpers traced on every call", True, said=said)


def constants(c: Any) -> Iterator[Cause]:
    """Arrays captured from Python, compiled into the program as constants: what passing
    the biggest as arguments saved, where they were big enough to be measured so."""
    count, size = c.flat.constants, c.flat.constant_bytes
    if count is None or size is None:
        yield Cause("big constants", False, said="not counted (a report older than 0.4)")
        return
    if size < BIG_BYTES:
        said = (f"{count} array constant{'s' * (count != 1)} captured, {fmt_bytes(size)}"
                if count else "no array constant captured")
        yield Cause("big constants", True, said=said)
        return
    measured = c.constant_arguments
    variant = measured.variants.get("flat") if measured is not None else None
    if variant is None or not variant.measured:
        yield Cause("big constants", False, said=f"{fmt_bytes(size)} of array constants "
                    "captured; not measured passed as arguments (the measurement stopped "
                    "or failed first)")
        return
    d = variant.difference
    said = f"{_biggest(variant.constants)}; passed as arguments, the first call " \
           f"{times(d, variant.clock)} {interval(d)}".rstrip()
    if d.kind == FASTER:
        yield Cause("big constants", True, variant.saved_s,
                    f"{said}, {fmt_s(variant.saved_s)} less",
                    "pass the array to the function as an argument: XLA then neither "
                    "embeds nor folds it")
    else:
        yield Cause("big constants", True, said=said)


def _biggest(lifted: Any) -> str:
    """``line 12 captures `BIG` (4.0 MiB)``: the biggest constant measured as an argument,
    and how many more there were."""
    if not lifted:
        return "no constant could be passed"
    top = max(lifted, key=lambda k: k.nbytes)
    where = f"line {top.line_numbers[0]}" if top.line_numbers else "a line of yours"
    name = f"`{top.name}`" if top.name else f"a {top.dtype} array"
    more = f" and {len(lifted) - 1} more" if len(lifted) > 1 else ""
    return f"{where} captures {name} ({fmt_bytes(top.nbytes)}){more}"


def second_start(c: Any) -> Iterator[Cause]:
    """What JAX's persistent compilation cache saves on the next start (``--cache``)."""
    name = "a second start"
    measured = c.second_start
    row = measured.rows.get("flat") if measured is not None else None
    if row is None:
        why = measured.stopped if measured is not None and measured.stopped else ""
        yield Cause(name, False, said=why or "what a warm persistent compilation cache "
                    "leaves of the first call", option="--cache")
        return
    if not row.read:
        yield Cause(name, True, said="the cache was not read on a warm start (a program "
                    "JAX does not cache, such as one with host callbacks)")
        return
    d = row.difference
    said = (f"the first call took {fmt_s(row.warm_s)} with a warm persistent cache, against "
            f"{fmt_s(row.cold_s)} cold (writing the cache): {times(d, row.clock())} "
            f"{interval(d)}").rstrip()
    fix = ("set `jax_compilation_cache_dir` (and "
           "`jax_persistent_cache_min_compile_time_secs` to 0 to cache every program)")
    if "flat" in measured.uncached():
        fix += ": as configured now, your JAX would not cache this program"
    if d.kind == FASTER and row.saved_s is not None:
        yield Cause(name, True, row.saved_s, f"{said}, {fmt_s(row.saved_s)} less", fix)
    else:
        yield Cause(name, True, said=said)


#: Each cause's maker, in the order a tie keeps.
CAUSES: tuple[Callable[[Any], Iterator[Cause]], ...] = (
    tracing, lowering, compiling, nesting, constants, second_start)

"""Why the first call is slow: what this run measured, the biggest first.

A comparison splits the flat first call (``jax.jit(f)``) into its stages (tracing,
lowering, XLA's compile) and measures what nesting the helpers saves; its parts measure
more (``--lines``, the big captured constants passed as arguments, ``--xla``,
``--cache``). :func:`causes` sorts each into one of :data:`KINDS`, by seconds within it:
a *saving* (a fix's, measured, that the one rule calls significant); a *stage* (where
the time goes, with its hint: the loop ``--lines`` names); *inconclusive*, *nothing to
gain*, *not measurable* (the cache was not read) and *not measured* (by this run: the
option that measures it, or the stop that came first), never guessed. Derived from the
record, never stored: a loaded report gives the same causes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from collections.abc import Iterator

from ..stats.rule import median
from ..stats.witness import on
from .cause import KINDS
from .cause import NOT_MEASURED
from .cause import NOTHING
from .cause import STAGE
from .cause import UNMEASURABLE
from .cause import Cause
from .cause import Named
from .cause import clock_of
from .cause import judged
from .compared import Compared
from .constant_arguments import BIG_BYTES
from .constant_arguments import CAPTURED
from .constant_arguments import PASSED
from .loops import loops
from .nesting import nesting
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


#: The stages of the flat first call, as the section names them.
STAGES = (("trace_s", Named.TRACING), ("lower_s", Named.LOWERING),
          ("compile_s", Named.COMPILE))


def stages(c: Compared) -> Iterator[Cause]:
    """Where the flat first call's time goes: its stages (each said with its hint); what
    tells more of them (``--lines``, ``--xla``) where this run did not."""
    for phase, name in STAGES:
        seconds = median(on(c.flat.samples, phase, clock_of(c)))  # the section's clock
        if not math.isnan(seconds):
            yield Cause(name, STAGE, seconds, maker="stage", case=phase, of=c)
    if c.lines is None:
        yield Cause(Named.LINES, NOT_MEASURED, option="--lines", maker="not run", of=c)
    if c.xla_passes is None:
        yield Cause(Named.XLA, NOT_MEASURED, option="--xla", maker="not run", of=c)


def constants(c: Compared) -> Iterator[Cause]:
    """Arrays captured from Python, compiled into the program as constants: what passing
    the biggest as arguments saved, where they were big enough to be measured so."""
    name, count, size = Named.CONSTANTS, c.flat.constants, c.flat.constant_bytes
    if count is None or size is None:
        yield Cause(name, NOT_MEASURED, maker="constants", case="not counted", of=c)
        return
    if size < BIG_BYTES:
        yield Cause(name, NOTHING, maker="constants", case="small", of=c)
        return
    variant = c.constant_arguments.variants.get("flat") if c.constant_arguments else None
    if variant is None or not variant.measured:
        yield Cause(name, NOT_MEASURED, maker="constants", case="not passed", of=c)
        return
    if not variant.constants:
        yield Cause(name, UNMEASURABLE, maker="constants", case="none passable", of=c)
        return
    forms = variant.samples
    yield judged(c, name, variant.difference, variant.clock, (forms[CAPTURED], forms[PASSED]),
                 "constants")


def second_start(c: Compared) -> Iterator[Cause]:
    """What JAX's persistent compilation cache saves on the next start (``--cache``): the
    warm first call against the first call with no cache (``docs/why.md``), both measured
    pair by pair in the section (the comparison's own runs, taken earlier under another
    load, once gave a saving larger than the whole XLA compile a cache can save). What the
    first start, which also writes the cache, costs is said apart: against it, an 8 MiB
    entry's writing made the saving rank above a fix that saved more."""
    name, measured = Named.SECOND_START, c.second_start
    row = measured.rows.get("flat") if measured is not None else None
    if measured is None or row is None or not row.warm:
        yield Cause(name, NOT_MEASURED, option="--cache", maker="not run", of=c)
        return
    if not row.read:
        yield Cause(name, UNMEASURABLE, maker="second start", case="not read", of=c)
        return
    yield judged(c, name, row.difference, row.clock(),
                 (samples(row.baseline), samples(row.warm)), "second start")


#: The makers of the comparison's own causes, in the order a tie keeps (the parts'
#: follow them, in the table of parts' order).
CAUSES: tuple[Callable[[Compared], Iterator[Cause]], ...] = (stages, nesting, loops)

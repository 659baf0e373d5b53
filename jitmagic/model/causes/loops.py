"""Loops that multiply the program, as ``--lines`` found them: a scan (or a fori_loop)
written with ``unroll`` above 1, and a Python loop that unrolls into the program.

Neither rewrite can be measured here: jitmagic does not rewrite the user's loops. So each
is said with the share of the program's jaxpr equations it builds (a scan's body is in
the jaxpr once: its ``unroll`` copies it only in what XLA compiles) and that what the
rewrite saves is not measured: listed among what was not measured, never ranked among
the measured savings, which it may well outgrow (a Python loop of 64 steps rewritten as
a scan by hand made the first call 3.6× faster where nesting made it 1.5×).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..lines import LineTable
from .cause import NOT_MEASURED
from .cause import Cause
from .cause import Named
from .compared import Compared

#: How each loop's cause is named: what :func:`is_rewrite` knows them by.
PYTHON_LOOP, JAX_LOOP = Named.PYTHON_LOOP, Named.JAX_LOOP


def is_rewrite(x: Cause) -> bool:
    """Whether ``x`` is a loop's rewrite that was not measured (one of :func:`loops`')."""
    return x.kind == NOT_MEASURED and x.name.startswith((PYTHON_LOOP, JAX_LOOP))


def flat_table(c: Compared) -> LineTable | None:
    """The flat variant's per-line table, where ``--lines`` made one."""
    return c.lines.tables.get("flat") if c.lines is not None else None


def loops(c: Compared) -> Iterator[Cause]:
    """Each unrolled scan, and the Python loop that builds most of the program, as a
    rewrite not measured (its words say the share of the program it builds)."""
    table = flat_table(c)
    if table is None:
        return
    for x in table.unrolled():
        steps = f", {x.length:,} steps" if x.length is not None else ""
        yield Cause(f"{JAX_LOOP}{x.primitive}` at line {x.line} (unroll={x.unroll}{steps})",
                    NOT_MEASURED, maker="loop", case="unrolled", of=c, detail=x)
    found = table.python_loop()
    if found is not None:
        row, share = found
        loop = table.loop_line(row)
        yield Cause(f"{PYTHON_LOOP}{row.line if loop is None else loop}", NOT_MEASURED,
                    maker="loop", case="python", of=c, detail=found)

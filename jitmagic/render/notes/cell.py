"""The sentences of what running the cell (or file) adds to a result's warnings: one
renderer per kind of :mod:`jitmagic.model.notes.cell`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...model.notes import Note
from ...model.notes import cell as c
from ...model.stats.units import counted
from .comparison import fixed


def _printed(n: c.Printed) -> str:
    return (f"your code printed {counted(n.lines, 'line')} while it was measured: Python code "
            f"(print included) runs each time JAX traces it, at least {n.traces} times here "
            "(once to find the helpers, then once per cold run of each variant), and "
            "jax.debug.print prints on every call")


def _cell_ran(n: c.CellRan) -> str:
    return (f"the {n.source} ran {n.times} times (once per sweep value): anything it does "
            f"besides defining (printing, writing files, counting) happened {n.times} times")


def _sweep_name_assigned(n: c.SweepNameAssigned) -> str:
    return (f"--sweep {n.name}: the cell assigns `{n.name}` (line {n.line}) before reading "
            "it, so the swept values never reach the code: delete that assignment")


def _late_settings(n: c.LateSettings) -> str:
    names = ", ".join(f"{k}={v}" if v else f"{k} (removed)"
                      for k, v in zip(n.settings, n.values, strict=True))
    if n.imported_by == "before":
        when = "jax had been imported before the file ran (in this process)"
        fix = "run `python -m jitmagic` in a fresh process, or set it in the shell"
    else:
        line = f"line {n.line}" if n.line else "its first definition"
        when = (f"jitmagic imports jax before {line} (the first definition, or a use of "
                "the swept name) runs")
        fix = f"set it above {line}, or in the shell"
    return f"{n.file} sets {names}, but {when}, so this run did not use it: {fix}"


#: The renderer of each of these kinds, by its type.
SAID: dict[type[Note], Callable[[Any], str]] = {
    c.X64Narrow: fixed("jax_enable_x64 is on, but every floating argument is 32-bit or "
                       "narrower: the measured program computes in that precision, not float64 "
                       "(an array made before x64 was turned on stays float32; make it again "
                       "to measure float64)"),
    c.PutBackHeld: fixed("Ctrl-C came while jitmagic put back what the cell changed: it "
                         "waited until everything was put back (the measurement had finished, "
                         "and is whole)"),
    c.Printed: _printed,
    c.CellRan: _cell_ran,
    c.SweepNameUnread: lambda n: (f"--sweep {n.name}: the code never reads `{n.name}`, so "
                                  "every value measures the same program"),
    c.SweepNameAssigned: _sweep_name_assigned,
    c.LateSettings: _late_settings,
}

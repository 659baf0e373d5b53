"""Each recompile said as it happens, not only when the run ends: a job that recompiles
at every step says so at step 2, hours before its ledger.

The recorder calls :class:`Live` on the thread that compiles, before the call that
compiles returns (:class:`~jitmagic.measure.watch.recorder.Recorder`'s ``on_again``);
it writes one line per recompile (:func:`~jitmagic.render.ledger.values.live_line`): on stderr
from ``jitmagic.watch()`` and ``python -m jitmagic watch``, and in the notebook from
``%%jitwatch`` (one line, updated in place). Each of the first :data:`EACH` recompiles
gets its line, then the 20th, 50th, 100th, 200th, ...: a loop that recompiles on every
step is said without a flood. A loop that never recompiles writes nothing and costs
nothing (JAX fires no event on a cache hit).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ...model.ledger.compiles import Compile
from ...render.ledger.values import live_line
from .streams import write

#: Recompiles that each get a line; past them, only the 20th, 50th, 100th, 200th, ...
EACH = 10


def said(n: int) -> bool:
    """Whether the ``n``-th recompile gets its line."""
    digits = str(n)
    return n <= EACH or (digits[0] in "125" and set(digits[1:]) == {"0"})


class Live:
    """Counts the run's recompiles, and each function's, and writes the line of each one
    :func:`said` of its function (``write``: where the line goes; ``name``: the compile as
    its place should read, the magic's cells named as the notebook names them): a step
    that recompiles on every call floods nothing and hides no other function's first."""

    def __init__(self, write: Callable[[str], object] = write,
                 source_file: str | None = None,
                 name: Callable[[Compile], Compile] | None = None) -> None:
        self.write, self.source_file, self.name = write, source_file, name
        self.count = 0
        self._counts: dict[tuple[str, str | None], int] = {}
        self._lock = threading.Lock()

    def __call__(self, c: Compile) -> None:
        with self._lock:
            self.count += 1
            n = self._counts[c.key] = self._counts.get(c.key, 0) + 1
            run = self.count
        if not said(n):
            return
        try:
            shown = self.name(c) if self.name is not None else c
            self.write(live_line(shown, n, run, self.source_file))
        except Exception:  # noqa: BLE001 (a line that cannot be written never breaks the run)
            pass

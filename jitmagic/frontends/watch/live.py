"""Each recompile said as it happens (a job recompiling at every step says so at step 2),
on stderr or as the notebook's one updated line: each of the first :data:`EACH` of a
function, then the 20th, 50th, 100th, 200th, ... A loop that never recompiles costs
nothing (JAX fires no event on a cache hit)."""

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
    """Counts the run's recompiles and each function's, and writes the line of each
    :func:`said` (``write``: where; ``name``: the compile as its place should read)."""

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

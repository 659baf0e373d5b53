"""The Python front end: ``jitmagic.compare``, ``jitmagic.sweep`` and ``jitmagic.advise``.

Each is its measuring function (:mod:`jitmagic.measure`) with progress drawn on
stderr, as a script's user expects; ``progress=False`` (or ``quiet=True``) is
silence, and a callable gets each :class:`~jitmagic.model.progress.Progress`.
``compare`` records its provenance (the entry's source, the keywords spelled as
options) and, with ``baseline=PATH``, shows its diff against that report.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from typing import Any
from typing import cast

from ..cell.provenance import entry_source
from ..cell.provenance import read_baseline
from ..cell.provenance import spell
from ..cell.provenance import stamp
from ..cell.provenance import with_baseline
from ..measure import advice
from ..measure import pipeline
from ..measure import sweep as sweeping
from ..model.advice import Advice
from ..model.comparison import Comparison
from ..model.progress import Draw
from ..model.sweep import Sweep
from ..options import Options
from ..options import options_of
from .stderr_progress import drawer
from .stderr_progress import drawing


@contextmanager
def _drawn(progress: bool | Draw, quiet: bool = False) -> Iterator[Draw | None]:
    """What draws progress while measuring (stderr for ``True``), finished after."""
    with drawing(drawer(not quiet and progress)) as draw:
        yield draw


@functools.wraps(pipeline.compare)
def compare(fn: Callable, /, *args: Any, options: Options | None = None,
            progress: bool | Draw = True, **kwargs: Any) -> Comparison:
    baseline = kwargs.pop("baseline", None)
    old = read_baseline(baseline)
    options, kwargs = options_of("compare", kwargs, options)
    with _drawn(progress, options.quiet) as draw:
        result = pipeline.compare(fn, *args, options=options, progress=draw, **kwargs)
    made = stamp(result, source=entry_source(fn), options=spell(options, baseline=baseline))
    return cast(Comparison, with_baseline(made, old))


@functools.wraps(sweeping.sweep)
def sweep(name: str, values: Sequence[Any], fn: Callable, /, *args: Any,
          progress: bool | Draw = True, options: Options | None = None,
          **kwargs: Any) -> Sweep:
    baseline = kwargs.pop("baseline", None)
    old = read_baseline(baseline)
    options, kwargs = options_of("sweep", kwargs, options, takes=SWEEP_TAKES)
    with _drawn(progress, options.quiet) as draw:
        result = sweeping.sweep(name, values, fn, *args, progress=draw, options=options,
                                **kwargs)
    chosen = dataclasses.replace(options, sweep=(name, tuple(values)))
    made = stamp(result, source=entry_source(fn), options=spell(chosen, baseline=baseline))
    return cast(Sweep, with_baseline(made, old))


#: The options :func:`sweep` uses: every option of ``compare`` but ``sweep`` itself
#: (the swept name and values are its first arguments).
SWEEP_TAKES = tuple(f.name for f in dataclasses.fields(Options) if f.name != "sweep")


@functools.wraps(advice.advise)
def advise(fn: Callable, /, *args: Any, progress: bool | Draw = True,
           options: Options | None = None, **kwargs: Any) -> Advice:
    options, kwargs = options_of("advise", kwargs, options, takes=advice.ADVISE_TAKES)
    with _drawn(progress, options.quiet) as draw:
        return advice.advise(fn, *args, options=options, progress=draw, **kwargs)

"""The Python front end: ``jitmagic.compare``, ``jitmagic.sweep`` and ``jitmagic.advise``.

Each is its measuring function (:mod:`jitmagic.measure`) with progress drawn on
stderr, as a script's user expects; ``progress=False`` (or ``quiet=True``) is
silence, and a callable gets each :class:`~jitmagic.model.progress.Progress`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..measure import advice, pipeline
from ..measure import sweep as sweeping
from ..model.advice import Advice
from ..model.comparison import Comparison
from ..model.progress import Draw
from ..model.sweep import Sweep
from ..options import Options, split_options
from .stderr_progress import close, drawer


@contextmanager
def _drawn(progress: bool | Draw, quiet: bool = False) -> Iterator[Draw | None]:
    """What draws progress while measuring (stderr for ``True``), finished after."""
    draw = drawer(not quiet and progress)
    try:
        yield draw
    finally:
        close(draw)


@functools.wraps(pipeline.compare)
def compare(fn: Callable, /, *args: Any, options: Options | None = None,
            progress: bool | Draw = True, **kwargs: Any) -> Comparison:
    options, kwargs = split_options(kwargs, options)
    with _drawn(progress, options.quiet) as draw:
        return pipeline.compare(fn, *args, options=options, progress=draw, **kwargs)


@functools.wraps(sweeping.sweep)
def sweep(name: str, values: Sequence[Any], fn: Callable, /, *args: Any,
          progress: bool | Draw = True, options: Options | None = None,
          **kwargs: Any) -> Sweep:
    quiet = kwargs.get("quiet", options.quiet if options else False)
    with _drawn(progress, bool(quiet)) as draw:
        return sweeping.sweep(name, values, fn, *args, progress=draw, options=options,
                              **kwargs)


@functools.wraps(advice.advise)
def advise(fn: Callable, /, *args: Any, progress: bool | Draw = True,
           **kwargs: Any) -> Advice:
    with _drawn(progress) as draw:
        return advice.advise(fn, *args, progress=draw, **kwargs)

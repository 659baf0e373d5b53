"""The Python front end: ``jitmagic.compare``, ``sweep`` and ``advise``, with progress on
stderr."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any, cast

from ..cell.provenance import entry_source, read_baseline, spell, stamp, with_baseline
from ..measure import pipeline
from ..measure import sweep as sweeping
from ..measure.parts import advice
from ..model.advice import Advice
from ..model.comparison import Comparison
from ..model.progress import Draw
from ..model.sweep import Sweep
from ..options import Options
from ..options.keywords import BASELINE, keywords_of, keywords_said, options_of
from .stderr_progress import drawing

#: Every option of ``compare`` but ``sweep`` (:func:`sweep`'s first arguments).
SWEEP_TAKES = tuple(f.name for f in dataclasses.fields(Options) if f.name != "sweep")


def compare(fn: Callable, /, *args: Any, options: Options | None = None,
            progress: bool | Draw = True, **kwargs: Any) -> Comparison:
    found = keywords_of("compare", kwargs, options)
    old = read_baseline(found.baseline)  # before anything is measured: a bad path fails at once
    with drawing(not found.options.quiet and progress) as draw:
        result = pipeline.compare(fn, *args, options=found.options, progress=draw,
                                  **found.rest)
    made = stamp(result, source=entry_source(fn),
                 options=spell(found.options, baseline=found.baseline))
    return cast(Comparison, with_baseline(made, old))


compare.__doc__ = f"""Measure ``jax.jit(fn)(*args, **kwargs)`` flat and with nested jit on its
helpers: the :class:`~jitmagic.model.comparison.Comparison` ``%%jitcompare`` shows.

``fn`` is any callable (a function, a jitted function, ``jax.grad(loss)``, a partial, a
bound method, a callable module); its helpers are the functions of yours that one plain
trace of it really calls. The keywords below are the command line's options by their
Python names (``options``: a ready :class:`~jitmagic.options.Options` they override);
every other keyword goes to ``fn`` (one of yours spelt like an option goes in a
``functools.partial``). Progress is drawn on stderr: ``progress=False`` (or
``quiet=True``) is silence, a callable gets each
:class:`~jitmagic.model.progress.Progress`. For a sweep (``sweep=``), call
``jitmagic.sweep``.

{keywords_said((*SWEEP_TAKES, BASELINE))}
"""


def sweep(name: str, values: Sequence[Any], fn: Callable, /, *args: Any,
          progress: bool | Draw = True, options: Options | None = None,
          **kwargs: Any) -> Sweep:
    found = keywords_of("sweep", kwargs, options, takes=(*SWEEP_TAKES, BASELINE))
    old = read_baseline(found.baseline)
    with drawing(not found.options.quiet and progress) as draw:
        result = sweeping.sweep(name, values, fn, *args, progress=draw,
                                options=found.options, **found.rest)
    chosen = dataclasses.replace(found.options, sweep=(name, tuple(values)))
    made = stamp(result, source=entry_source(fn),
                 options=spell(chosen, baseline=found.baseline))
    return cast(Sweep, with_baseline(made, old))


sweep.__doc__ = f"""``jitmagic.compare`` once per value: the global ``name`` of ``fn``'s module
bound to each of ``values`` while it runs (then put back); the
:class:`~jitmagic.model.sweep.Sweep` ``--sweep`` shows. ``progress`` and ``options`` as
``compare``'s; every other keyword goes to ``fn``. The keywords:

{keywords_said((*SWEEP_TAKES, BASELINE))}
"""


@functools.wraps(advice.advise)
def advise(fn: Callable, /, *args: Any, progress: bool | Draw = True,
           options: Options | None = None, **kwargs: Any) -> Advice:
    options, kwargs = options_of("advise", kwargs, options, takes=advice.ADVISE_TAKES)
    with drawing(not options.quiet and progress) as draw:
        return advice.advise(fn, *args, options=options, progress=draw, **kwargs)

"""jitmagic: where a JAX function's compile time goes, with and without nested jit.

In IPython or Jupyter::

    %load_ext jitmagic
    %%jitcompare -o
    ...
    model(x)

From Python: ``jitmagic.compare(model, x)`` returns the same
:class:`~jitmagic.model.comparison.Comparison` the magic shows, and takes the
magic's options as keywords (``repeat=1``, ``nest="layer"``, ``vmap=True``, ...,
or one :class:`~jitmagic.options.Options`); ``jitmagic.sweep`` runs it once per
value of a global, ``jitmagic.load`` reads a saved report back, and
``jitmagic.attribute(model, x)`` and ``jitmagic.advise(model, x)`` say which
helpers are worth a jit of their own, and ``jitmagic.lines(model, x)`` which
source lines build the program.
"""

from __future__ import annotations

from typing import Any

from . import render  # noqa: F401 (records show themselves through it)
from .errors import InputError, UserCodeError
from .frontends.api import advise, compare, sweep
from .measure.attribution import attribute
from .measure.lines import lines
from .model.advice import Advice
from .model.attribution import Attribution
from .model.comparison import Comparison, ReportSchemaError, VariantResult
from .model.lines import Lines
from .model.storage import load, save
from .options import Options

__all__ = [
    "Advice",
    "Attribution",
    "Comparison",
    "InputError",
    "Lines",
    "Options",
    "ReportSchemaError",
    "UserCodeError",
    "VariantResult",
    "advise",
    "attribute",
    "compare",
    "lines",
    "load",
    "load_ipython_extension",
    "save",
    "sweep",
    "unload_ipython_extension",
]
__version__ = "0.1.0"


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jitmagic``: register ``%jitcompare`` and ``%%jitcompare``."""
    from .frontends.magic import register

    register(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext jitmagic``: remove the magics again."""
    from .frontends.magic import unregister

    unregister(ipython)

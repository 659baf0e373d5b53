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
value of a global, ``jitmagic.load`` reads a saved report back, ``jitmagic.diff(old, new)``
says what changed against a baseline, and
``jitmagic.attribute(model, x)`` and ``jitmagic.advise(model, x)`` say which
helpers are worth a jit of their own, and ``jitmagic.lines(model, x)`` which
source lines build the program. ``with jitmagic.watch() as w:`` runs a block as
written and records every compile it causes, and why (``%%jitwatch`` in a notebook).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import render  # noqa: F401 (records show themselves through it; imports no jax)
from .errors import InputError, RecompiledError, UserCodeError
from .frontends.saving import save
from .model.advice import Advice
from .model.attribution import Attribution
from .model.comparison import Comparison
from .model.diff import Diff
from .model.ledger import Ledger, LedgerDiff
from .model.lines import Lines
from .model.reports.storage import diff_any as diff
from .model.reports.storage import load
from .model.rows import VariantResult
from .model.saved.schema import ReportSchemaError
from .model.sweep import Sweep
from .options import Options

__all__ = [
    "Advice",
    "Attribution",
    "Comparison",
    "Diff",
    "InputError",
    "Ledger",
    "LedgerDiff",
    "Lines",
    "Options",
    "RecompiledError",
    "ReportSchemaError",
    "Sweep",
    "UserCodeError",
    "VariantResult",
    "advise",
    "attribute",
    "compare",
    "diff",
    "lines",
    "load",
    "load_ipython_extension",
    "save",
    "sweep",
    "unload_ipython_extension",
    "watch",
]
__version__ = "0.5.0.dev0"

if TYPE_CHECKING:
    from .frontends.api import advise, compare, sweep
    from .frontends.watch.api import watch
    from .measure.lines.tables import lines
    from .measure.parts.advice import attribute

#: The functions that import jax, imported on first use (PEP 562): a file's first lines may
#: set what jax reads as it is imported (``JAX_PLATFORMS``, ``XLA_FLAGS``).
_MEASURING = ("advise", "attribute", "compare", "lines", "sweep", "watch")


def __getattr__(name: str) -> Any:
    if name not in _MEASURING:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .frontends import api
    from .frontends.watch import api as watching
    from .measure.lines import tables as lines_module
    from .measure.parts import advice

    found = {"advise": api.advise, "attribute": advice.attribute,
             "compare": api.compare, "lines": lines_module.lines, "sweep": api.sweep,
             "watch": watching.watch}
    globals().update(found)
    return found[name]


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jitmagic``: register ``%jitcompare`` and ``%jitwatch``."""
    from .frontends import magic
    from .frontends.watch import magic as watch_magic

    magic.register(ipython)
    watch_magic.register(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext jitmagic``: remove the magics again."""
    from .frontends import magic
    from .frontends.watch import magic as watch_magic

    magic.unregister(ipython)
    watch_magic.unregister(ipython)

"""Flax linen submodules nested as linen nests them: the class lifted with ``nn.jit``.

A linen module's parameters live in the scope ``apply`` sets up, so ``nn.jit(Block)``
lifts the class (named ``Block``, its instances stay ``Block_0``), bound wherever the
parent looks ``Block`` up (a global, a closure cell of the user's) while the entry runs.
"""

from __future__ import annotations

import gc
import types
from typing import Any

from ...model.notes import Inline
from ...usercode import user_file
from ..discovery.bindings import Binding
from ..discovery.bindings import CellOf
from .plan import Helper
from .trampoline import functions_of


def linen_made_before(cls: type) -> Inline:
    """Why a linen module made before the call (``apply``'s) stays inline: linen binds it
    by ``Module.clone`` (``self.__class__``), so a lifted class bound by name is never made."""
    return Inline("inline_linen_made_before", cls.__name__)


def linen_swaps(h: Helper, namespace: dict[str, Any]) -> list[tuple[Any, Any, Any]]:
    """Every global (of its module and the entry's) and closure cell naming the helper's
    linen class, bound to ``nn.jit`` of it under the original's name."""
    from flax import linen as nn

    cls = h.linen_class
    assert cls is not None
    lifted = nn.jit(cls)
    lifted.__name__, lifted.__qualname__ = cls.__name__, cls.__qualname__
    spaces = [namespace, *(f.__globals__ for f in functions_of(h.code))]
    places: list[Any] = list({Binding(ns, k) for ns in spaces for k, v in list(ns.items())
                              if v is cls})
    places += [CellOf(c) for c in closure_cells(cls)]
    return [(b, cls, lifted) for b in places]


def closure_cells(value: Any) -> list[types.CellType]:
    """The closure cells of the user's functions that hold ``value`` as a free variable
    they name (not the ``__class__`` cell of a class's own methods)."""
    cells = []
    for cell in (c for c in gc.get_referrers(value) if isinstance(c, types.CellType)):
        for closure in (t for t in gc.get_referrers(cell) if isinstance(t, tuple)):
            for fn in (f for f in gc.get_referrers(closure) if isinstance(f, types.FunctionType)
                       and f.__closure__ is closure):
                name = fn.__code__.co_freevars[closure.index(cell)]
                if name != "__class__" and user_file(fn.__code__.co_filename):
                    cells.append(cell)
    return list({id(c): c for c in cells}.values())

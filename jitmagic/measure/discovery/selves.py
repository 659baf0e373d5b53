"""The one fallback of discovery: the ``self`` of a method made during the trace.

A method's ``self`` decides whether a jit can take it; one made inside the traced
function (``MLP(ws)(x)``) is gone after the trace, so the entry is traced once more
with each such method wrapped at its class to keep its first ``self``.
"""


from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

import jax

from .bindings import Binding
from .bindings import swapped


def caught_selves(fn: Callable, args: tuple, kwargs: dict[str, Any],
                  jit_options: dict[str, Any], methods: dict[types.CodeType, type],
                  ) -> dict[types.CodeType, Any]:
    """The first ``self`` each of ``methods`` (code → the class holding it) is called
    with in one more trace of ``jax.jit(fn, **jit_options)``, from cleared caches."""
    caught: dict[types.CodeType, Any] = {}
    swaps = []
    for code, klass in methods.items():
        raw = vars(klass)[code.co_name]
        swaps.append((Binding(klass, code.co_name), raw, _keeping_self(raw, code, caught)))
    jax.clear_caches()
    try:
        with swapped(swaps):
            jax.jit(fn, **jit_options).trace(*args, **kwargs)
    except Exception:  # noqa: BLE001 (the first trace passed: what it saw stands)
        pass
    finally:
        jax.clear_caches()
    return caught


def _keeping_self(raw: Any, code: types.CodeType, caught: dict[types.CodeType, Any],
                  ) -> Callable:
    """``raw`` (a class's attribute) as a method that notes its first ``self``."""

    @functools.wraps(raw)
    def keeping(self: Any, *args: Any, **kwargs: Any) -> Any:
        caught.setdefault(code, self)
        bound = raw.__get__(self, type(self)) if hasattr(raw, "__get__") else \
            functools.partial(raw, self)
        return bound(*args, **kwargs)

    return keeping

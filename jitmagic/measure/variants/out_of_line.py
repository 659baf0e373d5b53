"""Out of line: each helper compiled once as its own program through Equinox's ``noinline`` (XLA
inlines a nested ``jax.jit``); without Equinox nothing is kept out of line."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax

from ...model.notes import Inline, Note
from ..sampling.structure import sub_jaxprs
from .build import nest_only
from .rows import Prepared

#: What the program calls a helper kept out of line: the primitive's name in its jaxpr.
PRIMITIVE = "noinline"


def _noinline() -> Callable[[Callable], Callable] | None:
    try:
        from equinox.internal import noinline
    except Exception:  # Equinox absent, or a version without it
        return None
    return noinline


def unavailable() -> Inline | None:
    """Why no helper can be kept out of line here (None: Equinox's ``noinline`` imports)."""
    return None if _noinline() is not None else Inline("inline_no_noinline")


@dataclass
class OutOfLine:
    """What a trace kept out of line (each helper's calls) and why each other was not."""

    kept: dict[str, int] = field(default_factory=dict)
    refused: dict[str, Note] = field(default_factory=dict)

    def wrap(self, jitted: Callable, name: str) -> Callable:
        """``jitted`` called out of line; under autodiff, ``jitted`` itself."""
        noinline = _noinline()
        if noinline is None:
            self.refused.setdefault(name, Inline("inline_no_noinline"))
            return jitted
        kept = noinline(jitted)

        @jax.custom_jvp
        def call(arrays: Any) -> Any:
            self.kept[name] = self.kept.get(name, 0) + 1
            return kept(arrays)

        @call.defjvp
        def inline(primals: tuple, tangents: tuple) -> Any:
            self.refused.setdefault(name, Inline("inline_differentiated"))
            return jax.jvp(jitted, primals, tangents)

        return call


def out_of_line_calls(jaxpr: Any) -> int:
    """The out-of-line calls a (closed) jaxpr holds, in its sub-jaxprs too (a scan body)."""
    return sum((eqn.primitive.name == PRIMITIVE) + sum(map(out_of_line_calls, sub_jaxprs(eqn)))
               for eqn in getattr(jaxpr, "jaxpr", jaxpr).eqns)


def out_of_line_variant(nested: Prepared, helpers: tuple[str, ...]) -> tuple[Prepared, OutOfLine]:
    """The program with ``helpers`` kept out of line, and its record."""
    record = OutOfLine()
    plan = nested.variant.plan
    built = nest_only(plan, helpers, "out of line", call_as=record.wrap)
    built.jit_options = dict(nested.variant.jit_options)
    for n in built.inline:
        record.refused[n] = next((x.why for x in built.notes if isinstance(x, Note)
                                  and x.kind == "stays_inline" and x.helper == n),
                                 Inline("inline_cannot_nest"))
    return dataclasses.replace(nested, variant=built), record


def probe(prepared: Prepared, record: OutOfLine) -> tuple[int, dict[str, Note]]:
    """One untimed trace: its out-of-line calls, and why each other helper was not."""
    record.kept.clear()
    traced = jax.jit(prepared.variant.fn, **prepared.variant.jit_options).trace(
        *prepared.args, **prepared.kwargs)
    return out_of_line_calls(traced.jaxpr), dict(record.refused)

"""Out of line: each helper compiled once as its own program and called from the caller.

XLA inlines a nested ``jax.jit`` again, so nesting shortens tracing and lowering but not
XLA's compile; a helper kept *out of line* is compiled once and called, XLA never seeing
its body. The mechanism is Equinox's ``equinox.internal.noinline`` (a host callback
running the helper's own jit): JAX's ``set_xla_metadata(inlineable="false")`` keeps a
call, but XLA's call-graph flattening clones the callee per call site (JAX 0.10.2, CPU).
Under ``jax.grad`` Equinox builds further programs, so a call autodiff reaches runs
inline through a ``jax.custom_jvp``, the reason kept per helper. Without Equinox nothing
is kept out of line (:func:`unavailable`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import jax

from ...model.notes import Inline
from ...model.notes import Note
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
    """What a variant kept out of line while tracing: each helper's calls (``kept``),
    and why each other one was not (``refused``)."""

    kept: dict[str, int] = field(default_factory=dict)
    refused: dict[str, Note] = field(default_factory=dict)

    def wrap(self, jitted: Callable, name: str) -> Callable:
        """``jitted`` (a helper's own jit) called out of line; a call autodiff reaches at
        any depth runs ``jitted`` itself (its derivative rule), the reason kept."""
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

    def clear(self) -> None:
        """Forget what one trace did (each cold run traces anew)."""
        self.kept.clear()
        self.refused.clear()


def out_of_line_calls(jaxpr: Any) -> int:
    """The out-of-line calls a (closed) jaxpr holds, in its sub-jaxprs too (a scan body)."""
    return sum((eqn.primitive.name == PRIMITIVE) + sum(map(out_of_line_calls, sub_jaxprs(eqn)))
               for eqn in getattr(jaxpr, "jaxpr", jaxpr).eqns)


def out_of_line_variant(nested: Prepared, helpers: tuple[str, ...]) -> tuple[Prepared, OutOfLine]:
    """The program with each of ``helpers`` (those nested really) kept out of line, and
    its record; one nesting cannot take stays inline, its reason in ``refused``."""
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
    """One untimed trace of the out-of-line program: its out-of-line calls, and why each
    helper not kept out of line was not (``record`` keeps what this trace kept)."""
    fixed = dict(record.refused)
    record.clear()
    record.refused.update(fixed)
    traced = jax.jit(prepared.variant.fn, **prepared.variant.jit_options).trace(
        *prepared.args, **prepared.kwargs)
    return out_of_line_calls(traced.jaxpr), dict(record.refused)

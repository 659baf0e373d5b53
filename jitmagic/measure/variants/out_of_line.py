"""Out of line: each helper compiled once as its own program and called from the caller.

XLA inlines a nested ``jax.jit`` again, so nesting shortens tracing and lowering but not
XLA's compile. A helper kept *out of line* is compiled once, as a program of its own,
and the caller's program calls it, so XLA never sees (or optimizes across) its body.

The mechanism is Equinox's ``equinox.internal.noinline``: its primitive lowers to a host
callback (``xla_ffi_python_cpu_callback`` on CPU) that runs the helper's own jit, which
compiles on the first call and is then reused by every call site. JAX's public API has
no other way that keeps one compiled copy: a ``func.call`` marked
``jax.experimental.xla_metadata.set_xla_metadata(inlineable="false")`` is kept as a call
by XLA's inliner, but XLA's call-graph flattening then clones the callee once per call
site (checked on JAX 0.10.2, CPU), so the helper is still compiled once per use.

A helper is kept out of line only where it is not differentiated through: under
``jax.grad`` Equinox builds a further out-of-line program for the tangent and another
for the transpose, so what runs is no longer the helper compiled once. The out-of-line
call is a ``jax.custom_jvp`` whose derivative rule is the helper's own jit, so a call
that autodiff reaches, at any depth, runs inline (the nested variant's jit, which XLA
inlines), and the reason is kept per helper. Without Equinox nothing is kept out of
line, and :func:`unavailable` says why.
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
    """How a variant keeps its helpers out of line, and what it did: the calls of each
    helper kept out of line while tracing (``kept``), and why each other one was not
    (``refused``, helper: reason)."""

    kept: dict[str, int] = field(default_factory=dict)
    refused: dict[str, Note] = field(default_factory=dict)

    def wrap(self, jitted: Callable, name: str) -> Callable:
        """``jitted`` (a helper's own jit over its array leaves) called out of line. A
        call that autodiff reaches, at any depth (under ``jax.grad``, inside a jit
        that is differentiated), runs ``jitted`` itself: its derivative rule is
        ``jitted``'s own, and the reason is kept."""
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
    inner = getattr(jaxpr, "jaxpr", jaxpr)
    count = 0
    for eqn in inner.eqns:
        count += eqn.primitive.name == PRIMITIVE
        count += sum(out_of_line_calls(sub) for sub in _sub_jaxprs(eqn.params))
    return count


def _sub_jaxprs(params: dict[str, Any]) -> list[Any]:
    """The jaxprs an equation's parameters hold (a scan's body, a cond's branches)."""
    out = []
    for v in params.values():
        for x in v if isinstance(v, tuple | list) else (v,):
            if hasattr(x, "eqns") or hasattr(getattr(x, "jaxpr", None), "eqns"):
                out.append(x)
    return out


def out_of_line_variant(nested: Prepared, helpers: tuple[str, ...]) -> tuple[Prepared, OutOfLine]:
    """The program with each of ``helpers`` (those the nested variant really nests) kept
    out of line, and the record of what it keeps; a helper nesting cannot take stays
    inline with nesting's reason, in ``refused``."""
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
    """One untimed trace of the out-of-line program: the out-of-line calls its jaxpr
    holds, and why each helper not kept out of line was not (``record`` is left with the
    helpers this trace kept)."""
    fixed = dict(record.refused)
    record.clear()
    record.refused.update(fixed)
    traced = jax.jit(prepared.variant.fn, **prepared.variant.jit_options).trace(
        *prepared.args, **prepared.kwargs)
    return out_of_line_calls(traced.jaxpr), dict(record.refused)

"""The array constants of a traced program, and the program replayed with its biggest
ones captured (as JAX traced it) or passed as arguments, equation by equation, so that the
two forms differ in that alone (XLA may fold operations on a literal, never on a
parameter). A nested jit keeps its constants in its own closed jaxpr: the replay runs each
as a jit of its own that takes the constants below it as arguments. A constant read only
inside a loop body, a branch or a custom rule stays captured, with a note.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import jax
import numpy as np
from jax.extend.core import Literal

from ...._compat import bind_equation
from ...._compat import is_dropped
from ....model.notes import Constants
from ....model.notes import Note
from ...sampling.structure import array_bytes
from ...sampling.structure import constants_of
from ...sampling.structure import sub_jaxprs

#: Constants of at least this many bytes are passed as arguments ...
LIFT_BYTES = 64 * 2**10
#: ... at most this many of them, the biggest first.
MOST_LIFTED = 32
#: The primitives whose closed jaxpr is a call the replay can run as a jit of its own.
JIT_PRIMITIVES = ("jit", "pjit")


@dataclass
class Constant:
    """One array constant the program reads: its value as the jaxpr holds it, its bytes,
    the tracebacks of its reads (each with that of the equation holding its jaxpr), and
    the primitive the replay cannot pass it through (None: it can be lifted)."""

    value: Any
    nbytes: int
    reads: list[tuple[Any, Any]] = field(default_factory=list)
    stuck_in: str | None = None

    @property
    def liftable(self) -> bool:
        return self.stuck_in is None


@dataclass
class ProgramConstants:
    """The array constants of a program, biggest first, and a note for each captured
    value that is not an array of numbers."""

    constants: list[Constant]
    notes: list[Note]

    def lifted(self) -> list[Constant]:
        """The constants to pass as arguments: the liftable ones of at least
        :data:`LIFT_BYTES`, at most :data:`MOST_LIFTED`, biggest first."""
        big = [c for c in self.constants if c.liftable and c.nbytes >= LIFT_BYTES]
        return big[:MOST_LIFTED]


def program_constants(closed: Any) -> ProgramConstants:
    """The array constants ``closed`` (a closed jaxpr) reads, each once by identity."""
    values = constants_of(closed)
    found: dict[int, Constant] = {}
    notes = [not_an_array(v) for v in values.values() if array_bytes(v) is None
             or isinstance(v, jax.core.Tracer)]
    for eqn, holder, outer in _reads(closed):
        for var in eqn.invars:
            value = var.val if isinstance(var, Literal) else values.get(var)
            size = None if isinstance(value, jax.core.Tracer) else array_bytes(value)
            if size is None or getattr(value, "ndim", 0) == 0:
                continue
            c = found.setdefault(id(value), Constant(value, size))
            c.reads.append((eqn.source_info.traceback, outer))
            c.stuck_in = c.stuck_in or holder
    ranked = sorted(found.values(), key=lambda c: -c.nbytes)
    return ProgramConstants(ranked, list(dict.fromkeys(notes)))


def _reads(closed: Any) -> Iterator[tuple[Any, str | None, Any]]:
    """(equation, the primitive on the way to it that the replay cannot pass constants
    through or None, the traceback of the equation holding its jaxpr), each distinct
    jaxpr once per kind of path to it."""
    top = getattr(closed, "jaxpr", closed)
    stack: list[tuple[Any, str | None, Any]] = [(top, None, None)]
    seen: set[tuple[int, bool]] = set()
    while stack:
        jaxpr, holder, outer = stack.pop()
        if (id(jaxpr), holder is None) in seen:
            continue
        seen.add((id(jaxpr), holder is None))
        for eqn in jaxpr.eqns:
            yield eqn, holder, outer
            through = holder if eqn.primitive.name in JIT_PRIMITIVES else \
                holder or eqn.primitive.name
            stack.extend((sub, through, eqn.source_info.traceback) for sub in sub_jaxprs(eqn))


def not_an_array(value: Any) -> Constants:
    """The note of a captured value that is not an array of numbers."""
    if isinstance(value, jax.core.Tracer):
        what = "tracer"
    elif isinstance(value, np.ndarray) and value.dtype.hasobject:
        what = "objects"
    else:
        what = "other"
    return Constants("captured_not_array", what, type(value).__name__)


class Replay:
    """``closed``'s program, replayed as JAX traced it (:meth:`captured`) or with the
    constants ``lifted`` (values as the jaxpr holds them) passed as arguments
    (:meth:`passed`): the same equations and jit calls either way."""

    def __init__(self, closed: Any, lifted: Sequence[Any]):
        self.closed = closed
        self.lifted = tuple(lifted)
        self.ids = tuple(id(v) for v in self.lifted)
        self._needs: dict[int, tuple[int, ...]] = {}
        self._calls: dict[int, Callable] = {}

    def captured(self, name: str) -> Callable:
        """``fn(*flat_args)``: the program as JAX traced it, every constant captured where
        it was (a nested jit's in its own jaxpr: XLA sees one copy per call of it)."""
        closed = self.closed

        def program(*args: Any) -> list[Any]:
            return jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *args)

        program.__name__ = program.__qualname__ = name
        return program

    def passed(self, name: str) -> Callable:
        """``fn(lifted, *flat_args)``: the program with the lifted constants (a tuple, in
        ``lifted``'s order) passed as its first argument."""
        def program(lifted: tuple, *args: Any) -> list[Any]:
            return self._run(self.closed, args, dict(zip(self.ids, lifted, strict=True)))

        program.__name__ = program.__qualname__ = name
        return program

    def _run(self, closed: Any, args: Sequence[Any], given: dict[int, Any]) -> list[Any]:
        """Evaluate ``closed`` on ``args``, each lifted constant (by the id of the value
        the jaxpr holds) read from ``given``."""
        jaxpr = closed.jaxpr
        env: dict[Any, Any] = {v: given.get(id(c), c)
                               for v, c in zip(jaxpr.constvars, closed.consts, strict=True)}
        env.update(zip(jaxpr.invars, args, strict=True))

        def read(var: Any) -> Any:
            return given.get(id(var.val), var.val) if isinstance(var, Literal) else env[var]

        for eqn in jaxpr.eqns:
            ins = [read(v) for v in eqn.invars]
            needs = self._needs_of(eqn)
            if needs:
                outs = list(self._call(eqn)(tuple(given[i] for i in needs), *ins))
            else:
                outs = bind_equation(eqn, ins)
            env.update((v, x) for v, x in zip(eqn.outvars, outs, strict=True)
                       if not is_dropped(v))
        return [read(v) for v in jaxpr.outvars]

    def _needs_of(self, eqn: Any) -> tuple[int, ...]:
        """The lifted constants a jit equation's program reads (it or its jit calls), in
        ``ids``' order; empty for any other equation."""
        inner = eqn.params.get("jaxpr")
        if eqn.primitive.name not in JIT_PRIMITIVES or not hasattr(inner, "consts"):
            return ()
        return self._needs_in(inner)

    def _needs_in(self, closed: Any) -> tuple[int, ...]:
        key = id(closed)
        if key not in self._needs:
            read = {id(c) for c in closed.consts}
            for eqn in closed.jaxpr.eqns:
                read.update(id(v.val) for v in eqn.invars if isinstance(v, Literal))
                read.update(self._needs_of(eqn))
            self._needs[key] = tuple(i for i in self.ids if i in read)
        return self._needs[key]

    def _call(self, eqn: Any) -> Callable:
        """The jit that runs a jit equation's program with its lifted constants as its
        first argument: one per distinct sub-jaxpr, so that its calls share one body."""
        inner = eqn.params["jaxpr"]
        if id(inner) not in self._calls:
            needs = self._needs_in(inner)

            def call(lifted: tuple, *args: Any) -> list[Any]:
                return self._run(inner, args, dict(zip(needs, lifted, strict=True)))

            call.__name__ = call.__qualname__ = str(eqn.params.get("name", "inner"))
            self._calls[id(inner)] = jax.jit(call)
        return self._calls[id(inner)]


def flat_arguments(args: tuple, kwargs: dict[str, Any], jit_options: dict[str, Any],
                   closed: Any) -> list[Any] | None:
    """The call's traced leaves in the order of ``closed``'s inputs (static ones left out);
    None where they do not match its inputs one for one by shape."""
    n = len(args)
    static = {i % n for i in jit_options.get("static_argnums", ()) or () if -n <= i < n}
    names = set(jit_options.get("static_argnames", ()) or ())
    dynamic = ([a for i, a in enumerate(args) if i not in static],
               {k: v for k, v in kwargs.items() if k not in names})
    leaves = jax.tree_util.tree_leaves(dynamic)
    invars = closed.jaxpr.invars
    if len(leaves) != len(invars):
        return None
    if any(np.shape(leaf) != getattr(var.aval, "shape", None)
           for leaf, var in zip(leaves, invars, strict=True)):
        return None
    return leaves

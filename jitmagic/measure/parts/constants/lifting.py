"""The array constants of a traced program, where each comes from (the user's lines, the name that
holds it, matched by identity, else by the one candidate of equal shape), and the program
replayed with its biggest ones captured or passed as arguments. The method: docs/constants.md."""

from __future__ import annotations

import functools
import gc
import itertools
import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import jax
import numpy as np
from jax.extend.core import Literal

from ...._compat import bind_equation, is_dropped
from ....model.notes import Constants, Note
from ....usercode import user_file
from ...discovery.found import names_written
from ...discovery.live_objects import functions_behind
from ...lines.counts import Key, UserCode
from ...sampling.stages import traced_arguments
from ...sampling.structure import JIT, array_bytes, constants_of, sub_jaxprs

#: Constants of at least this many bytes are passed as arguments ...
LIFT_BYTES = 64 * 2**10
#: ... at most this many of them, the biggest first.
MOST_LIFTED = 32


@dataclass
class Constant:
    """One array constant the program reads: value, bytes, reads, what keeps it captured."""

    value: Any
    nbytes: int
    reads: list[tuple[Any, Any]] = field(default_factory=list)
    stuck_in: str | None = None

    @property
    def liftable(self) -> bool:
        return self.stuck_in is None


@dataclass
class ProgramConstants:
    """The array constants of a program, biggest first, and notes on the other values."""

    constants: list[Constant]
    notes: list[Note]

    def lifted(self) -> list[Constant]:
        """The constants to pass as arguments, biggest first."""
        big = [c for c in self.constants if c.liftable and c.nbytes >= LIFT_BYTES]
        return big[:MOST_LIFTED]

    def not_lifted(self) -> list[Note]:
        """Notes on big constants the replay cannot pass, and on small ones that hold most bytes."""
        out: list[Note] = [Constants("constant_stuck", c.nbytes, str(c.stuck_in))
                           for c in self.constants if not c.liftable and c.nbytes >= LIFT_BYTES]
        total = sum(c.nbytes for c in self.constants)
        small = sum(c.nbytes for c in self.constants if c.nbytes < LIFT_BYTES)
        if small * 2 > total:
            out.append(Constants("small_constants", small, total, LIFT_BYTES))
        return out


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
    """(equation, the primitive the replay cannot pass through or None, the holder's traceback)."""
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
            through = holder if eqn.primitive.name == JIT else \
                holder or eqn.primitive.name
            stack.extend((sub, through, eqn.source_info.traceback) for sub in sub_jaxprs(eqn))


def not_an_array(value: Any) -> Constants:
    """The note of a captured value that is not an array of numbers."""
    what = ("tracer" if isinstance(value, jax.core.Tracer) else
            "objects" if isinstance(value, np.ndarray) and value.dtype.hasobject else "other")
    return Constants("captured_not_array", what, type(value).__name__)


class Replay:
    """``closed``'s program replayed with its constants captured or ``lifted`` as arguments."""

    def __init__(self, closed: Any, lifted: Sequence[Any]):
        self.closed = closed
        self.lifted = tuple(lifted)
        self.ids = tuple(id(v) for v in self.lifted)
        self._needs: dict[int, tuple[int, ...]] = {}
        self._calls: dict[int, Callable] = {}

    def captured(self, name: str) -> Callable:
        """``fn(*flat_args)``: the program as JAX traced it, every constant captured."""
        closed = self.closed

        def program(*args: Any) -> list[Any]:
            return jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *args)

        program.__name__ = program.__qualname__ = name
        return program

    def passed(self, name: str) -> Callable:
        """``fn(lifted, *flat_args)``: the program with the lifted constants passed first."""
        def program(lifted: tuple, *args: Any) -> list[Any]:
            return self._run(self.closed, args, dict(zip(self.ids, lifted, strict=True)))

        program.__name__ = program.__qualname__ = name
        return program

    def _run(self, closed: Any, args: Sequence[Any], given: dict[int, Any]) -> list[Any]:
        """Evaluate ``closed`` on ``args``, each lifted constant read from ``given`` by id."""
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
        """The lifted constants a jit equation's program reads, in ``ids``' order."""
        inner = eqn.params.get("jaxpr")
        if eqn.primitive.name != JIT or not hasattr(inner, "consts"):
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
        """The jit running a jit equation's program with its lifted constants, one per jaxpr."""
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
    """The call's traced leaves in ``closed``'s input order; None where shapes do not match."""
    leaves = jax.tree_util.tree_leaves(traced_arguments(None, args, kwargs, jit_options))
    invars = closed.jaxpr.invars
    if len(leaves) != len(invars):
        return None
    if any(np.shape(leaf) != getattr(var.aval, "shape", None)
           for leaf, var in zip(leaves, invars, strict=True)):
        return None
    return leaves


#: How a name was matched to a constant (``LiftedConstant.matched``).
SAME_OBJECT, SAME_SHAPE_DTYPE, SAME_SHAPE = "same object", "same shape and dtype", "same shape"
#: At most this many items of one container are looked at for arrays.
MOST_ITEMS = 100


class Named(NamedTuple):
    """An array the user's code reaches by ``name``."""

    name: str
    value: Any


def lines_of(constant: Constant, user: UserCode) -> tuple[Key, ...]:
    """The user lines that read ``constant``, in order."""
    return tuple(sorted({stack[0] for traceback, outer in constant.reads
                         if (stack := user.stack(traceback) or user.stack(outer))}))


def reachable_arrays(entry: Any, functions: Iterable[Any],
                     codes: Iterable[types.CodeType]) -> list[Named]:
    """The arrays the user's code reaches by name from the entry, helpers and ``codes``."""
    found: list[Named] = []
    for name, value in itertools.chain(_selves(entry), _places(entry, functions, codes)):
        found.extend(_arrays_at(name, value))
    return found


def _places(entry: Any, functions: Iterable[Any],
            codes: Iterable[types.CodeType]) -> Iterator[tuple[str, Any]]:
    """(name, value) of the globals the user's functions look up and of their closures."""
    seen: set[types.CodeType] = set()
    for fn in _user_functions(entry, functions, codes):
        if fn.__code__ in seen:
            continue
        seen.add(fn.__code__)
        space = fn.__globals__
        yield from ((k, space[k]) for k in sorted(names_written(fn.__code__)) if k in space)
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
            try:
                yield name, cell.cell_contents
            except ValueError:  # an empty cell
                continue


def _user_functions(entry: Any, functions: Iterable[Any],
                    codes: Iterable[types.CodeType]) -> Iterator[types.FunctionType]:
    """The user's functions behind the entry and ``functions``, then those running ``codes``."""
    for fn in itertools.chain(functions_behind(entry), *(functions_behind(f) for f in functions)):
        if user_file(fn.__code__.co_filename):
            yield fn
    wanted = set(codes)
    if wanted:
        yield from (f for f in gc.get_referrers(*wanted)
                    if isinstance(f, types.FunctionType) and f.__code__ in wanted)


def _selves(entry: Any) -> Iterator[tuple[str, Any]]:
    """``("self", obj)`` for the object a bound-method or callable-instance entry is."""
    obj, depth = entry, 0
    while obj is not None and depth < 6:
        if isinstance(obj, types.MethodType):
            yield "self", obj.__self__
            return
        if isinstance(obj, functools.partial):
            obj = obj.func
        elif isinstance(obj, types.FunctionType):
            obj = getattr(obj, "__wrapped__", None)
        elif callable(obj) and hasattr(obj, "__dict__") and not isinstance(obj, type):
            inner = getattr(obj, "__wrapped__", None)
            if inner is None:
                yield "self", obj
                return
            obj = inner
        else:
            return
        depth += 1


def _arrays_at(name: str, value: Any) -> list[Named]:
    """The arrays at ``name``: the value itself, or one step inside it."""
    if _is_array(value):
        return [Named(name, value)]
    if isinstance(value, dict):
        pairs = ((f"{name}[{k!r}]", v) for k, v in value.items())
    elif isinstance(value, list | tuple):
        pairs = ((f"{name}[{i}]", v) for i, v in enumerate(value))
    elif isinstance(value, types.ModuleType):
        if not user_file(getattr(value, "__file__", None) or "<"):
            return []
        pairs = ((f"{name}.{k}", v) for k, v in vars(value).items() if not k.startswith("_"))
    elif isinstance(value, type | types.FunctionType) or not hasattr(value, "__dict__"):
        return []
    else:
        try:
            attrs = dict(object.__getattribute__(value, "__dict__"))
        except Exception:  # noqa: BLE001 (an object that refuses its __dict__: nothing here)
            return []
        pairs = ((f"{name}.{k}", v) for k, v in attrs.items())
    return [Named(n, v) for n, v in itertools.islice(pairs, MOST_ITEMS) if _is_array(v)]


def _is_array(value: Any) -> bool:
    return isinstance(value, np.ndarray | jax.Array) and not isinstance(value, jax.core.Tracer)


def name_of(value: Any, named: Sequence[Named]) -> tuple[str | None, str | None]:
    """(the Python name of the constant ``value``, how it was matched), or (None, None)."""
    for how, same in ((SAME_OBJECT, _same_object), (SAME_SHAPE_DTYPE, _same_shape_dtype),
                      (SAME_SHAPE, _same_shape)):
        hits = [n for n in named if same(value, n.value)]
        if hits:  # several arrays could be it: none is named
            one = how == SAME_OBJECT or len({id(n.value) for n in hits}) == 1
            return (hits[0].name, how) if one else (None, None)
    return None, None


def _same_object(value: Any, candidate: Any) -> bool:
    return value is candidate or (
        isinstance(value, np.ndarray) and isinstance(candidate, np.ndarray)
        and _same_shape_dtype(value, candidate) and np.may_share_memory(value, candidate))


def _same_shape_dtype(value: Any, candidate: Any) -> bool:
    return _same_shape(value, candidate) and np.dtype(value.dtype) == np.dtype(candidate.dtype)


def _same_shape(value: Any, candidate: Any) -> bool:
    """Whether ``value`` can be a converted copy of ``candidate`` (same shape, kind of number)."""
    kind, candidate_kind = np.dtype(value.dtype).kind, np.dtype(candidate.dtype).kind
    return (tuple(np.shape(value)) == tuple(np.shape(candidate)) and kind == candidate_kind
            and kind in NUMBER_KINDS)


#: NumPy's dtype kinds of numbers: booleans, signed and unsigned integers, floats, complex.
NUMBER_KINDS = "biufc"

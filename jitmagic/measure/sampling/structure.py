"""Program structure read from a traced, lowered and compiled run: equation
counts (each distinct sub-jaxpr once), nested jit calls, StableHLO size, the jaxpr
text."""

from __future__ import annotations

import functools
import re
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import jax.numpy as jnp

from ...model.rows import ProgramFigures
from ...usercode import user_file
from .outputs import least_precise
from .stages import ColdRun


@dataclass
class ProgramFacts:
    """What a row's program is, read untimed from its cold run: the counts its record
    carries (None where the stage that gives one did not run), the jaxpr's text, and the
    run itself (its jit calls say which helpers were nested; ``--lines`` reuses it)."""

    jaxpr_eqns: int | None = None
    nested_calls: int | None = None
    stablehlo_bytes: int | None = None
    figures: ProgramFigures = field(default_factory=ProgramFigures)
    jaxpr_text: str = ""
    #: The optimized HLO, instruction by instruction, names and metadata stripped
    #: (:func:`normalized_hlo`): what says two rows compiled to the same program.
    compiled_hlo: list[str] | None = None
    program: ColdRun | None = None
    #: Where a variant's stage seconds came from (``model.rows.FROM_EVENTS``, ...).
    stages_from: str | None = None
    #: An ordering's backend compiles inside a cold first call, and its HLO's size.
    compile_events: int | None = None
    hlo_instructions: int | None = None
    #: The least precise floating dtype the program computes in (:func:`coarsest_float`).
    computed_in: str | None = None

    @property
    def jaxpr(self) -> Any:
        """The traced program's jaxpr; None where the run did not trace."""
        traced = self.program.traced if self.program is not None else None
        return traced.jaxpr if traced is not None else None


def same_compiled(shapes: dict[str, ProgramFacts]) -> bool | None:
    """Whether flat and nested compiled to the same XLA program, instruction by
    instruction (names and metadata aside); None where one has no compiled program."""
    flat, nested = (shapes[name].compiled_hlo if name in shapes else None
                    for name in ("flat", "nested"))
    return None if flat is None or nested is None else flat == nested


def structure(run: ColdRun) -> ProgramFacts:
    """Counts that explain the timings: equations, nested calls, IR sizes, what XLA made
    of it; of a run that stopped early, the counts of the stages that finished."""
    shape = ProgramFacts(program=run)
    if run.traced is not None:
        jaxpr = run.traced.jaxpr
        shape.jaxpr_eqns = count_equations(jaxpr)
        shape.nested_calls = count_nested_calls(jaxpr)
        shape.jaxpr_text = jaxpr_text(jaxpr)
        shape.computed_in = coarsest_float(jaxpr)
        constants, constant_bytes = captured_constants(jaxpr)
        shape.figures = replace(shape.figures, jaxpr_eqns_top=len(jaxpr.eqns),
                                library_calls=count_library_calls(jaxpr),
                                constants=constants, constant_bytes=constant_bytes)
    if run.lowered is not None:
        hlo = run.lowered.as_text()
        shape.stablehlo_bytes = len(hlo.encode())
        shape.figures = replace(shape.figures,
                                stablehlo_calls=len(re.findall(r"\bcall @", hlo)))
    if run.compiled is not None:
        compiled_work(run.compiled, shape)
    return shape


def compiled_work(compiled: Any, shape: ProgramFacts) -> None:
    """What XLA made of a program, into ``shape``: calls left, instructions, flops, bytes,
    each where the backend gives it."""
    text = compiled.as_text() or ""
    shape.compiled_hlo = normalized_hlo(text)
    cost, memory = _analysis(compiled.cost_analysis), _analysis(compiled.memory_analysis)
    cost = cost[0] if isinstance(cost, list | tuple) and cost else cost  # older JAX: a list
    cost = cost if isinstance(cost, dict) else {}
    shape.figures = replace(
        shape.figures, compiled_calls=len(re.findall(r"\bcall\(", text)),
        compiled_ops=sum(" = " in line for line in shape.compiled_hlo),
        compiled_flops=_count(cost.get("flops")),
        compiled_bytes_accessed=_count(cost.get("bytes accessed")),
        compiled_temp_bytes=_count(getattr(memory, "temp_size_in_bytes", None)),
        compiled_peak_bytes=_count(getattr(memory, "peak_memory_in_bytes", None)))


def _analysis(method: Any) -> Any:
    """``method()``, one of XLA's analyses; None where the backend has none."""
    try:
        return method()
    except Exception:  # noqa: BLE001 (a backend without the analysis: left out)
        return None


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and value >= 0 else None


_METADATA = re.compile(r',?\s*metadata=\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}')
_NAME = re.compile(r"%[\w.\-]+")
_PARAM = re.compile(r"([(,]\s*)[\w.\-]+:")
#: Debug tables (source files, functions, stack frames) printed before the computations.
_DEBUG_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def normalized_hlo(text: str) -> list[str]:
    """Optimized HLO text, instruction by instruction, names renumbered in order of first
    appearance (references still have to agree), metadata, the module's name line and
    the debug tables dropped: as raw text two compilations of one program differ there."""
    names: dict[str, str] = {}

    def rename(m: re.Match) -> str:
        return names.setdefault(m.group(0), f"%{len(names)}")

    out, in_table = [], False
    for line in text.splitlines():
        line = line.strip()
        if line in _DEBUG_TABLES:
            in_table = True
        if not line:
            in_table = False
        if in_table or not line or line.startswith("HloModule"):
            continue
        line = _METADATA.sub("", line)
        if line.endswith("{"):  # a computation's header: its parameters are named too
            line = _PARAM.sub(r"\1_:", line)
        out.append(_NAME.sub(rename, line))
    return out


def distinct_jaxprs(jaxpr: Any) -> list[Any]:
    """``jaxpr`` and every distinct sub-jaxpr it holds (bodies, rules, nested jits), each
    once: a helper called 16 times is one body the compiler sees once."""
    seen: dict[int, Any] = {}
    stack = [getattr(jaxpr, "jaxpr", jaxpr)]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen[id(current)] = current
        for eqn in current.eqns:
            stack.extend(sub_jaxprs(eqn))
    return list(seen.values())


def count_equations(jaxpr: Any) -> int:
    """Equations in ``jaxpr`` and its distinct sub-jaxprs (see :func:`distinct_jaxprs`)."""
    return sum(len(j.eqns) for j in distinct_jaxprs(jaxpr))


def coarsest_float(jaxpr: Any) -> str | None:
    """The least precise floating dtype ``jaxpr`` computes in (None: none): a float32
    output of bfloat16 arithmetic differs between programs by bfloat16's rounding."""
    dtypes = {v.aval.dtype for j in distinct_jaxprs(jaxpr) for eqn in j.eqns
              for v in eqn.outvars if hasattr(getattr(v, "aval", None), "dtype")}
    return least_precise(d for d in dtypes if jnp.issubdtype(d, jnp.inexact))


#: The primitive of a jit call in a jaxpr (``pjit`` before JAX 0.7, which jitmagic needs).
JIT = "jit"


def count_nested_calls(jaxpr: Any, counted: Callable[[Any], bool] = lambda eqn: True) -> int:
    """jit equations in a jaxpr (those ``counted`` keeps), counted recursively through
    sub-jaxprs: every call as it happens (a call inside a helper called twice counts twice)."""
    total = 0
    for eqn in getattr(jaxpr, "eqns", ()):
        total += eqn.primitive.name == JIT and counted(eqn)
        for sub in sub_jaxprs(eqn):
            total += count_nested_calls(sub, counted)
    return total


def count_library_calls(jaxpr: Any) -> int:
    """Of :func:`count_nested_calls`, the jits JAX and libraries make themselves
    (``jax.nn.relu``, optax, Flax), in flat as much as nested. A jit is the user's where
    an equation of its body, at any depth, was traced in a frame of the user's files
    that is not on the jit equation's own traceback (its call site)."""
    return count_nested_calls(getattr(jaxpr, "jaxpr", jaxpr), _LibraryJits().library)


class _LibraryJits:
    """The judge of :func:`count_library_calls`, each code object judged once."""

    def __init__(self) -> None:
        self.user = functools.cache(lambda code: user_file(code.co_filename))
        #: (id of a jaxpr, the code of the call site) → whether it runs user code below it
        self.runs: dict[tuple[int, frozenset[types.CodeType]], bool] = {}

    def library(self, eqn: Any) -> bool:
        """Whether the jit equation ``eqn`` is a library's."""
        body = eqn.params.get("jaxpr")
        return not self._runs_user(getattr(body, "jaxpr", body), _codes(eqn))

    def _runs_user(self, body: Any, own: frozenset[types.CodeType]) -> bool:
        """Whether an equation of ``body`` (at any depth) was traced in user code that is
        not on the jit's own call site ``own``."""
        key = (id(body), own)
        found = self.runs.get(key)
        if found is None:
            found = self.runs[key] = any(
                any(self.user(c) for c in _codes(eqn) - own)
                or any(self._runs_user(sub, own) for sub in sub_jaxprs(eqn))
                for eqn in getattr(body, "eqns", ()))
        return found


def _codes(eqn: Any) -> frozenset[types.CodeType]:
    """The code on an equation's traceback (where it was traced)."""
    return frozenset(traceback_codes(eqn.source_info.traceback))


def traceback_codes(tb: Any) -> Any:
    """The code objects on a JAX traceback, innermost first (none for no traceback)."""
    return tb.raw_frames()[0] if tb is not None else ()


def sub_jaxprs(eqn: Any) -> Iterator[Any]:
    """The jaxprs an equation holds in its parameters (bodies, branches, rules, callees)."""
    for value in eqn.params.values():
        for sub in value if isinstance(value, tuple | list) else (value,):
            inner = getattr(sub, "jaxpr", sub)
            if hasattr(inner, "eqns"):
                yield inner


def jaxpr_text(jaxpr: Any, max_lines: int = 300) -> str:
    """The jaxpr as text, cut to ``max_lines``; only equations that can show are printed
    (JAX's printer takes 0.1 s for the discussion's 8,210-line flat program)."""
    open_ = getattr(jaxpr, "jaxpr", jaxpr)  # a ClosedJaxpr prints as its jaxpr
    eqns = open_.eqns
    shown = open_.replace(eqns=eqns[:max_lines]) if len(eqns) > max_lines else jaxpr
    lines = shown.pretty_print(use_color=False).splitlines()  # no ANSI in a notebook
    if shown is jaxpr and len(lines) <= max_lines:
        return "\n".join(lines)
    more = (f"{len(lines) - max_lines} more lines" if shown is jaxpr
            else f"the rest cut ({len(eqns)} top-level equations in all)")
    return "\n".join(lines[:max_lines] + [f"... {more}"])


def constants_of(jaxpr: Any) -> dict[Any, Any]:
    """Each constant variable of a closed jaxpr, and of the closed jaxprs inside it (a
    nested jit keeps its own), with its value; empty for an open jaxpr."""
    closed = [jaxpr, *(sub for j in distinct_jaxprs(jaxpr) for eqn in j.eqns
                       for value in eqn.params.values()
                       for sub in (value if isinstance(value, tuple | list) else (value,))
                       if hasattr(sub, "consts"))]
    return {var: value for c in closed if hasattr(c, "consts")
            for var, value in zip(c.jaxpr.constvars, c.consts, strict=False)}


def constants_read(eqn: Any, values: dict[Any, Any]) -> dict[int, int]:
    """The array constants an equation reads, ``{id: bytes}``: constant variables and
    array literals; not scalars (``x * 2.0``) nor non-numeric values (a leaked tracer)."""
    out = {}
    for var in eqn.invars:
        value = values.get(var) if not hasattr(var, "val") else var.val
        size = array_bytes(value)
        if size is not None and getattr(value, "ndim", 0) > 0:
            out[id(value)] = size
    return out


def array_bytes(value: Any) -> int | None:
    """The bytes of an array of numbers (NumPy's or JAX's), else None."""
    dtype = getattr(value, "dtype", None)
    if dtype is None or getattr(dtype, "hasobject", False) or not hasattr(value, "nbytes"):
        return None
    try:
        return int(value.nbytes)
    except Exception:  # noqa: BLE001 (a tracer, a deleted buffer: no bytes to count)
        return None


def captured_constants(jaxpr: Any) -> tuple[int, int]:
    """(count, bytes) of the array constants a closed jaxpr's program reads, each once:
    arrays captured from Python (a global, a closure), which XLA compiles in."""
    values = constants_of(jaxpr)
    read: dict[int, int] = {}
    for j in distinct_jaxprs(jaxpr):
        for eqn in j.eqns:
            read.update(constants_read(eqn, values))
    return len(read), sum(read.values())

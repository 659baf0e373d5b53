"""XLA's compile read out of a JAX profile (``jax.profiler.ProfileData``): the seconds of
each HLO pass, of the HLO passes together, and of code generation.

What the profile of one CPU compile holds (JAX 0.10.2; found by walking
``jax.profiler.ProfileData.from_file`` of the ``.xplane.pb`` that ``jax.profiler.trace``
writes, Python tracer off, host tracer at level 1):

* planes ``/host:metadata`` and ``Task Environment`` (no events) and ``/host:CPU``, with a
  line per thread: ``python`` (the calling thread; ``backend_compile_and_load`` spans the
  compile there), ``tf_PjRtCompilerThreadPool/<id>`` (the compile itself) and
  ``tf_xla-cpu-codegen/<id>`` (code generation's worker threads, several).
* ``backend_compile_and_load`` starts well before XLA's ``PjRtCpuClient::Compile``: no
  event covers the gap, even at host tracer level 3. It grows with the StableHLO module
  (the module handed to XLA and converted to HLO): 0.24 s of a 0.43 s compile of the
  discussion's flat example, a few milliseconds nested.
* A line's events are flat (``name``, ``start_ns``, ``duration_ns``, ``stats``); how they
  nest is by time: an event inside another's interval on the same line is its child.
* On the compiler line ``PjRtCpuClient::Compile`` spans the compile. Each run of an HLO
  pass pipeline under it is an event named ``<pipeline> (<module>)`` with the stat
  ``module`` (``HLO passes through layout assignment (jit_loss)``); its children are its
  passes, by XLA's pass names (``algsimp``, ``call-inliner``, ``flatten-call-graph``,
  ``cse``, ``dce``, ``fusion``, ``copy-insertion``, ...), and ``RunInvariantCheckers``,
  the HLO verifier between passes. A pass that is a pipeline itself (``simplification``,
  run to a fixed point) holds one pipeline event per run, and those hold its passes.
* ``CpuCompiler::RunBackend`` is code generation: one small pipeline (``HLO passes after
  scheduling``), ``ThunkEmitter::EmitEntryComputation`` and ``ThunkEmitter::ConsumeKernels``
  (kernels emitted as LLVM IR; fusions go through MLIR on the codegen threads,
  ``FusionCompiler::Compile``, each MLIR pass an event there), ``SplitModule``, and
  ``Codegen`` > ``JitCompiler::Compile``: LLVM compiling the IR to machine code, its parts
  on the codegen threads (``TaskDispatcher::dispatch``).

So a pass's seconds are its event's, less the pipelines nested in it (theirs go to their
own passes), summed over its runs; the HLO passes' seconds are the outermost pipelines'
(RunBackend's one included); code generation's are RunBackend's, less that pipeline. The
rest of a compile (Python, PjRt, loading the executable) is what neither covers. Reading
a profile takes about a millisecond.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from typing import Any

#: The events of code generation (``RunBackend``) and, inside it, of LLVM's compile of the
#: IR to machine code, as XLA's CPU compiler names them.
BACKEND_SUFFIX, LLVM_COMPILE = "::RunBackend", "JitCompiler::Compile"
#: jaxlib's event around the whole backend compile (the calling thread), and XLA's own
#: compile inside it, which starts once the module is converted to HLO.
BACKEND_CALL, XLA_COMPILE = "backend_compile_and_load", "PjRtCpuClient::Compile"
#: The stat an HLO pass pipeline's event carries: the module it runs on.
MODULE_STAT = "module"


@dataclass
class Span:
    """One profile event with the events inside it (same thread), as a tree."""

    name: str
    start: int
    end: int
    module: str | None
    children: list[Span] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return (self.end - self.start) / 1e9

    @property
    def pipeline(self) -> bool:
        """Whether this is one run of an HLO pass pipeline."""
        return self.module is not None and self.name.endswith(f" ({self.module})")


@dataclass(frozen=True)
class CompileRead:
    """What the profile says of one compile (seconds; None: no such event was found).
    ``before_passes_s``: from the backend compile's start to XLA's (the module converted
    to HLO)."""

    before_passes_s: float | None
    hlo_passes_s: float | None
    codegen_s: float | None
    llvm_s: float | None
    #: pass name → (seconds, runs), summed over its runs.
    passes: dict[str, tuple[float, int]]


def read_compile(profile: Any) -> CompileRead:
    """The HLO passes and code generation of the compile ``profile`` holds (a
    ``jax.profiler.ProfileData``)."""
    roots = [s for line in _lines(profile) for s in _tree(line.events)]
    pipelines = list(_outermost(roots, lambda s: s.pipeline))
    passes: dict[str, tuple[float, int]] = {}
    for p in pipelines:
        _add_passes(p, passes)
    backends = list(_outermost(roots, lambda s: s.name.endswith(BACKEND_SUFFIX)))
    llvm = list(_outermost(roots, lambda s: s.name == LLVM_COMPILE))
    calls = list(_outermost(roots, lambda s: s.name == BACKEND_CALL))
    xla = list(_outermost(roots, lambda s: s.name == XLA_COMPILE))
    return CompileRead(
        before_passes_s=(min(s.start for s in xla) - min(s.start for s in calls)) / 1e9
        if calls and xla else None,
        hlo_passes_s=sum(p.seconds for p in pipelines) if pipelines else None,
        codegen_s=sum(_less_pipelines(b) for b in backends) if backends else None,
        llvm_s=sum(s.seconds for s in llvm) if llvm else None,
        passes=passes)


def _lines(profile: Any) -> Iterator[Any]:
    for plane in profile.planes:
        yield from plane.lines


def _tree(events: Iterable[Any]) -> list[Span]:
    """A line's events as trees, by time: an event inside another's interval is its child."""
    roots: list[Span] = []
    stack: list[Span] = []
    for e in sorted(events, key=lambda e: (e.start_ns, -e.duration_ns)):
        span = Span(e.name, e.start_ns, e.start_ns + e.duration_ns, _module(e))
        while stack and stack[-1].end < span.end:  # ended before this one ends: not a parent
            stack.pop()
        (stack[-1].children if stack else roots).append(span)
        stack.append(span)
    return roots


def _module(event: Any) -> str | None:
    """The ``module`` stat of a pipeline's event (None on any other event)."""
    if not event.name.endswith(")"):
        return None
    value = dict(event.stats).get(MODULE_STAT)
    return value if isinstance(value, str) else None


def _outermost(spans: Iterable[Span], wanted: Any) -> Iterator[Span]:
    """The spans ``wanted`` picks, not looking inside the ones it picked."""
    for s in spans:
        if wanted(s):
            yield s
        else:
            yield from _outermost(s.children, wanted)


def _less_pipelines(span: Span) -> float:
    """``span``'s seconds less those of the pipelines run inside it."""
    return span.seconds - sum(p.seconds for p in _outermost(span.children,
                                                            lambda s: s.pipeline))


def _add_passes(pipeline: Span, passes: dict[str, tuple[float, int]]) -> None:
    """Each pass of one pipeline run into ``passes``; the pipelines inside a pass count
    for their own passes."""
    for child in pipeline.children:
        if child.pipeline:
            _add_passes(child, passes)
            continue
        seconds, runs = passes.get(child.name, (0.0, 0))
        passes[child.name] = (seconds + _less_pipelines(child), runs + 1)
        for inner in _outermost(child.children, lambda s: s.pipeline):
            _add_passes(inner, passes)

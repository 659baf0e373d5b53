"""A variant as a row of the sampler: its cold first call and steady state, and the
``VariantResult`` made from its samples, with the helpers it nests checked against the
program it built (a helper is claimed nested only with a jit call in that program)."""

from __future__ import annotations

from dataclasses import asdict
from dataclasses import dataclass
from typing import Any

from ...model.notes import Note
from ...model.notes import Noted
from ...model.notes import Taken
from ...model.notes import mentions
from ...model.rows import FROM_STAGED
from ...model.rows import PHASES
from ...model.rows import VariantResult
from ..sampling.monitor import Monitor
from ..sampling.runner import ColdSample
from ..sampling.runner import Sampler
from ..sampling.stages import first_call_run
from ..sampling.stages import own_program
from ..sampling.stages import staged_run
from ..sampling.stages import warm_artefacts
from ..sampling.stops import Checkpoint
from ..sampling.structure import ProgramFacts
from ..sampling.structure import structure
from .claims import called_inside
from .claims import helper_jit_calls
from .claims import jit_calls_and_backward
from .plan import Helper
from .plan import Variant


@dataclass(frozen=True)
class Staged:
    """What a comparison already built for one variant, for the parts to reuse:
    ``jaxpr``, its (closed) jaxpr or the ``Traced`` holding it, from any trace (a cached
    helper's keeps the frames of the trace that built it); ``lowered``, its ``Lowered`` or
    ``lowered.as_text(debug_info=True)`` (None: lower here)."""

    jaxpr: Any
    lowered: Any = None


@dataclass(frozen=True)
class Prepared:
    """A variant ready to measure: its entry function and the call's arguments."""

    variant: Variant
    args: tuple
    kwargs: dict[str, Any]
    #: With ``--in-axes``: the call's own arguments, a batch; ``args`` is one example of it.
    batch: tuple | None = None


@dataclass
class VariantSubject:
    """A prepared variant as a sampler row: its cold first call, then steady calls; where
    JAX gave no stage events, every later repeat is a staged run."""

    prepared: Prepared
    warm_up: bool = False  # the cold run's own first call already took the slow path
    staged: bool = False

    @property
    def args(self) -> tuple:
        return self.prepared.args

    @property
    def kwargs(self) -> dict[str, Any]:
        return self.prepared.kwargs

    def cold(self, monitor: Monitor, check: Checkpoint) -> ColdSample:
        variant = self.prepared.variant
        run = (staged_run if self.staged else first_call_run)(
            own_program(variant.fn, variant.name), self.args, self.kwargs, monitor, check,
            variant.jit_options)
        self.staged = run.stages_from == FROM_STAGED
        return ColdSample(run.times, run.jitted, run.output, run.events, run,
                          run.stages_from)

    def describe(self, cold: ColdSample) -> ProgramFacts:
        """Structure counts, read untimed from what the cold run built."""
        run = cold.artefact
        if "first_call_s" in cold.times:  # a finished run: its caches are warm
            run = warm_artefacts(run, self.args, self.kwargs)
        return structure(run)


def variant_sampler(prepared: dict[str, Prepared]) -> Sampler:
    """The sampler over prepared variants (flat, nested, or advice's sets)."""
    return Sampler({n: VariantSubject(p) for n, p in prepared.items()}, PHASES)


def variant_results(runs: Sampler) -> dict[str, VariantResult]:
    """One ``VariantResult`` per variant the sampler measured (or saw fail)."""
    out = {}
    for name, s in runs.subjects.items():
        assert isinstance(s, VariantSubject)  # variant_sampler's rows
        shape = runs.shape.get(name) or ProgramFacts()
        variant = s.prepared.variant
        traced = bool(runs.samples[name].get("trace_s")) or name in runs.errors
        calls = verified_calls(variant, shape.jaxpr)
        out[name] = VariantResult(
            name=name,
            samples=runs.samples[name],
            # stopped before its trace finished: the helpers it was to nest, as found
            helpers=tuple(calls) if calls is not None else () if traced else variant.planned,
            helper_calls=calls or {},
            own_jit=tuple(n for n in variant.own_jit if n in (calls or {})),
            execute_loops=runs.loops.get(name, 0),
            jaxpr_text=shape.jaxpr_text,
            error=runs.describe_failure(name) if name in runs.errors else None,
            noted=(*_notes(variant, calls), *held_notes(variant, calls, shape.jaxpr),
                   *backward_note(variant, calls, shape.jaxpr))
            if traced else tuple(variant.notes),
            # refused up front, or planned but absent from the program
            inline=(*variant.inline, *(n for n in variant.planned if n not in (calls or {})))
            if traced else variant.inline,
            stages_from=shape.stages_from,
            jaxpr_eqns=shape.jaxpr_eqns,
            nested_calls=shape.nested_calls,
            stablehlo_bytes=shape.stablehlo_bytes,
            **asdict(shape.figures),
        )
    return out


def verified_calls(variant: Variant, jaxpr: Any) -> dict[str, int] | None:
    """The helpers the variant's ``jaxpr`` really nests (at least one jit call, matched
    by the code it runs), with their calls; None where no jaxpr was traced."""
    if jaxpr is None:
        return None
    calls = helper_jit_calls(jaxpr, variant.plan.helpers, variant.planned)
    return {n: calls[n] for n in variant.planned if calls[n]}


def backward_note(variant: Variant, calls: dict[str, int] | None,
                  jaxpr: Any) -> list[Taken]:
    """A note of the nested helpers' backward passes under ``grad`` (jits of their own,
    counted in nested calls but not in the helpers'), where the program holds some."""
    if jaxpr is None or not calls:
        return []
    backward = jit_calls_and_backward(jaxpr, variant.plan.helpers, tuple(calls))[1]
    held = [n for n in calls if backward[n]]
    return [Taken("backward_passes", tuple(held), tuple(backward[n] for n in held))] if held else []



def _notes(variant: Variant, calls: dict[str, int] | None) -> tuple[Noted, ...]:
    """The variant's notes, with a reason for every planned helper its program lacks."""
    notes: list[Noted] = list(variant.notes)
    for n in variant.planned:
        if n not in (calls or {}) and not any(mentions(note, n) for note in notes):
            notes.append(not_nested(n, variant.plan.helpers[n]))
    return tuple(notes)


def not_nested(name: str, helper: Helper) -> Taken:
    """Why the planned helper ``name``, of which the program holds no jit call, stays
    inline: the library primitive holding it, and whether a name of the user's does."""
    return Taken("not_nested", name, helper.held_by, bool(helper.bindings))


def held_notes(variant: Variant, calls: dict[str, int] | None, jaxpr: Any) -> list[Note]:
    """Notes of each nested helper that is a Pallas kernel body or that a library
    primitive holds (with the user's functions its jit ran)."""
    notes: list[Note] = [Taken("kernel_body", n) for n in (calls or {})
                         if variant.plan.helpers[n].kernel]
    for n in (calls or {}):
        held = variant.plan.helpers[n].held_by
        if held is not None:
            inside = called_inside(jaxpr, variant.plan.helpers, n)
            notes.append(Taken("held_by", n, held, tuple(inside)))
    return notes


def nothing_to_nest(variant: Variant) -> VariantResult:
    """The nested variant's result where it nests nothing: no samples, its reasons."""
    return VariantResult(name=variant.name, samples={p: [] for p in PHASES}, helpers=(),
                         noted=(*_notes(variant, {}), Taken("same_as_flat")), inline=variant.inline)

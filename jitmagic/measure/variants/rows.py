"""A variant as a row of the sampler, and its ``VariantResult`` (a helper nested only with a jit
call in its program)."""

from __future__ import annotations

import types
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from ...model.notes import Noted, Taken, mentions
from ...model.rows import FROM_STAGED, PHASES, VariantResult
from ..discovery.found import UserFunctions, defined_in
from ..sampling import stages
from ..sampling.monitor import Monitor
from ..sampling.runner import ColdSample, Sampler
from ..sampling.stops import Checkpoint
from ..sampling.structure import (
    JIT,
    ProgramFacts,
    distinct_jaxprs,
    structure,
    sub_jaxprs,
    traceback_codes,
)
from .plan import Helper, Variant


@dataclass(frozen=True)
class Staged:
    """What a comparison built for one variant (jaxpr, lowering), for the parts to reuse."""

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
    """A prepared variant as a sampler row: its cold first call, then steady calls."""

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
        run = (stages.staged_run if self.staged else stages.first_call_run)(
            stages.own_program(variant.fn, variant.name), self.args, self.kwargs, monitor, check,
            variant.jit_options)
        self.staged = run.stages_from == FROM_STAGED
        return ColdSample(run.times, run.jitted, run.output, run.events, run,
                          run.stages_from)

    def describe(self, cold: ColdSample) -> ProgramFacts:
        """Structure counts, read untimed from what the cold run built."""
        run = cold.artefact
        if "first_call_s" in cold.times:  # a finished run: its caches are warm
            run = stages.warm_artefacts(run, self.args, self.kwargs)
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
        calls = verified_calls(variant, shape.jaxpr)
        # the program's facts are those of a run that finished, or stopped after its trace:
        # one that raised (and no other) left none, and no claim is made from it
        traced = calls is not None
        found = calls or {}
        out[name] = VariantResult(
            name=name,
            samples=runs.samples[name],
            # stopped before its trace finished, or raised: the helpers it was to nest
            helpers=tuple(found) if traced else variant.planned,
            helper_calls=found,
            own_jit=tuple(n for n in variant.own_jit if n in found),
            execute_loops=runs.loops.get(name, 0),
            jaxpr_text=shape.jaxpr_text,
            error=runs.describe_failure(name) if name in runs.errors else None,
            noted=_notes(variant, found, shape.jaxpr) if traced else tuple(variant.notes),
            # refused up front, or planned but absent from the program
            inline=(*variant.inline, *(n for n in variant.planned if n not in found))
            if traced else variant.inline,
            stages_from=shape.stages_from,
            jaxpr_eqns=shape.jaxpr_eqns,
            nested_calls=shape.nested_calls,
            stablehlo_bytes=shape.stablehlo_bytes,
            **asdict(shape.figures),
        )
    return out


def verified_calls(variant: Variant, jaxpr: Any) -> dict[str, int] | None:
    """The helpers ``jaxpr`` really nests, with their jit calls (None: no jaxpr)."""
    if jaxpr is None:
        return None
    calls = helper_jit_calls(jaxpr, variant.plan.helpers, variant.planned)
    return {n: calls[n] for n in variant.planned if calls[n]}


def _notes(variant: Variant, calls: dict[str, int], jaxpr: Any) -> tuple[Noted, ...]:
    """The variant's notes, with one for each planned helper its program lacks or holds apart."""
    helpers = variant.plan.helpers
    notes: list[Noted] = list(variant.notes)
    for n in variant.planned:
        if n not in calls and not any(mentions(note, n) for note in notes):
            notes.append(not_nested(n, helpers[n]))
    notes += [Taken("kernel_body", n) for n in calls if helpers[n].kernel]
    notes += [Taken("held_by", n, h.held_by, called_inside(jaxpr, helpers, n))
              for n, h in ((n, helpers[n]) for n in calls) if h.held_by is not None]
    if jaxpr is not None and calls:
        backward = _read(jaxpr, helpers, tuple(calls)).backward
        held = [n for n in calls if backward[n]]
        if held:
            notes.append(Taken("backward_passes", tuple(held), tuple(backward[n] for n in held)))
    return tuple(notes)


def not_nested(name: str, helper: Helper) -> Taken:
    """Why a planned helper with no jit call in the program stays inline."""
    return Taken("not_nested", name, helper.held_by, bool(helper.bindings))


def nothing_to_nest(variant: Variant) -> VariantResult:
    """The nested variant's result where it nests nothing: no samples, its reasons."""
    return VariantResult(name=variant.name, samples={p: [] for p in PHASES}, helpers=(),
                         noted=(*_notes(variant, {}, None), Taken("same_as_flat")),
                         inline=variant.inline)


#: The name-stack scope of a jit call's backward pass under ``grad``: its other half.
BACKWARD = "transpose("


def helper_jit_calls(jaxpr: Any, helpers: dict[str, Helper],
                     counted: Iterable[str] | None = None) -> Counter:
    """Each helper's jit calls in ``jaxpr`` (sub-jaxprs too), by name (of ``counted``)."""
    return _read(jaxpr, helpers, counted).calls


def _read(jaxpr: Any, helpers: dict[str, Helper], counted: Iterable[str] | None) -> _Claims:
    reader = _Claims(helpers, set(helpers if counted is None else counted))
    reader.walk(getattr(jaxpr, "jaxpr", jaxpr), frozenset())
    return reader


def called_inside(jaxpr: Any, helpers: dict[str, Helper], name: str) -> tuple[str, ...]:
    """The user's functions (qualified names) the jit calls of helper ``name`` ran."""
    reader, code = _Claims(helpers, {name}), helpers[name].code
    found: dict[str, None] = {}
    for current in distinct_jaxprs(jaxpr):
        for eqn in current.eqns:
            if eqn.primitive.name != JIT or name not in reader._owners(eqn):
                continue
            body = eqn.params.get("jaxpr")
            for chain in sorted(reader._chains(getattr(body, "jaxpr", body)), key=len):
                below = chain[chain.index(code) + 1:] if code in chain else ()
                found.update((c.co_qualname, None) for c in below if c is not code)
    return tuple(found)


class _Claims:
    def __init__(self, helpers: dict[str, Helper], counted: set[str]):
        self.helpers, self.counted = helpers, counted
        self.by_code = {h.code: n for n, h in helpers.items()}
        #: The code defined inside a counted helper (``jax.checkpoint(lambda ...)`` in its
        #: body: under ``grad`` its jit's equations may show the lambda alone) → that helper.
        self.holders = {inner: n for n in counted for inner in defined_in(helpers[n].code)}
        self.is_user = UserFunctions()
        self.calls: Counter = Counter()
        self.backward: Counter = Counter()
        #: (id of the jit's jaxpr, its own traceback) → the helpers it is a call of.
        self.owners: dict[tuple[int, Any], frozenset[str]] = {}
        #: A jit equation's traceback → the code on it (where the jit was called from).
        self.frames: dict[Any, frozenset[types.CodeType]] = {}
        #: id of a jit's jaxpr → :meth:`_chains`.
        self.chains: dict[int, set[tuple[types.CodeType, ...]]] = {}

    def walk(self, jaxpr: Any, enclosing: frozenset[str], backward: bool = False) -> None:
        """Count the jit calls in ``jaxpr`` inside jits of the helpers ``enclosing``."""
        for eqn in jaxpr.eqns:
            inside, back = enclosing, backward
            if eqn.primitive.name == JIT:
                # a counted call's backward half, and its inner calls' halves inside it
                back = backward or BACKWARD in str(eqn.source_info.name_stack)
                owners = self._owners(eqn)
                own = self._own(eqn.source_info.traceback)
                counter = self.backward if back else self.calls
                for n in owners:
                    if n in self.counted and (n not in enclosing or self.helpers[n].code in own):
                        counter[n] += 1
                inside = enclosing | owners
            for sub in sub_jaxprs(eqn):
                self.walk(sub, inside, back)

    def _owners(self, eqn: Any) -> frozenset[str]:
        body = eqn.params.get("jaxpr")
        body = getattr(body, "jaxpr", body)
        key = (id(body), eqn.source_info.traceback)
        if key not in self.owners:
            owner = self._runs(body, self._own(eqn.source_info.traceback))
            if owner is not None and owner not in self.counted:  # code a counted helper holds
                owner = self.holders.get(self.helpers[owner].code, owner)
            name = str(eqn.params.get("name", ""))
            self.owners[key] = frozenset({owner} if owner is not None else
                                         {n for n, h in self.helpers.items()
                                          if name in h.jit_names})
        return self.owners[key]

    def _own(self, tb: Any) -> frozenset[types.CodeType]:
        """The code on a jit equation's own traceback: where it was called from."""
        if tb not in self.frames:
            self.frames[tb] = frozenset(traceback_codes(tb))
        return self.frames[tb]

    def _runs(self, body: Any, own: frozenset[types.CodeType]) -> str | None:
        """The helper the jit's ``body`` runs, where its equations agree on one (else None)."""
        found = {code for chain in self._chains(body)
                 if (code := next((c for c in chain if c not in own), None)) is not None}
        return self.by_code.get(found.pop()) if len(found) == 1 else None

    def _chains(self, body: Any) -> set[tuple[types.CodeType, ...]]:
        """The helper and user frames of each traceback in ``body``, outermost first."""
        if id(body) not in self.chains:
            self.chains[id(body)] = {
                tuple(c for c in reversed(traceback_codes(tb))
                      if c in self.by_code or self.is_user(c))
                for tb in {eqn.source_info.traceback for eqn in getattr(body, "eqns", ())}}
        return self.chains[id(body)]


"""Big captured constants, measured passed as arguments: the jaxpr replayed in both forms
(:mod:`~.lifting`), their cold first calls interleaved and their outputs compared."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np

from ....errors import UserCodeError
from ....model import parts
from ....model.causes import constant_arguments as model
from ....model.comparison import Comparison
from ....model.notes import Constants, Note
from ....model.rows import VARIANTS
from ....model.stats.witness import FIRST_CALL, WAIT, cpu_key
from ....options import Options
from ...lines.tables import user_code
from ...sampling import clocks, structure
from ...sampling.monitor import Monitor
from ...sampling.outputs import OutputDiff
from ...sampling.rounds import Rounds
from ...sampling.runner import ColdSample, Sampler
from ...sampling.stages import first_call_run
from ...sampling.stops import Checkpoint, Stop
from ...variants.rows import Prepared, Staged
from ..run import PartRun, in_one_process_only, part_rounds
from . import lifting

#: What progress calls this part.
PART = parts.named("constant_arguments").label


def wanted(result: Comparison) -> bool:
    """Whether ``result`` has a variant whose captured constants this part measures."""
    return not result.stopped_anywhere and bool(_big(result))


def _big(result: Comparison) -> list[str]:
    """The variants that captured array constants of ``BIG_BYTES`` or more."""
    return [n for n in VARIANTS if n in result.variants
            and (result.variants[n].constant_bytes or 0) >= model.BIG_BYTES]


@dataclass
class Forms:
    """One variant's two forms (function, arguments) ready to time, and its record so far."""

    variant: str
    calls: dict[str, tuple[Callable, tuple]] = field(default_factory=dict)
    record: model.ConstantVariant | None = None


def add_constant_arguments(result: Comparison, prepared: Mapping[str, Prepared],
                           built: Mapping[str, Staged], *,
                           check: Checkpoint | None = None,
                           options: Options | None = None) -> Comparison:
    """``result`` with its big constants measured passed as arguments, where any were big."""
    names = [n for n in _big(result) if n in built and n in prepared]
    if result.stopped_anywhere or not names:
        return result
    start = clocks.wall()
    check = check or Checkpoint()
    check.report.at(PART)
    notes: list[Note] = []
    forms, rounds = {}, part_rounds(result, options or Options())
    try:
        for name in names:
            check.begin(f"building the forms ({name})")
            forms[name] = build_forms(name, prepared[name], built[name].jaxpr, notes)
    except Stop as stop:  # before anything was timed: the forms built so far, untimed
        stopped: str | None = stop.reason
    else:
        stopped = time_forms(forms, check, rounds)
    variants = {n: f.record for n, f in forms.items() if f.record is not None}
    taken = max((len(v.samples.get(model.CAPTURED, {}).get(FIRST_CALL, ()))
                 for v in variants.values()), default=0)  # a captured form's most first calls
    record = model.ConstantArguments(result.entry, variants, tuple(dict.fromkeys(notes)), stopped,
                                     clocks.wall() - start, rounds=taken, rounds_ended=rounds.ended)
    return dataclasses.replace(result, constant_arguments=record)


def build_forms(name: str, prepared: Prepared, traced: Any, notes: list[Note]) -> Forms:
    """The variant's two forms from its traced program, lifted constants named, checked."""
    closed = traced
    while not hasattr(closed, "consts"):  # the closed jaxpr inside a ``Traced``
        closed = closed.jaxpr
    found = lifting.program_constants(closed)
    notes.extend(found.notes)
    lifted = found.lifted()
    constants = named_constants(prepared, found)
    before = structure.captured_constants(closed)
    forms = Forms(name)
    record = model.ConstantVariant(name, constants, {}, before,
                                   eqns={"traced": structure.count_equations(closed)},
                                   noted=tuple(found.not_lifted()))
    flat = lifting.flat_arguments(prepared.args, prepared.kwargs, prepared.variant.jit_options,
                                  closed)
    if not lifted or flat is None:
        reason = Constants("constants_unmatched" if flat is None else "no_constant_passed", name)
        forms.record = dataclasses.replace(record, noted=(*record.noted, reason))
        return forms
    replay = lifting.Replay(closed, [c.value for c in lifted])
    entry = getattr(prepared.variant.fn, "__name__", name)
    on_device = tuple(jax.device_put(c.value) for c in lifted)
    forms.calls = {model.CAPTURED: (replay.captured(entry), tuple(flat)),
                   model.PASSED: (replay.passed(entry), (on_device, *flat))}
    try:
        forms.record = checked_programs(forms, record)
    except Exception as exc:  # noqa: BLE001 (a replay JAX refuses: said, not raised)
        forms.calls = {}
        forms.record = dataclasses.replace(record, error=f"{type(exc).__name__}: {exc}")
    return forms


def named_constants(prepared: Prepared, found: lifting.ProgramConstants
                    ) -> tuple[model.LiftedConstant, ...]:
    """The lifted constants as the record keeps them, with their lines and Python name."""
    lifted = found.lifted()
    variant = prepared.variant
    user = user_code(variant.fn)
    lines = [lifting.lines_of(c, user) for c in lifted]
    codes = [code for code, mine in user.codes.items() if mine]
    helpers = [b.original for h in variant.plan.helpers.values() for b in h.bindings]
    arrays = lifting.reachable_arrays(variant.plan.fn, helpers, codes)
    out = []
    for c, where in zip(lifted, lines, strict=True):
        name, matched = lifting.name_of(c.value, arrays)
        out.append(model.LiftedConstant(c.nbytes, tuple(int(d) for d in np.shape(c.value)),
                                        str(c.value.dtype), where, name, matched))
    return tuple(out)


def checked_programs(forms: Forms, record: model.ConstantVariant) -> model.ConstantVariant:
    """``record`` with the two forms' equations and captured constants, from an untimed trace."""
    eqns, left, noted = dict(record.eqns), None, record.noted
    for form, (fn, args) in forms.calls.items():
        jaxpr = jax.jit(fn).trace(*args).jaxpr
        eqns[form] = structure.count_equations(jaxpr)
        left = structure.captured_constants(jaxpr) if form == model.PASSED else left
    count, nbytes = record.captured_constants
    expected = (count - len(record.constants), nbytes - sum(c.nbytes for c in record.constants))
    if left is not None and left != expected:
        noted += (Constants("constants_still_captured", record.variant, *left, expected[0]),)
    return dataclasses.replace(record, eqns=eqns, constants_left=left, noted=noted)


def time_forms(forms: dict[str, Forms], check: Checkpoint, rounds: Rounds) -> str | None:
    """Interleaved cold first calls of every variant's two forms; why they stopped (or None)."""
    rows = {f"{n} {form}": FormSubject(*f.calls[form]) for n, f in forms.items() if f.calls
            for form in model.FORMS}
    if not rows:
        return None
    runs = Sampler(dict(rows), (FIRST_CALL, cpu_key(FIRST_CALL), WAIT), noun="form",
                   steady=False)

    def samples(name: str) -> dict[str, dict[str, list[float]]]:
        return {form: runs.samples[f"{name} {form}"] for form in model.FORMS}

    def decided() -> bool:
        return all(dataclasses.replace(f.record, samples=samples(n)).difference.decided
                   for n, f in forms.items() if f.calls and f.record is not None
                   and not any(f"{n} {form}" in runs.errors for form in model.FORMS))

    rounds.decided = decided
    with suppress(UserCodeError):  # each form says why
        runs.measure_cold(rounds, None, check, what=PART)
    for name, f in forms.items():
        if f.record is not None and f.calls:
            outputs = OutputDiff(expected=len(model.FORMS))
            for form in model.FORMS:
                outputs.add(form, rows[f"{name} {form}"].output)
            f.record = dataclasses.replace(
                f.record, samples=samples(name), outputs_kind=outputs.kind,
                max_abs_diff=outputs.max_abs_diff if outputs.kind else None,
                error=_failed(name, runs) or f.record.error,
                noted=(*f.record.noted, *outputs.problems))
    return runs.stopped


@dataclass
class FormSubject:
    """One form as a sampler row: cold first calls only; its first output kept."""

    fn: Callable
    args: tuple
    kwargs: dict[str, Any] = field(default_factory=dict)
    warm_up: bool = False
    output: Any = None

    def cold(self, monitor: Monitor, check: Checkpoint) -> ColdSample:
        run = first_call_run(self.fn, self.args, {}, monitor, check, opts={})
        if self.output is None:
            self.output = run.output
        return ColdSample(run.times, run.jitted, None)

    def describe(self, cold: ColdSample) -> structure.ProgramFacts:
        return structure.ProgramFacts()  # the forms' programs were checked before they were timed


def _failed(name: str, runs: Sampler) -> str | None:
    """Why a variant's form failed (XLA refused it), said as the record says it."""
    for form in model.FORMS:
        exc = runs.errors.get(f"{name} {form}")
        if exc is not None:
            return f"the {form} form failed: {type(exc).__name__}: {exc}"
    return None


def add_part(result: Comparison, run: PartRun) -> Comparison:
    """The table of parts' entry: big captured constants passed as arguments."""
    if run.options.sweep is not None or not wanted(result):
        return result
    note = in_one_process_only(parts.named("constant_arguments"), run.check)
    if note:
        return dataclasses.replace(result, warned=(*result.warned, note))
    run.check.report.parts = parts.later_labels(run.options, found=("constant_arguments",))
    return add_constant_arguments(result, run.prepared, run.built, check=run.check,
                                  options=run.options)

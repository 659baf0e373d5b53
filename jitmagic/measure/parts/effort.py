"""XLA's effort (``--effort``): the flat program compiled cold at each lower effort setting the
backend can express (as ``compiler_options``), interleaved with the default (docs/effort.md)."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from ..._compat import effort_level
from ...backends import Backend, running
from ...backends.effort import LEVEL_OPTIONS, for_backend
from ...errors import UserCodeError
from ...model.causes import effort as model
from ...model.comparison import Comparison
from ...model.notes import Differs, Note, Parts, Taken, Warned
from ...model.rows import PHASES
from ...model.stats.rule import difference
from ...model.stats.witness import cpu_key, on
from ...options import Options
from ...options.values import AUTO
from ..sampling.monitor import COMPILE_EVENT, Monitor
from ..sampling.outputs import UNCOMPARED, OutputDiff
from ..sampling.rounds import Rounds
from ..sampling.runner import ColdSample, Sampler
from ..sampling.stages import Lowering, compiled_first_call, lower_once
from ..sampling.stops import Checkpoint, first_line
from ..sampling.structure import ProgramFacts
from ..variants.out_of_line import out_of_line_variant, probe, unavailable
from ..variants.rows import Prepared, VariantSubject
from .run import PartRun, part_rounds

#: The part's name: progress's, the stop reasons' and the record's key in the comparison.
PART = "effort"
#: Its fewest and most rounds (the rule decides nothing with fewer than three a side).
FEWEST_EFFORT_ROUNDS, MOST_EFFORT_ROUNDS = 3, 5
#: Untimed calls between a row's cold first call and its steady sample: a program just
#: compiled runs its first few calls slower (3.6, 3.3, 2.1, 2.1 ms, then 1.2–1.4 ms on the
#: benchmark), and a short steady sample read a call 1.3–2× slower without them.
WARM_CALLS = 3


def candidates(backend: Backend | None = None) -> list[model.Setting]:
    """The lower-effort settings that act on ``backend`` and that this JAX can express."""
    found = []
    for s in for_backend(backend or running()):
        if s.needs is not None and s.needs not in jax.config.values:
            continue
        options = {k: effort_level(v) if k in LEVEL_OPTIONS else v for k, v in s.options.items()}
        if None not in options.values():
            found.append(model.Setting(s.name, options, s.config, s.keyword, acts_on=s.acts_on))
    return found


def accepted(settings: Iterable[model.Setting], baseline: dict[str, Any],
             backend: Backend | None = None
             ) -> tuple[list[model.Setting], list[Note], dict[str, bool | None]]:
    """(the settings to measure, notes on those left out, whether each reaches the compile)."""
    label = (backend or running()).label
    lowered = jax.jit(lambda x: x + 1).lower(np.float32(0))
    default = executable_bytes(lowered.compile(compiler_options=baseline or None))
    keep, reached, notes = [], {}, list[Note]()
    for s in settings:
        if s.options and all(baseline.get(k, object()) == v for k, v in s.options.items()):
            notes.append(Parts("setting_already_on", s.name))
            continue
        try:
            compiled = lowered.compile(compiler_options={**baseline, **s.options} or None)
        except Exception as exc:  # XLA's refusal: an unknown option, one of another backend
            notes.append(Parts("setting_refused", s.name, label, first_line(exc)[:200]))
            continue
        keep.append(s)
        seen = executable_bytes(compiled)
        reached[s.name] = None if seen is None or default is None else seen != default
    return keep, notes, reached


def baseline_of(flat: Prepared) -> dict[str, Any]:
    """The user's own ``compiler_options``: the default row's, under every setting's."""
    return dict(flat.variant.jit_options.get("compiler_options") or {})


def at_setting(flat: Prepared, options: dict[str, Any]) -> Prepared:
    """The flat variant compiled with ``options`` as its jit's ``compiler_options``."""
    opts = {k: v for k, v in flat.variant.jit_options.items() if k != "compiler_options"}
    opts |= {"compiler_options": options} if options else {}
    return dataclasses.replace(flat, variant=dataclasses.replace(flat.variant, jit_options=opts))


def one_lowering(p: Prepared) -> Callable[[], Lowering | None]:
    """``p``'s one lowering, shared by its rows, made untimed in the first row's cold run."""
    v = p.variant
    return functools.cache(lambda: lower_once(v.fn, p.args, p.kwargs, v.jit_options))


@dataclass
class SettingSubject(VariantSubject):
    """A setting as a sampler row: the one lowering compiled cold at it, then steady calls."""

    #: Whether XLA's compile also counts the programs compiled while the call ran (the
    #: out-of-line helpers', compiled on their first call inside the caller's).
    inner_compiles: bool = False
    lowering: Callable[[], Lowering | None] = lambda: None

    @property
    def args(self) -> tuple:
        return (self.lowering() or self.prepared).args

    @property
    def kwargs(self) -> dict[str, Any]:
        return (self.lowering() or self.prepared).kwargs

    def cold(self, monitor: Monitor, check: Checkpoint) -> ColdSample:
        first = len(monitor.durations)
        variant = self.prepared.variant
        made = self.lowering()
        if made is None:
            got = super().cold(monitor, check)
        else:
            run = compiled_first_call(made, variant.fn.__name__,
                                      variant.jit_options.get("compiler_options") or {},
                                      monitor, check)
            got = ColdSample(run.times, run.jitted, run.output, artefact=run,
                             stages_from=run.stages_from)
        if self.inner_compiles:
            add_inner_compiles(got.times, monitor, first, variant.fn.__name__)
        for _ in range(WARM_CALLS):  # untimed: the cold interval ended at its result
            jax.block_until_ready(got.call(*self.args, **self.kwargs))
        return got

    def describe(self, cold: ColdSample) -> ProgramFacts:
        return ProgramFacts()  # the comparison read the flat program's structure


def add_inner_compiles(times: dict[str, float], monitor: Monitor, first: int,
                       name: str) -> None:
    """Add to ``times``' XLA compile the compiles of programs other than ``jit(name)``."""
    if model.COMPILE not in times:
        return
    stamps = monitor.stamps
    for i in range(max(first, 1), len(monitor.durations)):
        _, event, secs, fun = monitor.durations[i]
        if event != COMPILE_EVENT or fun == f"jit({name})":
            continue
        times[model.COMPILE] += secs
        if cpu_key(model.COMPILE) in times:
            times[cpu_key(model.COMPILE)] += max(0.0, stamps[i][3] - stamps[i - 1][3])


@dataclass(frozen=True)
class OutOfLineRow:
    """The out-of-line row: its program, setting, and helpers kept out of line or refused."""

    prepared: Prepared
    setting: model.Setting
    kept: dict[str, int]
    refused: dict[str, Note]


def out_of_line_row(nested: Prepared, helpers: tuple[str, ...]
                    ) -> tuple[OutOfLineRow | None, Note | None]:
    """(the out-of-line row, None), or (None, why it is not measured)."""
    if not helpers:
        return None, Parts("out_of_line_no_helper")
    missing = unavailable()
    if missing:
        return None, missing
    prepared, record = out_of_line_variant(nested, helpers)
    try:
        calls, refused = probe(prepared, record)
    except Exception as exc:  # the user's code under noinline: said, the settings stand
        return None, Parts("out_of_line_raised", type(exc).__name__, str(exc)[:200])
    kept = {n: c for n, c in record.kept.items() if n not in refused}
    if not calls or not kept:
        return None, Parts("out_of_line_none_kept",
                           tuple(Taken("stays_inline", n, w) for n, w in refused.items()))
    line = "; ".join(f"{n} = equinox.internal.noinline({n})" for n in kept)
    return OutOfLineRow(prepared, model.Setting(model.OUT_OF_LINE, {}, line, keyword=False),
                        kept, refused), None


def measure_effort(flat: Prepared, rounds: int | Rounds = FEWEST_EFFORT_ROUNDS,
                   check: Checkpoint | None = None,
                   settings: Iterable[model.Setting] | None = None,
                   out_of_line: OutOfLineRow | None = None) -> model.Effort:
    """The default, each accepted setting and the out-of-line row, measured interleaved."""
    check = check or Checkpoint()
    baseline, backend = baseline_of(flat), running()
    chosen, left_out, reached = accepted(
        candidates(backend) if settings is None else settings, baseline, backend)
    rows = {model.DEFAULT: at_setting(flat, baseline),
            **{s.name: at_setting(flat, {**baseline, **s.options}) for s in chosen}}
    if out_of_line is not None:
        rows[model.OUT_OF_LINE] = at_setting(out_of_line.prepared, baseline)
    shared = one_lowering(flat)  # the settings change the compile, never the program
    lowerings = {n: one_lowering(p) if n == model.OUT_OF_LINE else shared for n, p in rows.items()}
    runs = Sampler({n: SettingSubject(p, inner_compiles=n == model.OUT_OF_LINE,
                                      lowering=lowerings[n])
                    for n, p in rows.items()}, PHASES, noun="setting")
    with suppress(UserCodeError):  # every row failed: each says why
        runs.measure_cold(taken := settling(runs, rounds), None, check, what=PART)
    return dataclasses.replace(
        _record(flat, runs, chosen, (baseline, reached), left_out, out_of_line),
        backend=backend.platform, rounds=len(runs.samples[model.DEFAULT].get(model.COMPILE, ())),
        rounds_ended=taken.ended if isinstance(taken, Rounds) else None)


def settling(runs: Sampler, rounds: int | Rounds) -> int | Rounds:
    """``rounds`` taking one more only while some row is undecided against the default."""
    if isinstance(rounds, int):
        if rounds < FEWEST_EFFORT_ROUNDS:
            return rounds
        rounds = Rounds(AUTO, budget_s=math.inf, cap=rounds)

    def decided() -> bool:
        default = runs.samples[model.DEFAULT]
        clock = model.record_clock([default, *(s for n, s in runs.samples.items()
                                               if n != model.DEFAULT)])
        for name, samples in runs.samples.items():
            if name != model.DEFAULT and all(difference(on(default, k, clock),
                                                  on(samples, k, clock)).decided
                                       for k in (model.COMPILE, model.EXECUTE)):
                runs.settled.add(name)
        return all(n in runs.settled or n in runs.errors
                   for n in runs.subjects if n != model.DEFAULT)

    return dataclasses.replace(rounds, decided=decided)


def _record(flat: Prepared, runs: Sampler, chosen: list[model.Setting],
            probed: tuple[dict[str, Any], dict[str, bool | None]], left_out: list[Note],
            out_of_line: OutOfLineRow | None = None) -> model.Effort:
    """The record of what ``runs`` measured."""
    baseline, reached = probed
    rows = {}
    if out_of_line is not None:
        chosen = [*chosen, out_of_line.setting]
        reached = {**reached, model.OUT_OF_LINE: True}  # its trace held the out-of-line calls
    for s in chosen:
        kind, diff, detail = _compared(runs.outputs, s.name)
        rows[s.name] = model.EffortRow(
            s, _kept(runs.samples[s.name]), reached=reached.get(s.name),
            outputs=kind, max_abs_diff=diff, outputs_found=detail,
            error=runs.describe_failure(s.name) if s.name in runs.errors else None)
    if out_of_line is not None:
        rows[model.OUT_OF_LINE] = dataclasses.replace(
            rows[model.OUT_OF_LINE], kept=out_of_line.kept, refused=dict(out_of_line.refused))
    error = runs.describe_failure(model.DEFAULT) if model.DEFAULT in runs.errors else None
    return model.Effort(flat.variant.plan.name, _kept(runs.samples[model.DEFAULT]), rows, baseline,
                        tuple(left_out), runs.stopped, default_error=error)


def _compared(outputs: OutputDiff, name: str) -> tuple[str | None, float | None, Note | None]:
    """(kind, largest difference, the first differing leaf) of ``name``'s first output against
    the default's (Nones: not compared); what comparing raised said, not raised."""
    found = outputs.each.get(name) if outputs.reference == model.DEFAULT else None
    if isinstance(found, Exception):
        return UNCOMPARED, None, Differs("compare_raised", type(found).__name__, str(found)[:200])
    return (None, None, None) if found is None else (found.kind, found.max_abs_diff,
                                                       found.describe())


def _kept(samples: dict[str, list[float]]) -> dict[str, tuple[float, ...]]:
    """The samples the record keeps (:data:`~jitmagic.model.causes.effort.KEYS`), if any."""
    return {k: tuple(samples[k]) for k in model.KEYS if samples.get(k)}


def executable_bytes(compiled: Any) -> bytes | None:
    """The compiled program as XLA serializes it (None where this backend cannot)."""
    try:
        return bytes(compiled.runtime_executable().serialize())
    except Exception:  # a backend without serialization: not checked, said so
        return None


def add_effort(result: Comparison, flat: Prepared, options: Options,
               check: Checkpoint | None = None, nested: Prepared | None = None) -> Comparison:
    """``result`` with its effort record, measured on ``flat`` and the out-of-line row."""
    if result.stopped:
        return result
    if not result.flat.ok:
        return dataclasses.replace(result, warned=(*result.warned, Warned("effort_flat_failed")))
    row, why = (None, Parts("out_of_line_no_nested")) \
        if nested is None else out_of_line_row(nested, result.nested.helpers)
    effort = measure_effort(flat, part_rounds(result, options), check, out_of_line=row)
    if why:
        effort = dataclasses.replace(effort, omitted=(*effort.omitted, why))
    return result.with_part(PART, effort)


def add_part(result: Comparison, run: PartRun) -> Comparison:
    """The table of parts' entry: XLA's effort, and the nested helpers kept out of line."""
    return add_effort(result, run.flat, run.options, run.check, run.prepared.get("nested"))

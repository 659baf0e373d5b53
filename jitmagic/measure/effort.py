"""XLA's effort (``--effort``): the flat program compiled at lower effort settings, measured.

"My compile is slow: would asking XLA to optimize less help, and what does each call
then cost?" Each setting this JAX and backend accept (:func:`accepted`: probed once on
a tiny program; one the backend refuses is left out with a note naming it) becomes a
row of the one interleaved :class:`~.sampling.runner.Sampler`, beside the default (the
program as the user compiles it, their own ``compiler_options`` included): cold first
calls from cleared caches with XLA's compile inside them (JAX's event), steady-state
calls, on both clocks, rows in turn. Every setting is passed as ``compiler_options`` of
the row's own ``jax.jit``, so neither JAX's config nor ``XLA_FLAGS`` is ever changed
(the persistent cache is switched off and back as for every comparison). Untimed: the
probe tells whether each setting reached the compile (the program it compiles differs
from the default's compile of the same lowered program: compiles of two lowerings differ
by their instruction ids, so only one lowering compiled both ways is compared), and
each setting's first output is compared with the default's within the output
tolerance. No IPython, no matplotlib here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from .._compat import effort_level
from ..errors import UserCodeError
from ..model.causes.effort import DEFAULT
from ..model.causes.effort import KEYS
from ..model.causes.effort import Effort
from ..model.causes.effort import EffortRow
from ..model.causes.effort import Setting
from ..model.comparison import PHASES
from ..model.comparison import Comparison
from .parts import PartRun
from .sampling.conditions import frozen_heap
from .sampling.conditions import persistent_cache_off
from .sampling.monitor import Monitor
from .sampling.outputs import UNCOMPARED
from .sampling.outputs import compare_outputs
from .sampling.runner import Cold
from .sampling.runner import Sampler
from .sampling.stops import Checkpoint
from .variants.rows import Prepared
from .variants.rows import VariantSubject

#: What progress and the stop reasons call this part.
PART = "effort"
#: The rounds it takes: as many as the comparison's cold runs, within these bounds (the
#: rule decides nothing with fewer than three a side; each round is one cold compile
#: per setting).
FEWEST_ROUNDS, MOST_ROUNDS = 3, 5


def candidates() -> list[Setting]:
    """The lower-effort settings to try: XLA's backend (LLVM) optimization level 0 and 1,
    and JAX's execution-time effort and optimization level where this JAX has them."""
    out = [Setting(f"xla_backend_optimization_level={n}",
                   {"xla_backend_optimization_level": n},
                   f'XLA_FLAGS="--xla_backend_optimization_level={n}"') for n in (0, 1)]
    if "jax_exec_time_optimization_effort" in jax.config.values:
        out.append(Setting("exec_time_optimization_effort=-1",
                           {"exec_time_optimization_effort": -1.0},
                           'jax.config.update("jax_exec_time_optimization_effort", -1.0)'))
    o0 = effort_level("O0")
    if "jax_optimization_level" in jax.config.values and o0 is not None:
        out.append(Setting("jax_optimization_level=O0", {"optimization_level": o0},
                           'jax.config.update("jax_optimization_level", "O0")',
                           keyword=False))
    return out


def accepted(settings: Iterable[Setting], baseline: dict[str, Any]
             ) -> tuple[list[Setting], list[str], dict[str, bool | None]]:
    """(the settings to measure, a note for each left out, whether each reaches the
    compile): each probed once, untimed, by compiling one tiny program with it; one this
    backend refuses is left out, and so is one the user's own ``compiler_options``
    (``baseline``) already hold. A setting reaches the compile where the program it
    compiles differs from the default's compile of the same lowered program."""
    lowered = jax.jit(lambda x: x + 1).lower(np.float32(0))
    default = executable_bytes(lowered.compile(compiler_options=baseline or None))
    keep, notes, reached = [], [], {}
    for s in settings:
        if s.options and all(baseline.get(k, object()) == v for k, v in s.options.items()):
            notes.append(f"`{s.name}` left out: your jit already compiles with it")
            continue
        try:
            compiled = lowered.compile(compiler_options={**baseline, **s.options} or None)
        except Exception as exc:  # XLA's refusal: an unknown option, one of another backend
            why = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            notes.append(f"`{s.name}` left out: this backend ({jax.default_backend()}) "
                         f"refused it ({why})")
            continue
        keep.append(s)
        seen = executable_bytes(compiled)
        reached[s.name] = None if seen is None or default is None else seen != default
    return keep, notes, reached


def baseline_of(flat: Prepared) -> dict[str, Any]:
    """The user's own ``compiler_options`` (their ``jax.jit`` passes them): the default
    row compiles with them, and every setting is added on top."""
    return dict(flat.variant.jit_options.get("compiler_options") or {})


def at_setting(flat: Prepared, options: dict[str, Any]) -> Prepared:
    """The flat variant compiled with ``options`` as its jit's ``compiler_options``."""
    opts = {**flat.variant.jit_options, "compiler_options": options}
    opts = {k: v for k, v in opts.items() if k != "compiler_options" or v}
    return dataclasses.replace(flat, variant=dataclasses.replace(flat.variant, jit_options=opts))


class RowOutputs:
    """Each setting's first output compared with the default's as soon as it exists
    (:func:`~.sampling.outputs.compare_outputs`, the project's tolerance), then dropped:
    the default's is held only until every row has been compared."""

    def __init__(self, rows: int) -> None:
        self.rows, self.found = rows, dict[str, Any]()
        self._reference: Any = None
        self._seen: set[str] = set()

    def add(self, name: str, output: Any) -> None:
        if name in self._seen:
            return
        self._seen.add(name)
        if name == DEFAULT:
            self._reference = output
        elif DEFAULT in self._seen:
            try:
                d = compare_outputs(self._reference, output)
                self.found[name] = (d.kind, d.max_abs_diff, d.describe())
            except Exception as exc:  # a leaf numpy cannot read: said, not raised
                self.found[name] = (UNCOMPARED, None, f"{type(exc).__name__}: {exc}"[:200])
        if len(self._seen) >= self.rows:
            self._reference = None


@dataclass
class SettingSubject(VariantSubject):
    """A setting as a sampler row: the variant's cold run and steady state, its first
    output handed to :class:`RowOutputs`."""

    name: str = DEFAULT
    outputs: RowOutputs | None = None

    def cold(self, monitor: Monitor, check: Checkpoint) -> Cold:
        got = super().cold(monitor, check)
        if self.outputs is not None:
            self.outputs.add(self.name, got.output)
        return got


def rounds_for(result: Comparison) -> int:
    """As many rounds as the comparison's cold runs, from
    :data:`FEWEST_ROUNDS` to :data:`MOST_ROUNDS`."""
    runs = max((len(v.samples.get("first_call_s", [])) for v in result.variants.values()),
               default=0)
    return min(MOST_ROUNDS, max(FEWEST_ROUNDS, runs))


def measure_effort(flat: Prepared, rounds: int = FEWEST_ROUNDS,
                   check: Checkpoint | None = None,
                   settings: Iterable[Setting] | None = None) -> Effort:
    """The default and each accepted setting (``settings``: :func:`candidates`), in
    ``rounds`` interleaved rounds under ``check``; a stop (Ctrl-C, ``--timeout``) keeps
    the rounds that finished and says why. The user's code failing is said per row."""
    check = check or Checkpoint()
    baseline = baseline_of(flat)
    chosen, left_out, reached = accepted(candidates() if settings is None else settings,
                                         baseline)
    rows = {DEFAULT: {}, **{s.name: {**baseline, **s.options} for s in chosen}}
    outputs = RowOutputs(len(rows))
    runs = Sampler({n: SettingSubject(at_setting(flat, o or baseline), name=n, outputs=outputs)
                    for n, o in rows.items()}, PHASES, noun="setting")
    with (persistent_cache_off(), Monitor().listening() as monitor, frozen_heap(),
          check.catching_interrupts(), suppress(UserCodeError)):  # every row failed:
        runs.measure(rounds, None, monitor, check, what=PART)  # each row says why
    return _record(flat, runs, chosen, (baseline, reached), left_out, outputs)


def _record(flat: Prepared, runs: Sampler, chosen: list[Setting],
            probed: tuple[dict[str, Any], dict[str, bool | None]], left_out: list[str],
            outputs: RowOutputs) -> Effort:
    """The :class:`Effort` record of what ``runs`` measured (``probed``: the baseline
    options, and whether each setting reached the compile)."""
    baseline, reached = probed
    rows = {}
    for s in chosen:
        kind, diff, detail = outputs.found.get(s.name, (None, None, None))
        rows[s.name] = EffortRow(
            s, _kept(runs.samples[s.name]), reached=reached.get(s.name),
            outputs=kind, max_abs_diff=diff, outputs_detail=detail,
            error=runs.describe_failure(s.name) if s.name in runs.errors else None)
    error = runs.describe_failure(DEFAULT) if DEFAULT in runs.errors else None
    return Effort(flat.variant.plan.name, _kept(runs.samples[DEFAULT]), rows, baseline,
                  tuple(left_out), runs.stopped, default_error=error)


def _kept(samples: dict[str, list[float]]) -> dict[str, tuple[float, ...]]:
    """The samples the record keeps (:data:`KEYS`), where any were taken."""
    return {k: tuple(samples[k]) for k in KEYS if samples.get(k)}


def executable_bytes(compiled: Any) -> bytes | None:
    """The compiled program as XLA serializes it (its code and the options it was
    compiled with), to tell whether a setting reached the compile; None where this
    backend cannot serialize it."""
    try:
        return bytes(compiled.runtime_executable().serialize())
    except Exception:  # a backend without serialization: not checked, said so
        return None


#: The record's key in the comparison and in the saved JSON (the table of parts' name).
NAME = "effort"


def add_effort(result: Comparison, flat: Prepared, check: Checkpoint | None = None
               ) -> Comparison:
    """``result`` with its effort record (``result.part("effort")``), measured on the
    prepared flat variant under ``check`` in as many rounds as the comparison's cold
    runs (:func:`rounds_for`); as it was where the comparison stopped, and with a
    warning where the flat variant failed there (its settings would fail alike)."""
    if result.stopped:
        return result
    if not result.flat.ok:
        return dataclasses.replace(result, warnings=(
            *result.warnings, "XLA's effort was not measured: the flat variant failed"))
    return result.with_part(NAME, measure_effort(flat, rounds_for(result), check))


def add_part(result: Comparison, run: PartRun) -> Comparison:
    """The table of parts' entry (:data:`jitmagic.model.parts.PARTS`): XLA's effort."""
    return add_effort(result, run.flat, run.check)

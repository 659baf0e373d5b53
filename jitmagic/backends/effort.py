"""The lower-effort settings ``--effort`` tries on each backend, each with what it acts on.

A setting that does not act on the running backend's compile only costs a cold compile
per round and reads as a finding: on a TPU v5e, LLVM's level and the latency-hiding
scheduler left the compiled program as it was. So each backend has its own set, and
``--effort`` tries that one (:func:`for_backend`). Where each set comes from:

* CPU: measured here (``benchmarks/effort.py``): LLVM's level acts on code generation.
* GPU: from XLA's sources, not run (no GPU has been lent).
* TPU: measured on a TPU v5e (``benchmarks/tpu_effort.py``, figures in docs/effort.md):
  of eight candidates only JAX's effort level O0 changed the compiled program.

A setting is data: its name, the ``compiler_options`` it adds, the line a user writes, and
what it acts on. An option whose value is one of JAX's effort levels is written by the
level's name (``"O0"``); the measurement turns it into the number XLA takes
(:data:`LEVEL_OPTIONS`). Nothing here imports JAX.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import CPU, GPU, TPU, Backend

#: The ``compiler_options`` whose value is one of JAX's effort levels (``jax_optimization_level``'s
#: and ``jax_memory_fitting_level``'s ``"O0"``–``"O3"``), which XLA takes as a number.
LEVEL_OPTIONS = ("optimization_level", "memory_fitting_level")


@dataclass(frozen=True, slots=True)
class EffortSetting:
    """One lower-effort setting of one backend: the ``compiler_options`` it adds, the
    process-wide line (``config``), whether ``jax.jit(f, compiler_options=...)`` is the
    line to write instead (``keyword``), and the ``jax.config`` flag it ``needs``."""

    name: str
    options: Mapping[str, Any]
    config: str
    acts_on: str
    keyword: bool = True
    needs: str | None = None


def _llvm_level(n: int, acts_on: str) -> EffortSetting:
    return EffortSetting(f"xla_backend_optimization_level={n}",
                         {"xla_backend_optimization_level": n},
                         f'XLA_FLAGS="--xla_backend_optimization_level={n}"', acts_on)


#: JAX's effort level O0 ("fastest compilation, slowest runtime"): as a compiler option
#: XLA wants the level's number, so the config line is the one to write.
OPTIMIZATION_O0 = EffortSetting(
    "jax_optimization_level=O0", {"optimization_level": "O0"},
    'jax.config.update("jax_optimization_level", "O0")',
    "XLA's effort level (which optimization passes run)", keyword=False,
    needs="jax_optimization_level")
EXEC_TIME = EffortSetting(
    "exec_time_optimization_effort=-1", {"exec_time_optimization_effort": -1.0},
    'jax.config.update("jax_exec_time_optimization_effort", -1.0)',
    "how hard XLA optimizes for run time", needs="jax_exec_time_optimization_effort")


def _xla_flag(name: str, value: Any, acts_on: str) -> EffortSetting:
    shown = str(value).lower() if isinstance(value, bool) else value
    return EffortSetting(f"{name}={shown}", {name: value}, f'XLA_FLAGS="--{name}={shown}"',
                         acts_on)


#: Each backend's settings, in the order tried (the sampler's rows).
SETTINGS: dict[str, tuple[EffortSetting, ...]] = {
    CPU.platform: (
        _llvm_level(0, "LLVM's optimization of the generated code"),
        _llvm_level(1, "LLVM's optimization of the generated code"),
        EXEC_TIME, OPTIMIZATION_O0),
    GPU.platform: (
        _llvm_level(0, "LLVM's optimization of the generated code (PTX)"),
        OPTIMIZATION_O0,
        _xla_flag("xla_gpu_autotune_level", 0, "autotuning of matrix-product and "
                  "convolution algorithms"),
        _xla_flag("xla_gpu_experimental_enable_fusion_autotuner", False,
                  "autotuning of fusions")),
    # Measured on a TPU v5e (see the module's docstring; rerun benchmarks/tpu_effort.py
    # to revisit). Left out, having changed neither program's optimized HLO nor its
    # compile time: xla_backend_optimization_level=0, memory_fitting_level=O0 (0.99×, the
    # rule: no measurable difference), memory_fitting_effort=-1 and
    # xla_tpu_enable_latency_hiding_scheduler=false; optimization_level=O1 (1.02×,
    # inconclusive, a call 0.74× as fast: O0 saves more); exec_time_optimization_effort=-1
    # (the same program as O0's).
    TPU.platform: (OPTIMIZATION_O0,),
}


def for_backend(backend: Backend) -> tuple[EffortSetting, ...]:
    """The settings ``--effort`` tries on ``backend``, in order; none where jitmagic knows
    no setting that acts on it (a backend it does not know)."""
    return SETTINGS.get(backend.platform, ())

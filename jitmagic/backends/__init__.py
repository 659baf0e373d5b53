"""What jitmagic knows of each XLA backend (CPU, GPU, TPU): the one place that names one.

Everything that differs by backend reads it from here (profile events, effort settings,
clocks, compiler memory), by JAX's platform name; nothing here imports JAX, so records
and renderers can read it too.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Backend:
    """One XLA backend's facts, by JAX's platform name."""

    #: JAX's platform name: ``"cpu"``, ``"gpu"`` or ``"tpu"``.
    platform: str
    #: How the user reads it: "CPU", "GPU", "TPU".
    label: str
    #: Whether the process's CPU time also measures execution: on an accelerator it
    #: measures the host (trace, lower, XLA's compile), never the device's run.
    host_clock_times_execution: bool
    #: Whether its compiler may keep work between compiles of one program in a process
    #: (a TPU's does, a GPU's autotuning results do; a CPU's first compile in a process
    #: is only slower from one-time set-up): only there is a run checked for warmth.
    keeps_work: bool = True
    #: ``-r auto``'s default budget (``--budget``), seconds: on an accelerator one cold
    #: compile takes seconds and varies by a fifth from one to the next (a TPU v5e's
    #: flat seed 3.7–5.0 s), so deciding a 1.5× difference takes about 8 pairs.
    budget_s: float = 30.0


#: The seconds ``-r auto`` may measure on an accelerator by default.
ACCELERATOR_BUDGET_S = 75.0
#: ... and where each cold sample is a fresh process (about 23 s each on a TPU v5e, the
#: chip's opening and closing included): the 9 pairs that deciding "no measurable
#: difference" between first calls 5% apart takes.
FRESH_BUDGET_S = 420.0
CPU = Backend("cpu", "CPU", host_clock_times_execution=True, keeps_work=False)
GPU = Backend("gpu", "GPU", host_clock_times_execution=False, budget_s=ACCELERATOR_BUDGET_S)
TPU = Backend("tpu", "TPU", host_clock_times_execution=False, budget_s=ACCELERATOR_BUDGET_S)
#: Every backend jitmagic knows, by platform name.
KNOWN = {b.platform: b for b in (CPU, GPU, TPU)}
#: JAX's other names for a GPU platform (``jax.default_backend()`` says "gpu").
ALIASES = {"cuda": "gpu", "rocm": "gpu"}


def named(platform: str) -> Backend:
    """The backend of JAX's platform name ``platform`` (an unknown one reads as its own
    name, with an accelerator's clock rule: only the host is timed by CPU time)."""
    name = ALIASES.get(platform.lower(), platform.lower())
    return KNOWN.get(name) or Backend(name, name.upper(), host_clock_times_execution=False,
                                      budget_s=ACCELERATOR_BUDGET_S)


def running() -> Backend:
    """The backend JAX runs on now (its default backend; imports JAX when called)."""
    import jax

    return named(jax.default_backend())

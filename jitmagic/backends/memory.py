"""Whether a backend's compiler remembers work between compiles in one process, decided by
measurement, not by name.

On a TPU v5e a fresh program's compile gets cheaper after a process's first (the
24-block MLP: 3.19-3.32 s first, then 2.15-2.89 s, whatever the program, and no flag
stops it), so a cold sample there needs a fresh process. :func:`probe` (run in a child
that owns the device) compiles one program, each time with a new constant after
``jax.clear_caches()``, after a tiny warm-up jit that pays the process's one-time set-up;
:func:`remembers` reads two probes: the backend remembers where every later compile
fell below :data:`SHARE` of both processes' first, on wall and CPU time. The answer is
kept per :func:`key` (the JAX, jaxlib and libtpu releases, ``JAX_PLATFORMS``) in the
user's cache folder, so it is paid once. :data:`STANDIN_ENV` (``1`` or ``0``) answers
instead of a probe: tests on a CPU stand in for a TPU with it.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Sequence
from typing import Any

#: ``1``: the backend remembers, ``0``: it does not (no probe is run, nothing cached).
STANDIN_ENV = "JITMAGIC_BACKEND_REMEMBERS"
#: Compiles per probe (the first, then the later ones it is judged against).
COMPILES = 5
#: A later compile under this share of the first did less work: the TPU's later MLP
#: compiles read 0.65-0.88 of the first; a CPU's read 0.7-1.3 of it from noise alone, so
#: the median of the later ones is judged, against the faster of two processes' first.
SHARE = 0.85
#: The distributions whose releases decide the compiler.
RELEASES = ("jax", "jaxlib", "libtpu")


def standin() -> bool | None:
    """What :data:`STANDIN_ENV` says (None where it is not set)."""
    said = os.environ.get(STANDIN_ENV, "").strip()
    return None if not said else said not in ("0", "no", "false")


def only_cpu() -> bool:
    """Whether JAX here can only run on the CPU (``JAX_PLATFORMS=cpu``, or no
    accelerator's plugin installed: no libtpu, no ``jax-*-plugin``): nothing to probe."""
    from importlib.metadata import distributions

    if os.environ.get("JAX_PLATFORMS", "").strip().lower() == "cpu":
        return True
    names = {str(d.metadata["Name"] or "").lower().replace("_", "-") for d in distributions()}
    return not any(n.startswith("libtpu") or (n.startswith("jax-") and n.endswith("-plugin"))
                   for n in names)


def key() -> str:
    """What the answer is kept under: the releases of :data:`RELEASES` and
    ``JAX_PLATFORMS``, read without importing JAX (the device kind is in the answer)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version

    found = []
    for name in RELEASES:
        try:
            found.append(f"{name}-{version(name)}")
        except PackageNotFoundError:
            found.append(f"{name}-none")
    platforms = os.environ.get("JAX_PLATFORMS", "").replace(",", "+") or "default"
    return "_".join([*found, platforms])


def probe(inputs: Any = None) -> dict[str, Any]:
    """In a child: the compiles of one 24-block MLP, each with a new constant after
    ``jax.clear_caches()`` and a fresh lowering, on wall and CPU time, after a tiny
    warm-up jit; and the platform and device kind they ran on."""
    import jax
    import jax.numpy as jnp

    x, w = jnp.ones((64, 256)), jnp.ones((256, 256))
    jax.block_until_ready(jax.jit(lambda a: a + 1)(x))
    wall, cpu = [], []
    for i in range(COMPILES):
        jax.clear_caches()
        lowered = jax.jit(_mlp(float(i))).lower(x, w)
        t, c = time.perf_counter(), time.process_time()
        lowered.compile()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    device = jax.devices()[0]
    return {"platform": device.platform, "device_kind": device.device_kind,
            "wall": wall, "cpu": cpu}


def _mlp(c: float) -> Any:
    import jax.numpy as jnp

    def mlp(x: Any, w: Any) -> Any:
        for _ in range(24):
            x = jnp.tanh(x @ w + c)
        return x.sum()
    return mlp


def remembers(probes: Sequence[dict[str, Any]]) -> bool:
    """Whether, in every probe, the median of the later compiles fell under :data:`SHARE`
    of the faster first compile of all probes, on wall and on CPU time."""
    for clock in ("wall", "cpu"):
        first = min(p[clock][0] for p in probes)
        if any(statistics.median(p[clock][1:]) >= SHARE * first for p in probes):
            return False
    return True

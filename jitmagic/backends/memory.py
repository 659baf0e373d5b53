"""Whether a backend's compiler remembers work between compiles in one process, decided
by measurement (docs/measuring.md): on a TPU v5e a fresh program's compile gets cheaper
after a process's first (the MLP: 3.19-3.32 s, then 2.15-2.89 s), so a cold sample there
needs a fresh process. :func:`probe` runs in a child that owns the device;
:func:`remembers` judges probes; :data:`STANDIN_ENV` answers instead (the tests' TPU).
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
#: Later compiles whose median is under this share of the first did less work (the TPU's
#: MLP: 0.65-0.88; a CPU's: 0.7-1.3, noise).
SHARE = 0.85
#: The distributions whose releases decide the compiler.
RELEASES = ("jax", "jaxlib", "libtpu")


def standin() -> bool | None:
    """What :data:`STANDIN_ENV` says (None: not set)."""
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
    """What the answer is kept under: the :data:`RELEASES` and ``JAX_PLATFORMS``."""
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
    """In a child, after a tiny warm-up jit: :data:`COMPILES` compiles of a 24-block MLP,
    each with a new constant after ``jax.clear_caches()``, on wall and CPU time."""
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

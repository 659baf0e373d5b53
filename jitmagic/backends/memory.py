"""Whether a backend's compiler remembers work between compiles in one process, decided
by measurement (docs/measuring.md): on a TPU v5e a fresh program's compile gets cheaper
after a process's first (the MLP: 3.19-3.32 s, then 2.15-2.89 s), so a cold sample there
needs a fresh process. :func:`probe` runs in a child that owns the device;
:func:`remembers` judges probes; :data:`STANDIN_ENV` answers instead (the tests' TPU).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

#: ``1``: the backend remembers, ``0``: it does not (no probe is run, nothing cached).
STANDIN_ENV = "JITMAGIC_BACKEND_REMEMBERS"
#: Compiles per probe (the first, then the later ones it is judged against).
COMPILES = 5
#: A later compile under this share of the first did less work (a TPU v5e's: 0.72-0.78).
SHARE = 0.85
#: Seconds of CPU time the later compiles must save against the first.
DROP_S = 0.5
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
    from importlib.metadata import PackageNotFoundError, version

    found = []
    for name in RELEASES:
        try:
            found.append(f"{name}-{version(name)}")
        except PackageNotFoundError:
            found.append(f"{name}-none")
    platforms = os.environ.get("JAX_PLATFORMS", "").replace(",", "+") or "default"
    return "_".join([*found, platforms])


def probe(inputs: Any = None) -> dict[str, Any]:
    """In a child, after a tiny warm-up jit: :data:`COMPILES` compiles of a 24-block MLP
    (bf16, 512 -> 2048 -> 512, batch 256: seconds on a TPU, where a small program shows
    no warmth), each with a new constant after ``jax.clear_caches()``, on wall and CPU
    time. Lowered from shapes alone: nothing is allocated."""
    import jax
    import jax.numpy as jnp

    spec = jax.ShapeDtypeStruct
    x = spec((256, 512), jnp.bfloat16)
    params = [(spec((512, 2048), jnp.bfloat16), spec((2048, 512), jnp.bfloat16))] * 24
    jax.block_until_ready(jax.jit(lambda a: a + 1)(1.0))
    wall, cpu = [], []
    for i in range(COMPILES):
        jax.clear_caches()
        lowered = jax.jit(_mlp(float(i))).lower(params, x)
        t, c = time.perf_counter(), time.process_time()
        lowered.compile()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    device = jax.devices()[0]
    return {"platform": device.platform, "device_kind": device.device_kind,
            "wall": wall, "cpu": cpu}


def _mlp(c: float) -> Any:
    import jax

    def mlp(params: Any, x: Any) -> Any:
        for w1, w2 in params:
            x = x + jax.nn.gelu(x @ w1 + c) @ w2
        return x.sum()
    return mlp


def remembers(probes: Sequence[dict[str, Any]]) -> bool:
    """Whether, in every probe, a later compile fell under :data:`SHARE` of its first on
    wall and on CPU time, saving more than :data:`DROP_S` of CPU time. The warmth grows
    with each compile (a TPU v5e's CPU time: 4.4, 4.2, 3.6, 3.4, 3.3 s), where a CPU's
    first compile only pays a little more once (0.32 s, then 0.24 s: no work kept)."""
    for p in probes:
        later = {k: min(p[k][1:]) for k in ("wall", "cpu")}
        if any(later[k] >= SHARE * p[k][0] for k in later) or \
                p["cpu"][0] - later["cpu"] <= DROP_S:
            return False
    return True

"""How far a compile for a TPU made on this host is from the same compile on the TPU.

``--target v5e:1x1`` compiles with libtpu's compile-only client on whatever machine runs
it, so its seconds are that host's. This script times, in fresh processes (the first
compile in a process is the cold one), the same programs:

* ``target``: compiled for ``v5e:1x1`` with the compile-only client (``JAX_PLATFORMS=cpu``,
  ``TPU_SKIP_MDS_QUERY=1``) after a small program's compile has paid the client's set-up,
  as ``--target`` does; needs libtpu (``jax[tpu]``);
* ``device``: compiled on the TPU itself, only where one is attached.

Run it on a CPU machine and on the TPU host; the ratio of the TPU's ``device`` seconds to
a host's ``target`` seconds is the calibration ``docs/benchmarks.md`` gives.

    python benchmarks/target_calibration.py [PROCESSES] [CELL:VARIANT ...]

(e.g. ``3 seed:flat mlp:nested``; all four where none is named).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
import jax, jax.numpy as jnp
from jax.sharding import SingleDeviceSharding

sys.path.insert(0, sys.argv[4])  # the programs as the by-hand scripts time them
from programs import mlp, mlp_nested, mlp_specs
from seed_by_hand import g, g_nested

CELLS = {
    "seed": ((g, g_nested), lambda: (jax.ShapeDtypeStruct((128,), jnp.float32),)),
    "mlp": ((mlp, mlp_nested), mlp_specs),
}
cell, variant, where = sys.argv[1:4]
fns, specs = CELLS[cell]
fn = fns[variant == "nested"]
args = specs()
if where == "target":
    from jax.experimental import topologies
    topo = topologies.get_topology_desc(
        platform="tpu", topology_name="v5e:1x1", chip_config_name="default",
        chips_per_host_bounds=(1, 1, 1), num_slices=1)
    on = SingleDeviceSharding(topo.devices[0])
    args = jax.tree.map(lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=on), args)
    # as --target does: the client's one-time set-up (0.3-0.45 s) paid untimed, on a
    # program of its own
    jax.jit(jnp.sin).lower(jax.ShapeDtypeStruct((8,), jnp.float32, sharding=on)).compile()
start = time.perf_counter()
lowered = jax.jit(fn).lower(*args)
lowered_at = time.perf_counter()
lowered.compile()
done = time.perf_counter()
print(json.dumps({"lower_s": lowered_at - start, "compile_s": done - lowered_at,
                  "backend": jax.default_backend()}))
"""

TARGET_ENV = {"JAX_PLATFORMS": "cpu", "TPU_SKIP_MDS_QUERY": "1",
              "ALLOW_MULTIPLE_LIBTPU_LOAD": "1", "TF_CPP_MIN_LOG_LEVEL": "3"}


def one(cell: str, variant: str, where: str) -> float | None:
    """One fresh process's compile seconds, or None where it could not compile."""
    env = dict(os.environ, **(TARGET_ENV if where == "target" else {}))
    here = os.path.dirname(os.path.abspath(__file__))
    done = subprocess.run([sys.executable, "-c", CHILD, cell, variant, where, here], env=env,
                          capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        print(f"  {cell} {variant} {where}: failed: {done.stderr.strip()[-300:]}")
        return None
    return float(json.loads(lines[-1])["compile_s"])


def has_tpu() -> bool:
    """Whether a TPU is attached (asked in a child, which lets the chip go again)."""
    probe = "import jax; print(jax.default_backend())"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    return done.stdout.strip().endswith("tpu")


def main(processes: int, chosen: list[str]) -> None:
    wheres = ["target", "device"] if has_tpu() else ["target"]
    print(f"host: {os.cpu_count()} CPU cores; {processes} fresh processes each; "
          f"compiled: {', '.join(wheres)}")
    results: dict[str, float] = {}
    every = [f"{cell}:{variant}" for cell in ("seed", "mlp") for variant in ("flat", "nested")]
    for cell, variant in (pair.split(":") for pair in chosen or every):
        for where in wheres:
            seconds = [s for s in (one(cell, variant, where) for _ in range(processes))
                       if s is not None]
            if seconds:
                results[f"{cell} {variant} {where}"] = statistics.median(seconds)
                print(f"{cell} {variant} {where}: median {statistics.median(seconds):.2f} s "
                      f"{[round(s, 2) for s in seconds]}", flush=True)
    if "device" in wheres:
        for key in [k for k in results if k.endswith(" target")]:
            device = results.get(key.replace(" target", " device"))
            if device:
                print(f"{key.rsplit(' ', 1)[0]}: device / compile-only on this host "
                      f"{device / results[key]:.2f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3, sys.argv[2:])

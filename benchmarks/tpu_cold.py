"""Are jitmagic's cold compiles cold on this backend? Run on the machine to check (a TPU).

One process: every XLA compile jitmagic's comparison of the discussion's example makes,
in order, with its seconds (JAX's ``backend_compile_duration`` event) and the samples
the comparison kept; then, in the same process, fresh compiles by hand of the same
programs and of a program never compiled before (is the speed-up the program's, or the
process's?). Then child processes, one compile each, as the cold reference: through the
device where no other process holds it, and with libtpu's compile-only client for a
``v5e:1x1`` topology (``JAX_PLATFORMS=cpu``), from the source and from a serialized
``jax.export`` of the parent's program. Prints a JSON line per finding and writes them
all to ``$OUT/tpu_cold.json`` where ``OUT`` is set.

    python benchmarks/tpu_cold.py [--pairs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

SEED = """
import jax, jax.numpy as jnp
def f(x):
    return sum(i * x for i in range({terms}))
def g(x):
    return sum(f(x) for _ in range(16))
def g_nested(x):
    return sum(jax.jit(f)(x) for _ in range(16))
x = jnp.ones(128)
"""
#: A child's one compile, on the device or for a topology (``TOPOLOGY``), from the
#: source or from a serialized export (``EXPORTED``), printed as JSON.
CHILD = """
import json, os, sys, time
import jax, jax.numpy as jnp
variant, topology, exported = sys.argv[1], os.environ.get("TOPOLOGY"), os.environ.get("EXPORTED")
t0 = time.perf_counter()
if topology:
    from jax.experimental import topologies
    topo = topologies.get_topology_desc(platform="tpu", topology_name=topology,
        chip_config_name="default", chips_per_host_bounds=(1, 1, 1), num_slices=1)
    sharding = jax.sharding.SingleDeviceSharding(topo.devices[0])
else:
    sharding = jax.sharding.SingleDeviceSharding(jax.devices()[0])
spec = jax.ShapeDtypeStruct((128,), jnp.float32, sharding=sharding)
ready = time.perf_counter() - t0
if exported:
    from jax import export
    exp = export.deserialize(bytearray(open(exported, "rb").read()))
    fn = exp.call
else:
    exec(SOURCE)
    fn = g if variant == "flat" else g_nested
lowered = jax.jit(fn).lower(spec)
w, c = time.perf_counter(), time.process_time()
lowered.compile()
print(json.dumps({"variant": variant, "compile_s": time.perf_counter() - w,
                  "compile_cpu_s": time.process_time() - c, "startup_s": ready,
                  "backend": jax.default_backend(), "topology": topology,
                  "exported": bool(exported)}))
"""

found: list[dict] = []


def say(kind: str, **fields) -> None:
    record = {"kind": kind, **fields}
    found.append(record)
    print(json.dumps(record), flush=True)


def in_process(pairs: int) -> None:
    """The comparison's compiles, then fresh ones by hand, all in this process."""
    import jax

    import jitmagic

    compiles: list[tuple[float, float]] = []
    begun = time.perf_counter()
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, s, **kw: compiles.append((round(time.perf_counter() - begun, 3), s))
        if event == "/jax/core/compile/backend_compile_duration" else None)
    say("environment", backend=jax.default_backend(), jax=jax.__version__,
        devices=[str(d) for d in jax.devices()],
        cache_dir=jax.config.jax_compilation_cache_dir,
        cache_on=jax.config.jax_enable_compilation_cache,
        env={k: v for k, v in os.environ.items()
             if k.startswith(("JAX", "XLA", "TPU", "LIBTPU", "TF_"))})
    space: dict = {}
    exec(SEED.format(terms=256), space)
    result = jitmagic.compare(space["g"], space["x"], repeat=pairs, quiet=True)
    say("comparison", verdict=result.verdict.headline,
        flat={k: v for k, v in result.flat.samples.items() if k.endswith("_s")},
        nested={k: v for k, v in result.nested.samples.items() if k.endswith("_s")},
        helpers=list(result.nested.helpers))
    say("compiles during the comparison", count=len(compiles), at_and_seconds=compiles)
    compiles.clear()
    by_hand(space, "same programs after the comparison", 2)
    fresh: dict = {}
    exec(SEED.format(terms=255), fresh)  # a program this process never compiled
    by_hand(fresh, "programs never compiled before", 1)
    by_hand(fresh, "those again", 1)
    export_programs(space)


def by_hand(space: dict, label: str, times: int) -> None:
    import jax

    seconds: dict[str, list[float]] = {"flat": [], "nested": []}
    cpu: dict[str, list[float]] = {"flat": [], "nested": []}
    for _ in range(times):
        for variant, fn in (("flat", space["g"]), ("nested", space["g_nested"])):
            jax.clear_caches()
            lowered = jax.jit(fn).lower(space["x"])
            w, c = time.perf_counter(), time.process_time()
            lowered.compile()
            seconds[variant].append(round(time.perf_counter() - w, 3))
            cpu[variant].append(round(time.process_time() - c, 3))
    say("by hand in one process", label=label, wall=seconds, cpu=cpu)


def export_programs(space: dict) -> None:
    """Each variant's program serialized for the TPU, for a child to compile."""
    import jax
    from jax import export

    for variant, fn in (("flat", space["g"]), ("nested", space["g_nested"])):
        try:
            exp = export.export(jax.jit(fn), platforms=["tpu"])(space["x"])
            serialized = exp.serialize()
        except Exception as exc:  # noqa: BLE001 - said, and the children go without
            say("export failed", variant=variant, error=repr(exc))
            continue
        with open(f"/tmp/tpu_cold_{variant}.bin", "wb") as out:
            out.write(serialized)


def child(variant: str, **env: str) -> None:
    full = {**os.environ, **env}
    if env.get("TOPOLOGY"):
        full.update(JAX_PLATFORMS="cpu", TPU_SKIP_MDS_QUERY="1", ALLOW_MULTIPLE_LIBTPU_LOAD="1")
    script = f"SOURCE = {SEED.format(terms=256)!r}\n" + CHILD
    w = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", script, variant], env=full,
                          capture_output=True, text=True, timeout=240)
    if done.returncode:
        say("child failed", variant=variant, env=env, stderr=done.stderr[-1500:])
        return
    say("child", process_s=round(time.perf_counter() - w, 2),
        **json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--part", choices=("parent", "children", "all"), default="all")
    args = parser.parse_args()
    if args.part in ("parent", "all"):
        here = os.path.dirname(os.path.abspath(__file__))
        run = (f"import sys; sys.path.insert(0, {here!r}); import tpu_cold; "
               f"tpu_cold.in_process({args.pairs}); tpu_cold.save('parent')")
        done = subprocess.run([sys.executable, "-c", run], timeout=420)
        if done.returncode:
            say("parent failed", rc=done.returncode)
    if args.part in ("children", "all"):
        load("parent")
        for variant in ("flat", "nested"):
            child(variant)  # through the device: the parent has ended
        for variant in ("flat", "nested", "flat", "nested"):
            child(variant, TOPOLOGY="v5e:1x1")
        for variant in ("flat", "nested"):
            if os.path.exists(f"/tmp/tpu_cold_{variant}.bin"):
                child(variant, TOPOLOGY="v5e:1x1", EXPORTED=f"/tmp/tpu_cold_{variant}.bin")
    save("all")


def save(name: str) -> None:
    folder = os.environ.get("OUT") or "/tmp"
    with open(os.path.join(folder, f"tpu_cold_{name}.json"), "w") as out:
        json.dump(found, out, indent=1)


def load(name: str) -> None:
    path = os.path.join(os.environ.get("OUT") or "/tmp", f"tpu_cold_{name}.json")
    if os.path.exists(path):
        with open(path) as saved:
            found.extend(json.load(saved))


if __name__ == "__main__":
    main()

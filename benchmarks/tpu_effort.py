"""Which XLA effort settings change a TPU's compile time: each one measured, none assumed.

``--effort`` offers per backend the settings that act on it (``jitmagic/backends/effort.py``).
On a TPU v5e the CPU's settings saved nothing, so the TPU's set is decided by this
script's figures. Each candidate (JAX's optimization and memory-fitting levels and
efforts, LLVM's level, the latency-hiding scheduler) is compiled, for each program (the
discussion's seed, ``g`` on ``f32[128]`` as ``python -m jitmagic demo`` has it, and a
24-block residual MLP in bf16, 512→2048→512, batch 256), as the **first compile of a
fresh child process**: a TPU compile gets cheaper with each repeat in one process, and
``jax.clear_caches()`` does not undo that. Rounds alternate the order (default first,
then reversed), so drift hits every row alike.

The children need no chip: with ``JAX_PLATFORMS=cpu TPU_SKIP_MDS_QUERY=1
ALLOW_MULTIPLE_LIBTPU_LOAD=1`` they compile for the ``v5e:1x1`` topology with libtpu's
compile-only client (on the TPU host it takes the same time as the device's; a child
starts in about 1 s, where opening the chip costs about 15 s). Each child times one
``lowered.compile(compiler_options=...)`` on both clocks and hashes the optimized HLO,
so a setting whose program comes out as the default's is seen to change nothing.
``--calls`` then opens the chip once, in this process, and times a steady call of each
setting's program (what a saving costs at run time).

Prints a table of medians [min–max] and ratios (default/setting, above 1: the setting
compiles faster), each judged by jitmagic's one significance rule, and writes the
figures as JSON to ``$OUT/tpu_effort.json`` where ``OUT`` is set (or ``--json PATH``).
Without libtpu it says so and exits 2. About 5 minutes on a TPU v5e host (``--deadline``
stops starting children past its seconds). On a TPU host, from the repository's root::

    PYTHONPATH=$PYTHONPATH:$PWD python3 benchmarks/tpu_effort.py --calls

On a CPU machine, in a separate venv with ``pip install "jax[tpu]==0.10.2"``, the same
command without ``--calls`` compiles for a v5e here (the seconds are this host's).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: The candidates, as ``compiler_options`` (an effort level by its name: the child turns
#: it into the number XLA takes). The default compiles with none.
SETTINGS: dict[str, dict[str, Any]] = {
    "default": {},
    "optimization_level=O0": {"optimization_level": "O0"},
    "optimization_level=O1": {"optimization_level": "O1"},
    "memory_fitting_level=O0": {"memory_fitting_level": "O0"},
    "memory_fitting_effort=-1": {"memory_fitting_effort": -1.0},
    "exec_time_optimization_effort=-1": {"exec_time_optimization_effort": -1.0},
    "xla_backend_optimization_level=0": {"xla_backend_optimization_level": 0},
    "xla_tpu_enable_latency_hiding_scheduler=false":
        {"xla_tpu_enable_latency_hiding_scheduler": False},
}
#: The options that take one of JAX's effort levels (``jax._src.config.EffortLevel``).
LEVELS = ("optimization_level", "memory_fitting_level")
PROGRAMS = ("seed", "mlp24")
#: A child's environment: libtpu's compile-only client beside whatever holds the chip.
CHILD_ENV = {"JAX_PLATFORMS": "cpu", "TPU_SKIP_MDS_QUERY": "1",
             "ALLOW_MULTIPLE_LIBTPU_LOAD": "1", "TPU_STDERR_LOG_LEVEL": "3",
             "TPU_MIN_LOG_LEVEL": "3", "TF_CPP_MIN_LOG_LEVEL": "3"}
TOPOLOGY = {"platform": "tpu", "topology_name": "v5e:1x1", "chip_config_name": "default",
            "chips_per_host_bounds": (1, 1, 1), "num_slices": 1}


# --- the programs (the child and --calls build them alike) ------------------------------

def f(x):
    """The discussion's reused helper (jitmagic/frontends/demo.py's)."""
    return sum(i * x for i in range(256))


def g(x):
    """The discussion's entry: ``f`` used 16 times, inlined (the flat program)."""
    return sum(f(x) for _ in range(16))


def mlp24(x, params):
    """24 residual blocks, each 512→2048→512 with a GELU between."""
    import jax

    for w1, w2 in params:
        x = x + jax.nn.gelu(x @ w1) @ w2
    return x


def program(name: str, sharding: Any = None, real: bool = False) -> tuple[Any, tuple]:
    """(the entry, its arguments) for ``name``: shapes with ``sharding`` (the child's
    compile-only device), or ``real`` arrays on the default device (``--calls``)."""
    import jax
    import jax.numpy as jnp

    def arg(shape, dtype, scale=1.0):
        if real:
            return jnp.full(shape, scale, dtype)
        return jax.ShapeDtypeStruct(shape, dtype, sharding=sharding)

    if name == "seed":
        return g, (arg((128,), jnp.float32),)
    params = [(arg((512, 2048), jnp.bfloat16, 0.01), arg((2048, 512), jnp.bfloat16, 0.01))
              for _ in range(24)]
    return mlp24, (arg((256, 512), jnp.bfloat16), params)


def resolved(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` as XLA takes them: an effort level's name as its number."""
    from jax._src.config import EffortLevel

    return {k: EffortLevel[v].value if k in LEVELS else v for k, v in options.items()}


# --- one child: one first compile ---------------------------------------------------------

def child(name: str, options: dict[str, Any]) -> None:
    """Compile ``name`` for the v5e topology at ``options``, as this process's first
    compile, and print one JSON line: its wall and CPU seconds, the optimized HLO's
    hash, and what the compiled program holds."""
    started = time.perf_counter()
    import jax
    from jax.experimental import topologies
    from jax.sharding import SingleDeviceSharding

    topo = topologies.get_topology_desc(**TOPOLOGY)
    fn, args = program(name, SingleDeviceSharding(topo.devices[0]))
    lowered = jax.jit(fn).lower(*args)  # untimed: an option changes only the compile
    opts = resolved(options) or None
    gc.collect()
    gc.disable()
    t0, c0 = time.perf_counter(), time.process_time()
    compiled = lowered.compile(compiler_options=opts)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    gc.enable()
    memory = compiled.memory_analysis()
    print(json.dumps({
        "compile_s": wall, "compile_cpu_s": cpu, "ready_s": t0 - started,
        "hlo_sha": hashlib.sha256(compiled.as_text().encode()).hexdigest()[:16],
        "code_bytes": getattr(memory, "generated_code_size_in_bytes", None),
        "temp_bytes": getattr(memory, "temp_size_in_bytes", None)}))


def run_child(name: str, setting: str) -> dict[str, Any]:
    """One fresh child's compile of ``name`` at ``setting`` (its JSON, with the child's
    whole wall seconds); RuntimeError with the end of its stderr where it failed."""
    env = {**os.environ, **CHILD_ENV}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--child", name,
                           json.dumps(SETTINGS[setting])],
                          env=env, capture_output=True, text=True, timeout=300)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = "\n".join(done.stderr.strip().splitlines()[-8:])
        raise RuntimeError(f"{name} at {setting}: the child exited {done.returncode}:\n{tail}")
    return {**json.loads(lines[-1]), "child_s": time.perf_counter() - t0}


# --- the parent: rounds of children, then the table ----------------------------------------

def missing_libtpu() -> str | None:
    """Why this Python cannot compile for a TPU (no JAX, no libtpu), or None."""
    for module, install in (("jax", "jax"), ("libtpu", '"jax[tpu]==0.10.2"')):
        if importlib.util.find_spec(module) is None:
            return (f"{module} is not installed in this Python ({sys.executable}): this "
                    f"script compiles for a TPU v5e with libtpu's compile-only client; "
                    f"install it with `pip install {install}` (a separate venv on a CPU "
                    "machine) or run it on a TPU host")
    return None


def measure(programs: list[str], settings: list[str], rounds: int,
            deadline_s: float) -> tuple[dict[str, dict[str, list[dict]]], bool]:
    """Each program at each setting, one fresh child per compile, in ``rounds`` rounds
    (default first, then reversed, in turn); (samples by program and setting, whether
    the deadline cut it short)."""
    got = {p: {s: [] for s in settings} for p in programs}
    start, pace = time.perf_counter(), 0.0
    for r in range(rounds):
        order = settings if r % 2 == 0 else settings[::-1]
        for p in programs:
            for s in order:
                if time.perf_counter() - start + pace > deadline_s:
                    return got, True
                sample = run_child(p, s)
                pace = max(pace, sample["child_s"])
                got[p][s].append(sample)
                print(f"  round {r + 1} {p:6} {s:46} {sample['compile_s']:7.3f} s "
                      f"(CPU {sample['compile_cpu_s']:6.3f} s)", flush=True)
    return got, False


def rule() -> Any:
    """jitmagic's one significance rule (jitmagic/model/stats/rule.py), loaded by its
    path: it imports only the standard library, so no IPython is needed here."""
    spec = importlib.util.spec_from_file_location(
        "jitmagic_rule", ROOT / "jitmagic" / "model" / "stats" / "rule.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses reads the module back
    spec.loader.exec_module(module)
    return module


def compared(default: list[float], other: list[float], judge: Any) -> dict[str, Any]:
    """default/setting (above 1: the setting is faster) with the rule's verdict about the
    setting and its interval."""
    d = judge.difference(default, other)
    return {"ratio": d.ratio, "low": d.low, "high": d.high, "verdict": d.kind}


def summary(samples: dict[str, list[dict]], judge: Any) -> dict[str, dict[str, Any]]:
    """Per setting: medians, min–max, each ratio to the default with the rule's verdict,
    and whether its optimized HLO is the default's (None where the default's varied)."""
    default = samples["default"]
    hashes = {s["hlo_sha"] for s in default}
    out = {}
    for name, runs in samples.items():
        if not runs:
            continue
        row: dict[str, Any] = {"runs": len(runs)}
        for key in ("compile_s", "compile_cpu_s"):
            xs = [s[key] for s in runs]
            row[key] = {"median": statistics.median(xs), "min": min(xs), "max": max(xs),
                        "samples": xs}
            if name != "default" and default:
                row[key]["vs_default"] = compared([s[key] for s in default], xs, judge)
        mine = {s["hlo_sha"] for s in runs}
        row["same_hlo_as_default"] = None if len(hashes) != 1 or len(mine) != 1 \
            else mine == hashes
        row["hlo_sha"] = sorted(mine)
        row["code_bytes"] = runs[0].get("code_bytes")
        row["temp_bytes"] = runs[0].get("temp_bytes")
        out[name] = row
    return out


def calls(programs: list[str], settings: list[str], judge: Any,
          batches: int = 5) -> dict[str, dict[str, Any]]:
    """On the chip (this process opens it): each setting's program compiled, warmed, and
    its steady call timed in ``batches`` batches (settings interleaved), each batch's mean
    per call; the default/setting ratio by the rule. Empty where no TPU is here."""
    import jax

    if jax.default_backend() != "tpu":
        print(f"--calls: no TPU here ({jax.default_backend()}), no call timed")
        return {}
    out: dict[str, dict[str, Any]] = {}
    for p in programs:
        fn, args = program(p, real=True)
        lowered = jax.jit(fn).lower(*args)
        runs = {s: lowered.compile(compiler_options=resolved(SETTINGS[s]) or None)
                for s in settings}
        times: dict[str, list[float]] = {s: [] for s in settings}
        for b in range(batches):
            for s in settings if b % 2 == 0 else settings[::-1]:
                times[s].append(per_call(runs[s], args))
        out[p] = {s: {"median": statistics.median(xs), "samples": xs,
                      **({} if s == "default" else
                         {"vs_default": compared(times["default"], xs, judge)})}
                  for s, xs in times.items()}
    return out


def per_call(compiled: Any, args: tuple, seconds: float = 0.2) -> float:
    """Seconds per steady call of ``compiled`` (after 3 untimed calls), over about
    ``seconds``."""
    import jax

    for _ in range(3):
        jax.block_until_ready(compiled(*args))
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        jax.block_until_ready(compiled(*args))
        n += 1
    return (time.perf_counter() - t0) / n


def fmt(row: dict[str, Any] | None, key: str) -> str:
    """A median [min–max] with its ratio and verdict, for the table."""
    if not row or key not in row:
        return "—"
    m = row[key]
    said = f"{m['median']:.3f} [{m['min']:.3f}–{m['max']:.3f}]"
    v = m.get("vs_default")
    return said if v is None else f"{said} {v['ratio']:.2f}x {short(v['verdict'])}"


def short(verdict: str) -> str:
    return {"no measurable difference": "same"}.get(verdict, verdict)


def table(results: dict[str, Any]) -> None:
    """The table: per program and setting, wall and CPU seconds of the compile, ratios
    default/setting (above 1: the setting compiles faster) and the rule's verdict,
    whether the HLO is the default's, and a call's cost where --calls timed it."""
    print("\nseconds of XLA compile, first compile of a fresh child: median [min–max], "
          "default/setting and the rule's verdict; HLO: the optimized program is the "
          "default's (same) or not (differs)")
    for p, rows in results["compile"].items():
        print(f"\n{p}:")
        print(f"  {'setting':46} {'wall':38} {'CPU':38} {'HLO':8} call default/setting")
        for name, row in rows.items():
            hlo = {True: "same", False: "differs", None: "?"}[row["same_hlo_as_default"]]
            call = results.get("calls", {}).get(p, {}).get(name)
            said = "—" if not call else f"{call['median'] * 1e6:.0f} µs" + (
                "" if "vs_default" not in call else
                f" {call['vs_default']['ratio']:.2f}x {short(call['vs_default']['verdict'])}")
            print(f"  {name:46} {fmt(row, 'compile_s'):38} {fmt(row, 'compile_cpu_s'):38} "
                  f"{'' if name == 'default' else hlo:8} {said}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", nargs=2, metavar=("PROGRAM", "OPTIONS_JSON"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--settings", default=",".join(SETTINGS),
                    help="comma-separated names (the default is always measured)")
    ap.add_argument("--deadline", type=float, default=250.0,
                    help="seconds after which no more children start")
    ap.add_argument("--calls", action="store_true", help="time a call of each on the chip")
    ap.add_argument("--json", default=None, help="where to write the figures")
    args = ap.parse_args()
    if args.child:
        child(args.child[0], json.loads(args.child[1]))
        return 0
    why = missing_libtpu()
    if why:
        print(why, file=sys.stderr)
        return 2
    settings = ["default", *(s for s in args.settings.split(",") if s in SETTINGS
                             and s != "default")]
    programs = [p for p in args.programs.split(",") if p in PROGRAMS]
    print(f"host: {platform.platform()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}; compiling for {TOPOLOGY['topology_name']} in "
          f"fresh children, {args.rounds} rounds")
    t0 = time.perf_counter()
    try:
        got, cut = measure(programs, settings, args.rounds, args.deadline)
    except RuntimeError as exc:
        print(f"a child failed (is libtpu usable here?): {exc}", file=sys.stderr)
        return 2
    judge = rule()
    results: dict[str, Any] = {
        "host": platform.platform(), "cpus": os.cpu_count(), "rounds": args.rounds,
        "cut_by_deadline": cut, "settings": {s: SETTINGS[s] for s in settings},
        "compile": {p: summary(got[p], judge) for p in programs}}
    if args.calls:
        results["calls"] = calls(programs, settings, judge)
    results["wall_s"] = time.perf_counter() - t0
    table(results)
    print(f"\n{results['wall_s']:.0f} s in all" + (" (cut short by --deadline)" if cut else ""))
    write(results, args.json)
    return 0


def write(results: dict[str, Any], path: str | None) -> None:
    """The figures as JSON, to ``path`` or ``$OUT/tpu_effort.json`` where either is set."""
    where = path or (os.path.join(os.environ["OUT"], "tpu_effort.json")
                     if os.environ.get("OUT") else None)
    if where:
        Path(where).write_text(json.dumps(results, indent=1), encoding="utf-8")
        print(f"figures written to {where}")


if __name__ == "__main__":
    sys.exit(main())

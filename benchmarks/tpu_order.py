"""Does the order of cold runs make a compile warm? Run on the machine to check (a TPU).

On a TPU v5e, by hand, the discussion's nested example compiled in 3.5-4.2 s, except
right after a run of the same program, where it sometimes took 1.0-1.6 s (the ABBA
order takes the same program twice in a row at every round's turn). Each pattern runs
in a fresh process, one cold first call per letter (``jax.clear_caches()``, a fresh
``jax.jit``, until the result is ready), F the flat program and N the nested one:

* ``ABBA``: F N N F F N N F F N N F, the order jitmagic's sampler takes;
* ``ABAB``: F N F N ..., never the same program twice in a row;
* ``renamed``: ABBA, each run's function under a name of its own (``g_3``), so that
  every run's HLO module has a new name (is the warmth keyed by the module?);
* ``same``: N six times in a row;
* ``samename``: ABBA, the nested program's function named ``g`` too (one module name for
  both, as jitmagic's variants have);
* ``jitmagic``: ABBA on jitmagic's own flat and nested variants of ``g``, timed as by hand
  (is a slower nested compile the variant's, or the sampler's?);
* ``mlp``: a 24-block bf16 MLP, flat and nested, ABAB.

Prints one JSON line per run (wall, XLA's compile event, CPU time) and a summary per
pattern; writes them all to ``$OUT/tpu_order.json`` where ``OUT`` is set.

    python benchmarks/tpu_order.py [--patterns ABBA,ABAB,renamed,same,mlp]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD = r"""
import json, sys, time
import jax, jax.numpy as jnp

pattern = sys.argv[1]
compiles = []
jax.monitoring.register_event_duration_secs_listener(
    lambda event, s, **kw: compiles.append(s)
    if event == "/jax/core/compile/backend_compile_duration" else None)

sys.path.insert(0, sys.argv[2])  # the programs, as the other benchmarks time them
from programs import mlp, mlp_arguments, mlp_nested
from seed_by_hand import g, g_nested

if pattern == "mlp":
    args = mlp_arguments()
    programs, order = {"F": mlp, "N": mlp_nested}, "FNFNFNFNFN"
else:
    args = (jnp.ones(128),)
    programs = {"F": g, "N": g_nested}
    order = {"ABBA": "FNNFFNNFFNNF", "ABAB": "FNFNFNFNFNFN", "renamed": "FNNFFNNFFNNF",
             "same": "NNNNNN", "samename": "FNNFFNNFFNNF", "jitmagic": "FNNFFNNFFNNF"}[pattern]
    if pattern == "samename":  # both programs' modules named jit_g, as jitmagic's are
        g_nested.__name__ = g_nested.__qualname__ = "g"
    if pattern == "jitmagic":  # jitmagic's own variants of g, timed as by hand
        from jitmagic.measure.pipeline import variants_of
        made = variants_of(g, args, {})
        programs = {"F": made["flat"].variant.fn, "N": made["nested"].variant.fn}
jax.block_until_ready(jnp.ones(3) + 1)  # the backend up before the first timed run
for i, letter in enumerate(order):
    fn = programs[letter]
    if pattern == "renamed":
        def fn(*a, _fn=fn):
            return _fn(*a)
        fn.__name__ = fn.__qualname__ = f"{programs[letter].__name__}_{i}"
    jax.clear_caches()
    compiles.clear()
    w, c = time.perf_counter(), time.process_time()
    jax.block_until_ready(jax.jit(fn)(*args))
    print(json.dumps({"pattern": pattern, "run": i, "program": letter,
                      "wall_s": round(time.perf_counter() - w, 3),
                      "cpu_s": round(time.process_time() - c, 3),
                      "compile_s": [round(s, 3) for s in compiles]}), flush=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patterns", default="ABBA,ABAB,renamed,same,mlp")
    args = parser.parse_args()
    found: list[dict] = []
    for pattern in args.patterns.split(","):
        done = subprocess.run([sys.executable, "-c", CHILD, pattern, HERE],
                              capture_output=True, text=True, timeout=240)
        runs = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        for run in runs:
            print(json.dumps(run), flush=True)
        if done.returncode:
            print(done.stderr[-2000:], flush=True)
        found += runs
        for letter in "FN":
            walls = [r["wall_s"] for r in runs if r["program"] == letter]
            print(f"{pattern} {letter}: {walls}", flush=True)
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, "tpu_order.json"), "w") as saved:
            json.dump(found, saved, indent=1)


if __name__ == "__main__":
    main()

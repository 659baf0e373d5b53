"""Which helpers to jit, measured: attribution and advice on a heavy and a trivial helper.

The entry calls a heavy helper (a sum of 64 terms) 16 times and a trivial one
(``x + 1``) 16 times. Expected: the heavy helper carries most of the flat trace
and nesting it alone saves most of the cold start; the trivial one saves
nothing measurable. A third helper, called 16 times with a sum of 16 terms,
shows a second, smaller saving and the recommended set nested together.

Then, side by side in one run, what the advice costs against the comparison it
extends: ``compare(model, x, advise=True)`` at the same ``-r`` (default auto: every
candidate runs until the rule decides it), the comparison's wall time and the
advice's, and their ratio.

Run: ``python benchmarks/advise.py [-r REPEAT]`` (add ``--sharded`` under
``XLA_FLAGS=--xla_force_host_platform_device_count=8`` for an 8-device mesh).
"""

from __future__ import annotations

import argparse
import json
import time

import jax
import jax.numpy as jnp

import jitmagic
from jitmagic.measure.parts.advice import attribute
from jitmagic.render.attribution import advice_lines, attribution_lines


def heavy(x):
    return sum(i * x for i in range(64))


def medium(x):
    return sum(i * jnp.cos(x) for i in range(16))


def trivial(x):
    return x + 1


def model(x):
    return sum(heavy(x) + medium(x) + trivial(x) for _ in range(16))


def argument(sharded: bool) -> jax.Array:
    if not sharded:
        return jnp.ones(128)
    from jax.sharding import NamedSharding, PartitionSpec

    mesh = jax.make_mesh((jax.device_count(),), ("x",))
    return jax.device_put(jnp.ones(128), NamedSharding(mesh, PartitionSpec("x")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-r", "--repeat", default="auto")
    parser.add_argument("--sharded", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the advice's dict too")
    args = parser.parse_args()
    x = argument(args.sharded)
    print(f"JAX {jax.__version__}, {jax.default_backend()}, {jax.device_count()} device(s) "
          f"{sorted({d.device_kind for d in jax.devices()})}, sharding {x.sharding}")
    attribution = attribute(model, x)
    print("\n".join(attribution_lines(attribution)))
    repeat = args.repeat if args.repeat == "auto" else int(args.repeat)
    start = time.perf_counter()
    advice = jitmagic.advise(model, x, repeat=repeat, progress=False)
    print("\n".join(advice_lines(advice)))
    print(f"advice on its own took {time.perf_counter() - start:.1f} s of wall time")
    if args.json:
        print(json.dumps(advice.to_dict(), indent=1))
    c = jitmagic.compare(model, x, repeat=repeat, advise=True, progress=False)
    runs = {label: len(v.samples["first_call_s"]) for label, v in c.variants.items()}
    print(f"compare(..., advise=True, repeat={repeat!r}): the comparison {c.wall_s:.1f} s "
          f"({runs} runs), its advice {c.advice.wall_s:.1f} s "
          f"({c.advice.wall_s / c.wall_s:.2f}× the comparison; up to {c.advice.repeat} runs a "
          f"candidate, {len(c.advice.ranked)} candidates)")


if __name__ == "__main__":
    main()

"""What ``--xla`` costs, what the profiler adds to the compile it profiles, and where XLA
spends that compile, flat and nested.

On two programs (``jax.grad`` of a loss calling a small MLP layer 16 times in a loop, and
the discussion's example: ``f`` with 256 terms, reused 16 times by ``g``), prints side by
side in one run:

* the cost of ``--xla``: ``jitmagic.compare(..., xla=True)``'s wall time against a plain
  comparison's, ``--rounds`` interleaved rounds (2), each at ``-r --repeat`` (3);
* the profiler's overhead: the profiled compile (``jitmagic.measure.parts.xla_passes``' own)
  against an unprofiled cold compile of the same lowered program (caches cleared, the
  same steps), ``--samples`` interleaved samples each (7), as the one rule's ratio and
  interval;
* the shares of the profiled compile, flat and nested (medians of those samples): the
  time before XLA's passes (the module converted to HLO), the HLO passes, code generation
  (and LLVM's compile in it), and the top passes of the last sample.

    PYTHONPATH=. python benchmarks/xla_passes.py [--repeat 3] [--rounds 2] [--samples 7]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import jax
import jax.numpy as jnp

import jitmagic
from jitmagic.measure.parts.xla_passes import profiled_compile
from jitmagic.measure.pipeline import variants_of
from jitmagic.measure.sampling.conditions import paused_gc, persistent_cache_off
from jitmagic.measure.sampling.stages import cold_jit
from jitmagic.measure.sampling.stops import Checkpoint
from jitmagic.measure.variants.rows import Prepared
from jitmagic.model.causes.xla_passes import ProfiledCompile
from jitmagic.model.stats.rule import FASTER, INCONCLUSIVE, SAME, SLOWER, difference


def layer(x, w):
    return jnp.tanh(x @ w) + jnp.sin(x)


def loss(w, x):
    for _ in range(16):
        x = layer(x, w)
    return jnp.sum(x ** 2)


def f(x):
    return sum(i * x for i in range(256))


def g(x):
    return sum(f(x) for _ in range(16))


PROGRAMS = {"grad(loss)": (jax.grad(loss), (jnp.ones((64, 64)), jnp.ones((8, 64)))),
            "discussion g": (g, (3.14,))}


#: The rule's word on profiled against plain, said of the profiler.
SAID = {FASTER: "the profiler slows it", SLOWER: "the profiled one was faster",
        SAME: "no measurable difference", INCONCLUSIVE: "inconclusive"}


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def plain_compile(p: Prepared) -> float:
    """One cold compile of ``p`` as the profiled one runs, with no profiler: seconds."""
    with persistent_cache_off():
        _, jitted = cold_jit(p.variant.fn, p.args, p.kwargs, p.variant.jit_options)
        lowered = jitted.lower(*p.args, **p.kwargs)
        with paused_gc():
            return timed(lowered.compile)[1]


def cost(fn, args, repeat: int, rounds: int) -> str:
    plain, xla = [], []
    for _ in range(rounds):
        plain.append(timed(lambda: jitmagic.compare(fn, *args, repeat=repeat, quiet=True))[1])
        xla.append(timed(lambda: jitmagic.compare(fn, *args, repeat=repeat, xla=True,
                                                  quiet=True))[1])
    ratios = [b / a for a, b in zip(plain, xla, strict=True)]
    return (f"  cost of --xla (-r {repeat}, {rounds} rounds): plain "
            f"{statistics.median(plain):.2f} s, --xla {statistics.median(xla):.2f} s, ratio "
            f"{statistics.median(ratios):.2f}x (each round's: "
            f"{', '.join(f'{r:.2f}' for r in ratios)})")


def overhead_and_shares(fn, args, samples: int) -> list[str]:
    prepared = variants_of(fn, args, {})
    out = []
    for name, p in prepared.items():
        plain, profiled = [], []
        reads: list[ProfiledCompile] = []
        for _ in range(samples):
            plain.append(plain_compile(p))
            reads.append(profiled_compile(p, Checkpoint()))
            profiled.append(reads[-1].compile_s)
        d = difference(profiled, plain)  # ratio: profiled / plain; "faster": plain is
        out.append(f"  {name:<6} compile: plain {statistics.median(plain) * 1e3:7.1f} ms, "
                   f"profiled {statistics.median(profiled) * 1e3:7.1f} ms, profiled/plain "
                   f"{d.ratio:.2f}x ({d.low:.2f}x-{d.high:.2f}x: {SAID[d.kind]})")
        out.append(f"  {'':<6} shares of the profiled compile (medians): before the passes "
                   f"{_median_share(reads, 'before_passes_s'):.1%}, HLO passes "
                   f"{_median_share(reads, 'hlo_passes_s'):.1%}, code generation "
                   f"{_median_share(reads, 'codegen_s'):.1%} (LLVM's compile "
                   f"{_median_share(reads, 'llvm_s'):.1%}); top passes: "
                   + ", ".join(f"{n} {s / reads[-1].compile_s:.1%}"
                               for n, s in reads[-1].top_passes[:4]))
    return out


def _median_share(reads: list[ProfiledCompile], key: str) -> float:
    return statistics.median(getattr(r, key) / r.compile_s for r in reads)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--samples", type=int, default=7)
    a = parser.parse_args()
    print(f"JAX {jax.__version__}, {jax.default_backend()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, load {os.getloadavg()[0]:.2f}", flush=True)
    for title, (fn, args) in PROGRAMS.items():
        print(title, flush=True)
        print(cost(fn, args, a.repeat, a.rounds), flush=True)
        for line in overhead_and_shares(fn, args, a.samples):
            print(line, flush=True)
        print(f"  load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()

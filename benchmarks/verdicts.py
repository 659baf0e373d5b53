"""Verdicts on the same program twice: how often noise passes for a difference.

``model`` can reach ``rarely_used`` by name but never calls it (the branch is
not taken), so the nested variant jits a helper that never runs: flat and
nested are the same program. Five comparisons in a row with ``repeat=3``
should all say "no measurable difference" in the first call; any "faster" or
"slower" here is a false difference. Prints each verdict and the tally.

Run: ``PYTHONPATH=$PWD python benchmarks/verdicts.py [-n ROUNDS] [-r REPEAT]``
"""

from __future__ import annotations

import argparse
import collections

import jax.numpy as jnp

import jitmagic


def rarely_used(x):
    return jnp.sin(x) * 2.0


def model(x, debug=False):
    """A few dozen equations of real work; the helper only on a branch never taken."""
    if debug:
        return rarely_used(x)
    y = x
    for i in range(24):
        y = jnp.tanh(y * (1.0 + i / 24)) + x
    return y.sum()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", "--rounds", type=int, default=5)
    p.add_argument("-r", "--repeat", type=int, default=3)
    a = p.parse_args()
    x = jnp.linspace(0.0, 1.0, 256)
    tally: collections.Counter[str] = collections.Counter()
    for i in range(a.rounds):
        c = jitmagic.compare(model, x, repeat=a.repeat, number=20)
        v = c.verdict
        tally[v.kind] += 1
        print(f"round {i + 1}: helpers nested {c.nested.helpers}; first call "
              f"{c.flat.samples['first_call_s']} flat, {c.nested.samples['first_call_s']} "
              f"nested\n  {v.text}")
    print(f"{a.rounds} rounds of repeat={a.repeat}: " +
          ", ".join(f"{n} {kind}" for kind, n in tally.most_common()))


if __name__ == "__main__":
    main()

"""How trace, lower and compile grow with the number of helper calls, flat and nested.

The discussion's example (``f = sum(i * x for i in range(256))``, ``g`` calls ``f``
``calls`` times) swept over 1, 2, 4, 8, 16 calls through the same path as
``%%jitcompare --sweep calls=1,2,4,8,16``. Prints the table and the fitted growth
exponents (seconds ~ calls^k): flat trace should grow about linearly (k near 1),
nested stay near flat (k near 0). Not a test: timings belong here.

    .venv/bin/python benchmarks/sweep.py [-r 3] [--png docs/sweep-chart.png]
"""

from __future__ import annotations

import argparse
import builtins

from jitmagic.cell.prepare import measure_source, parse
from jitmagic.frontends.stderr_progress import StderrProgress
from jitmagic.model.rows import PHASES, VARIANTS
from jitmagic.model.sweep import exponents
from jitmagic.options import Options
from jitmagic.render.bundle import text
from jitmagic.render.charts.phases import to_png
from jitmagic.render.charts.sweep import sweep_figure
from jitmagic.render.format import PHASE_LABELS, fmt_exponent

SOURCE = """\
import jax.numpy as jnp
def f(x):
    return sum(i * x for i in range(256))
def g(x):
    return sum(f(x) for _ in range(calls))
g(jnp.ones(128))
"""
VALUES = [1, 2, 4, 8, 16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-r", "--repeat", type=int, default=3)
    parser.add_argument("--png", default=None, help="also write the sweep chart here")
    args = parser.parse_args()
    plan = parse(SOURCE)
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    options = Options(repeat=args.repeat, number=20, sweep=("calls", VALUES))
    draw = StderrProgress()
    result = measure_source(plan, namespace, options, progress=draw)
    draw.close()
    print(text(result))
    print("\nfitted growth exponents (seconds ~ calls^k):")
    ks = exponents(result)
    for phase in PHASES:
        cells = "   ".join(f"{v} {fmt_exponent('calls', ks[v][phase]):<12}" for v in VARIANTS)
        print(f"  {PHASE_LABELS[phase]:<20} {cells}")
    if args.png:
        with open(args.png, "wb") as f:
            f.write(to_png(sweep_figure(result)))
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()

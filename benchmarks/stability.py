"""How far apart are the medians of repeated runs of the same cell?

Runs the README example several times in one shell and prints, per phase and
variant, the median of each run and their spread (max/min). Asserts nothing.
Run: ``python benchmarks/stability.py [RUNS]``.
"""

from __future__ import annotations

import sys

from cells import README_CELL
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

from jitmagic.model.rows import PHASES
from jitmagic.model.stats.units import fmt_s


def main(runs: int = 5) -> None:
    ip = start_ipython()
    ip.run_line_magic("load_ext", "jitmagic")
    results = []
    for _ in range(runs):
        with capture_output():
            results.append(ip.run_cell_magic("jitcompare", "-o --no-plot", README_CELL))
    print(f"{runs} runs of the README example, -r 3 each: median per run, and max/min")
    for variant in ("flat", "nested"):
        for phase in PHASES:
            medians = [r.variants[variant].median(phase) for r in results]
            shown = "  ".join(fmt_s(m).rjust(8) for m in medians)
            print(f"  {variant:6} {phase:13} {shown}   max/min {max(medians) / min(medians):.2f}")
    ratios = [r.ratio("trace_s") for r in results]
    print(f"  flat/nested trace ratio per run: {', '.join(f'{x:.1f}' for x in ratios)}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)

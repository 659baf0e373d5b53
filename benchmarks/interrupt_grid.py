"""Jupyter's stop at 30 moments of a fresh kernel's first ``%%jitcompare --vmap``.

    .venv/bin/python benchmarks/interrupt_grid.py [--timed 20] [--step 0.1]

The test suite presses stop at the 10 moments ``tests/test_interrupt_safety.py`` names
(as the progress line or an import marker first shows them); this adds ``--timed`` more,
a real SIGINT ``k × --step`` seconds after the cell starts. After each, in the same
kernel, ``import matplotlib.pyplot`` must work, and the magic must run again and draw its
chart. Prints one line a moment and the tally; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))
from nbhelpers import private_jupyter_env  # noqa: E402 (the tests' own helpers)
from test_interrupt_safety import GRID_CELL, MARKER_CELL, MOMENTS, _run  # noqa: E402


def _run_timed(km, kc, code: str, after_s: float) -> dict:
    """``code`` with stop pressed ``after_s`` seconds after it starts, if it still runs
    then (``pressed`` says whether it did)."""
    import threading

    done, pressed = threading.Event(), []

    def press() -> None:
        if not done.wait(after_s):
            km.interrupt_kernel()
            pressed.append(True)

    threading.Thread(target=press, daemon=True).start()
    try:
        out = _run(km, kc, code)
    finally:
        done.set()
    return {**out, "pressed": bool(pressed)}


def one(moment: str | float, home: Path) -> str:
    from jupyter_client.manager import start_new_kernel

    env = private_jupyter_env(home)
    env.pop("MPLBACKEND", None)  # as a kernel has it: matplotlib's inline backend
    km, kc = start_new_kernel(startup_timeout=180, kernel_name="python3", env=env,
                              cwd=str(home))
    try:
        assert _run(km, kc, MARKER_CELL)["reply"]["status"] == "ok"
        t = time.perf_counter()
        if isinstance(moment, str):
            first = _run(km, kc, GRID_CELL, moment)
            if not first["pressed"]:
                return "never reached"
        else:
            first = _run_timed(km, kc, GRID_CELL, moment)
            if not first["pressed"]:
                return "never reached"
        took = time.perf_counter() - t
        reply = first["reply"]
        outcome = "result" if reply["status"] == "ok" else f"{reply['ename']}"
        pyplot = _run(km, kc, "import matplotlib.pyplot as plt\nplt.close(plt.figure())")
        then = _run(km, kc, GRID_CELL.replace("--batch 2", "--batch 2 -o"))
        drawn = any("data:image/png" in m["content"].get("data", {}).get("text/html", "")
                    for m in then["outputs"])
        usable = pyplot["reply"]["status"] == "ok" and then["reply"]["status"] == "ok" and drawn
        return f"{'usable' if usable else 'BROKEN'} (first cell: {outcome}, {took:.1f} s)"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timed", type=int, default=20)
    parser.add_argument("--step", type=float, default=0.1)
    args = parser.parse_args()
    moments: list[str | float] = [*MOMENTS, *(args.step * k for k in range(1, args.timed + 1))]
    said = []
    with tempfile.TemporaryDirectory() as folder:
        for i, moment in enumerate(moments):
            outcome = one(moment, Path(folder) / f"home{i}")
            said.append(outcome)
            label = moment if isinstance(moment, str) else f"{moment:.2f} s after the start"
            print(f"  {label:<45} {outcome}", flush=True)
    usable = sum(s.startswith("usable") for s in said)
    print(f"{usable} of {len(said)} kernels usable after stop; "
          f"{sum(s.startswith('BROKEN') for s in said)} broken, "
          f"{sum(s == 'never reached' for s in said)} moments never reached")


if __name__ == "__main__":
    main()

"""A long session: the magic run 50 times in one shell must not keep growing."""

from __future__ import annotations

import psutil
import pytest
from support import SMALL_CELL

pytestmark = pytest.mark.slow  # 50 runs of the magic

RUNS, WARMUP, LIMIT_MB = 50, 5, 50


def test_fifty_runs_keep_memory_flat(run_magic, capsys):
    process = psutil.Process()
    rss = []
    for _ in range(RUNS):
        run_magic("-r 1 -n 2 --no-plot", SMALL_CELL)
        rss.append(process.memory_info().rss / 2**20)
    growth = max(rss[WARMUP:]) - rss[WARMUP - 1]
    with capsys.disabled():
        print(f"\nsoak: RSS {rss[WARMUP - 1]:.0f} MB after {WARMUP} runs, "
              f"at most {max(rss[WARMUP:]):.0f} MB over the next {RUNS - WARMUP} "
              f"(growth {growth:+.1f} MB)")
    assert growth < LIMIT_MB

"""``python -m jitmagic demo``: the comparison without a notebook."""

from __future__ import annotations

import argparse
import sys

from . import demo
from .engine import compare


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jitmagic", description=__doc__)
    parser.add_argument("target", choices=["demo"], help="what to compare")
    parser.add_argument("-r", "--repeat", type=int, default=3, help="cold runs per variant")
    args = parser.parse_args(argv)
    print(compare(demo.g, demo.x, repeat=args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``python -m jitmagic diff OLD.json NEW.json``: what changed between two reports.

Prints the diff (:mod:`jitmagic.model.diff`) and, with ``--fail-on-slower [RATIO]``,
exits 1 when any stage of NEW is significantly slower than OLD, by the one rule, by
at least RATIO (default 1.2): a CI job's regression check.
"""

from __future__ import annotations

import argparse
import sys

from ..model.comparison import ReportSchemaError
from ..model.diff import FAIL_RATIO, Diff, diff
from ..render.diff import said, text

EXIT_CODES = """\
exit status:
  0  compared (and, with --fail-on-slower, nothing regressed)
  1  --fail-on-slower: a stage of NEW is significantly slower than OLD by at least RATIO
  2  usage: bad options, a missing file, or a file that is not a comparison report"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m jitmagic diff", description=__doc__,
                                     epilog=EXIT_CODES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", metavar="OLD.json", help="the baseline report (--save)")
    parser.add_argument("new", metavar="NEW.json", help="the report to judge against it")
    parser.add_argument("--force", action="store_true",
                        help="compare reports of differently named entries")
    parser.add_argument("--fail-on-slower", nargs="?", type=_ratio, const=FAIL_RATIO,
                        default=None, metavar="RATIO",
                        help="exit 1 when a stage of NEW is significantly slower than OLD by "
                             f"at least RATIO (default {FAIL_RATIO})")
    return parser


def _ratio(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a ratio such as 1.2, not {text!r}") from None
    if not value >= 1:
        raise argparse.ArgumentTypeError(f"a slowdown ratio is at least 1, not {text}")
    return value


def _bare_flag(argv: list[str]) -> list[str]:
    """``argv`` with the default RATIO written after a bare ``--fail-on-slower`` that a
    path follows (``diff --fail-on-slower OLD.json NEW.json``), which argparse would
    otherwise read as the ratio."""
    out: list[str] = []
    for i, word in enumerate(argv):
        out.append(word)
        after = argv[i + 1] if i + 1 < len(argv) else "-"
        if word == "--fail-on-slower" and not after.startswith("-") and not _number(after):
            out.append(str(FAIL_RATIO))
    return out


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def main(argv: list[str]) -> int:
    """Compare the two reports; the exit status of :data:`EXIT_CODES`."""
    args = build_parser().parse_args(_bare_flag(argv))  # argparse exits 2 on bad usage
    try:
        d = diff(args.old, args.new, force=args.force)
    except (OSError, ReportSchemaError) as exc:
        print(f"jitmagic diff: {exc}", file=sys.stderr)
        return 2
    print(text(d))
    return verdict(d, args.fail_on_slower)


def verdict(d: Diff, ratio: float | None) -> int:
    """1 (and one line per regression on stderr) when ``ratio`` is given and a stage of
    NEW is slower by at least that much; else 0."""
    if ratio is None:
        return 0
    slower = d.regressions(ratio)
    for s in slower:
        print(f"jitmagic diff: regression: {s.variant} {s.label}: NEW {said(s)} "
              f"(at least {ratio:g}× fails)", file=sys.stderr)
    return 1 if slower else 0

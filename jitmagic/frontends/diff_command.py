"""``python -m jitmagic diff OLD.json NEW.json``: what changed between two reports.

Prints the diff (:mod:`jitmagic.model.diff`): the timings, then the program's structure.
With ``--fail-on-slower [RATIO]`` it exits 1 when any stage of NEW is significantly
slower than OLD, by the one rule, by at least RATIO (default 1.2); with
``--fail-on-larger RATIO``, when any structure figure of NEW (jaxpr equations, StableHLO
bytes, nested jit calls, ...) is at least RATIO times OLD's, exactly: a CI job's checks.
A NEW that measured nothing (a PARTIAL report stopped before its first run) fails either
gate. A reader that closes the pipe early (``| head``) ends the printing quietly; the
exit status is the same.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from ..model.diff import FAIL_RATIO, Diff, gate_ratio
from ..model.ledger import LedgerDiff
from ..model.reports.storage import diff_any
from ..model.saved.schema import ReportSchemaError
from ..render.diff import gate_failures, gate_notes, text
from ..render.ledger import diff_text as ledger_diff_text
from .script.process import show
from .statuses import MEASURED, REGRESSED, USAGE

EXIT_CODES = """\
exit status:
  0  compared (and, with --fail-on-slower or --fail-on-larger, nothing failed them)
  1  --fail-on-slower: a stage of NEW is significantly slower than OLD by at least RATIO;
     --fail-on-larger: a structure figure of NEW is at least RATIO times OLD's;
     either: NEW measured nothing (PARTIAL), so there is nothing to judge
  2  usage: bad options, a missing file, or a file that is not a comparison report"""


#: The options that take a gate's RATIO.
GATES = ("--fail-on-slower", "--fail-on-larger")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m jitmagic diff", description=__doc__,
                                     epilog=EXIT_CODES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", metavar="OLD.json", help="the baseline report (--save)")
    parser.add_argument("new", metavar="NEW.json", help="the report to judge against it")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="show every stage's and figure's row; by default the verdict "
                             "comes first and alone")
    parser.add_argument("--force", action="store_true",
                        help="compare reports of differently named entries")
    parser.add_argument("--fail-on-slower", nargs="?", type=_ratio("--fail-on-slower"),
                        const=FAIL_RATIO, default=None, metavar="RATIO",
                        help="exit 1 when a stage of NEW is significantly slower than OLD by "
                             f"at least RATIO (default {FAIL_RATIO})")
    parser.add_argument("--fail-on-larger", type=_ratio("--fail-on-larger"), default=None,
                        metavar="RATIO",
                        help="exit 1 when a structure figure of NEW (jaxpr equations, "
                             "StableHLO bytes, nested jit calls, ...) is at least RATIO "
                             "times OLD's, e.g. 1.3")
    return parser


def _ratio(option: str) -> Callable[[str], float]:
    """argparse's reader of ``option``'s RATIO (a bad one: status 2, saying why)."""
    def read(text: str) -> float:
        try:
            return gate_ratio(text, option)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return read


def _bare_flag(argv: list[str]) -> list[str]:
    """``argv`` with each gate's RATIO joined to it, and a bare ``--fail-on-slower`` before a path
    given its default."""
    out: list[str] = []
    words = iter(enumerate(argv))
    for i, word in words:
        after = argv[i + 1] if i + 1 < len(argv) else "-"
        if word in GATES and _number(after):
            out.append(f"{word}={after}")
            next(words)
            continue
        out.append(word)
        if word == "--fail-on-slower" and (after.endswith(".json") or os.path.exists(after)):
            out.append(str(FAIL_RATIO))
    return out


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(_bare_flag(argv))  # argparse exits 2 on bad usage
    try:
        d = diff_any(args.old, args.new, force=args.force)
    except (OSError, ReportSchemaError) as exc:
        print(f"jitmagic diff: {exc}", file=sys.stderr)
        return USAGE
    if isinstance(d, LedgerDiff):  # two ledgers: a gate fails where NEW recompiles more
        show([ledger_diff_text(d)])
        gated = args.fail_on_slower is not None or args.fail_on_larger is not None
        return REGRESSED if gated and d.more_again else MEASURED
    show([text(d, args.verbose)])
    return verdict(d, args.fail_on_slower, args.fail_on_larger)


def verdict(d: Diff, slower: float | None, larger: float | None = None) -> int:
    """1 where a given gate fails (each failure on stderr), else 0."""
    failed = gate_failures(d, slower, larger)
    for line in failed + gate_notes(d, slower, larger):
        print(f"jitmagic diff: {line}", file=sys.stderr)
    if not failed and (slower is not None or larger is not None) and not d.compared_anything:
        why = f" (OLD is PARTIAL: {d.old_stopped})" if d.old_stopped else ""
        print(f"jitmagic diff: {d.undecided()}{why}: the gates had nothing to judge",
              file=sys.stderr)
    return REGRESSED if failed else MEASURED

"""``python -m jitmagic FILE.py --jax 0.9.0,0.10.2`` (``--bisect 0.9.0..0.10.2``): the cell under
each JAX release, each in a fresh child in that release's environment; a release that cannot be
installed, runs past ``--timeout`` (killed :data:`GRACE_S` after) or dies is a finding of that
release. The user's own Python and JAX are never changed (``current`` runs in a child too)."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import shlex
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from ...errors import InputError
from ...measure.children import Entry, run_child
from ...measure.environments import (
    CURRENT,
    OLDEST,
    cache_root,
    environment,
    folder_of,
    in_order,
    installed_version,
    ready,
    served,
    too_old,
)
from ...model.comparison import Comparison
from ...model.progress import Finished, TimedOut
from ...model.reports.releases import Bisection, NotInstalled, ReleaseResult, Releases, bisect
from ...model.saved import files
from ...options.table import MAGIC_ONLY
from ...render.releases import html_document, text
from ...render.releases.trace import trace_json
from ..saving import check_endings, checked_path, write_report, wrote
from ..statuses import MEASURED, PARTIAL
from .loading import check_shape, read_source, script_path

#: What the line form says to ``--jax``.
LINE_FORM = ("%jitcompare --jax measures objects of earlier cells, which another release's "
             "Python does not have: put the imports, the function and its call in one cell, "
             "`%%jitcompare --jax 0.9.0,current`, or in FILE.py for `python -m jitmagic "
             "FILE.py --jax 0.9.0,current`")
#: Seconds a child gets past ``--timeout`` (its start, importing JAX) before it is killed.
GRACE_S = 5.0
#: The command's options a side-by-side run of releases cannot take, and why.
REFUSED = {"processes": "each release is measured in one fresh process",
           "target": "a release's environment holds no libtpu",
           "sweep": "a sweep would be measured once per release: sweep one release at a time",
           "baseline": "the releases are each other's baseline",
           "save": "the side-by-side report is written by --html and --trace: --save one "
                   "release at a time"}


def refuse(args: argparse.Namespace) -> None:
    """``InputError`` for an option ``--jax`` cannot take, before anything is installed."""
    for name, why in REFUSED.items():
        if getattr(args, name, None) not in (None, False):
            raise InputError(f"--{'bisect' if args.bisect else 'jax'} cannot take --{name}: "
                             f"{why}; leave it out")
    if args.jax and args.bisect:
        raise InputError("--bisect chooses the releases it measures: leave --jax out")
    if old := [r for r in args.jax or args.bisect or () if too_old(r)]:
        raise InputError(f"jitmagic measures under JAX {OLDEST} and later, not {old[0]}: "
                         f"name {OLDEST} or a later release")
    if {CURRENT, installed_version()} <= set(args.jax or ()):
        raise InputError(f"--jax names your own JAX twice: {installed_version()} is `current` "
                         "here; name it once")


def measure(args: argparse.Namespace, argv: list[str], entry: Entry) -> Releases | Bisection:
    """The cell of ``argv`` (the command's arguments) under each release of ``args.jax``,
    or those ``--bisect`` halves to, each measured by ``entry`` (the command's
    measurement) in a child."""
    refuse(args)
    reports = {"--html": args.html, "--trace": getattr(args, "trace", None)}
    check_endings(reports)
    args.html, args.trace = (checked_path(path, option) for option, path in reports.items())
    if args.file != "demo":  # said once, here, rather than by every release's child
        path = script_path(args.file)
        check_shape(read_source(path), str(path.resolve()))
    walked = _walked(*args.bisect) if args.bisect else args.jax
    done: list[ReleaseResult] = []

    def one(release: str) -> ReleaseResult:
        done.append(_one(release, argv, args, entry))
        return done[-1]

    try:
        if args.bisect:
            return bisect(walked, one, str(cache_root()))
        return Releases(tuple(one(release) for release in walked), str(cache_root()))
    except KeyboardInterrupt:  # what was measured is shown, and the command ends partial
        return Releases(tuple(sorted(done, key=lambda x: walked.index(x.release)
                                     if x.release in walked else len(walked))),
                        str(cache_root()), stopped=True)


def _walked(low: str, high: str) -> list[str]:
    """The served releases from ``low`` to ``high``; ``InputError`` where they cannot be
    listed, or where either end is not among them."""
    if not in_order(low, high):
        raise InputError(f"--bisect {low}..{high}: name the older release first: "
                         f"--bisect {high}..{low}")
    walked = served(low, high)
    if isinstance(walked, str):
        raise InputError(f"--bisect could not list the releases the package index serves "
                         f"({walked}): name them with --jax instead")
    ends = {low, installed_version() if high == CURRENT else high}
    if len(walked) < 2 or not ends <= {walked[0], walked[-1]}:
        raise InputError(f"--bisect {low}..{high}: the package index serves jax and jaxlib "
                         f"{', '.join(walked) or 'none'} from {low} to {high}: give two "
                         "of them, the older first")
    return walked


def _one(release: str, argv: list[str], args: argparse.Namespace, entry: Entry
         ) -> ReleaseResult:
    """One release: its environment (made first where it is not in the cache), then the
    measurement in a child there."""
    if not ready(release):
        _say(args, f"jax {release}: installing jax and jaxlib {release} into "
                   f"{folder_of(release)} (once; later runs reuse it)")
    env = environment(release)
    if isinstance(env, NotInstalled):
        return ReleaseResult(release, env)
    if env.folder is None:  # the user's own Python, named by its JAX
        release = f"{installed_version() or release} (yours)"
    _say(args, f"jax {release}: measuring in a fresh process of {env.folder or sys.executable}")
    limit = None if args.timeout is None else args.timeout + GRACE_S
    end = run_child(entry, {"argv": argv}, python=env.python, timeout_s=limit)
    if isinstance(end, Finished):
        measured = Comparison.from_dict(end.result)
        return ReleaseResult(release, measured, measured.env.get("jax"), env.folder)
    if isinstance(end, TimedOut):
        end = dataclasses.replace(end, seconds=float(args.timeout))
    return ReleaseResult(release, end, None, env.folder)


def of_cell(cell: str, line: str, args: argparse.Namespace, entry: Entry
            ) -> Releases | Bisection:
    """``%%jitcompare --jax ...``: the cell, written to a file of a temporary folder
    (removed after), measured as the command measures a file, with the magic's options
    (its own, ``-o`` and ``--no-plot``, left out). The cell must hold what it needs (its
    imports, its function, its arguments): another release's Python has none of the
    kernel's objects, and a name from an earlier cell is that release's finding
    (``NameError``)."""
    with tempfile.TemporaryDirectory(prefix="jitmagic-cell-") as folder:
        path = Path(folder, "cell.py")
        path.write_text(cell, encoding="utf-8")
        args.file = str(path)
        options = [word for word in shlex.split(line) if word not in MAGIC_ONLY]
        return measure(args, [str(path), *options], entry)


def show(args: argparse.Namespace, argv: list[str], entry: Entry) -> int:
    """Measure, then :func:`present`."""
    return present(measure(args, argv, entry), args)


def present(found: Releases | Bisection, args: argparse.Namespace) -> int:
    """Print the side-by-side report, then write ``--html`` (the report and its chart) and
    ``--trace``, each saying so; :data:`MEASURED`, or :data:`PARTIAL` where a release gave no
    comparison (a finding) or one stopped early."""
    print(text(found, verbose=args.verbose))
    made: dict[str, Callable[[Releases | Bisection], str]] = {"--html": html_document,
                                                              "--trace": trace_json}
    for option, path in (("--html", args.html), ("--trace", args.trace)):
        if path:
            write_report(functools.partial(files.write_text, text=made[option](found)), path,
                         option)
            print(wrote(option, path))
    results = found.measured.results if isinstance(found, Bisection) else found.results
    whole = not (isinstance(found, Releases) and found.stopped) and all(
        x.measured and not x.measured.stopped_anywhere for x in results)
    return MEASURED if whole else PARTIAL


def _say(args: argparse.Namespace, line: str) -> None:
    if not args.quiet:
        print(f"jitmagic: {line}", file=sys.stderr, flush=True)

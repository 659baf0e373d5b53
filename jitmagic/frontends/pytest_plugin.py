"""jitmagic's pytest plugin, after pytest-benchmark's fashion: the ``jitcompare`` fixture is
``jitmagic.compare``, its reports saved (``--jitmagic-save``), compared with a baseline
(``--jitmagic-compare``) and gated (``--jitmagic-fail-on-slower``/``-larger``), or all dropped
(``--jitmagic-disable``). Nothing imports jax until a test calls the fixture."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ..errors import CannotWriteError
from ..model.comparison import Comparison
from ..model.diff import FAIL_RATIO, Diff, diff, gate_ratio
from ..model.reports.storage import as_comparison, save
from ..model.saved.files import check_target
from ..model.saved.schema import ReportSchemaError
from ..render.diff import gate_failures

#: The longest report file name; the hash's hex digits (a clash by chance is refused).
MAX_NAME, HASH_DIGITS = 150, 10
READABLE = MAX_NAME - 1 - HASH_DIGITS - 4 - len(".json")


def measure(fn: Callable, /, *args: Any, **options: Any) -> Comparison:
    """``jitmagic.compare`` without progress (what the fixture calls; tests replace it)."""
    from .api import compare

    options.setdefault("progress", False)
    return compare(fn, *args, **options)


def report_name(nodeid: str, index: int = 0) -> str:
    """A test's report file: ``<readable id>-<hash of the id>[-<call>].json``."""
    digest = hashlib.sha256(nodeid.encode("utf-8", "surrogatepass")).hexdigest()
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", nodeid).strip("_.")[:READABLE] or "test"
    return f"{readable}-{digest[:HASH_DIGITS]}" \
           f"{f'-{index + 1}' if index else ''}.json"


def _who(nodeid: str, index: int) -> str:
    """``test_a.py::test_b`` or ``test_a.py::test_b (its jitcompare call 2)``."""
    return f"{nodeid} (its jitcompare call {index + 1})" if index else nodeid


@dataclass
class BaselineCheck:
    """One report against its baseline (``diff`` None: none compared)."""

    test: str
    name: str
    diff: Diff | None = None
    problem: str | None = None
    reported: bool = False
    kept: bool = False
    reports: tuple[Comparison, Comparison] | None = field(default=None, repr=False)


@dataclass
class Reports:
    """What the plugin keeps for a session, under one lock (tests may use threads)."""

    save_dir: Path | None
    compare_dir: Path | None
    slower_ratio: float | None
    larger_ratio: float | None = None
    outcomes: list[BaselineCheck] = field(default_factory=list)
    #: Each name saved (or being saved) in this session: the test and call that saved it.
    written: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: How many reports were saved.
    saved: int = 0
    #: ``--jitmagic-disable``: one round per call; the options it turned off, as given.
    disabled: tuple[str, ...] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, nodeid: str, index: int, c: Comparison) -> None:
        """Compare ``c`` with its baseline, then save it (not over a baseline it fails)."""
        name = report_name(nodeid, index)
        if self.save_dir is not None:
            with self.lock:
                if (earlier := self.written.get(name)) is not None:
                    raise CannotWriteError(_clash(self.save_dir / name, earlier,
                                                  (nodeid, index)))
                self.written[name] = (nodeid, index)
        if self.compare_dir is not None:
            outcome = compared(nodeid, name, c, self.compare_dir)
            # both options one folder: a baseline is replaced as compared, unless it fails
            outcome.kept = self.save_dir is not None and _same(self.save_dir, self.compare_dir) \
                and bool(self.failures(outcome))
            with self.lock:
                self.outcomes.append(outcome)
            if outcome.kept:
                return
        if self.save_dir is not None:
            try:
                save(c, self.save_dir / name)
            except (OSError, ValueError) as exc:
                raise CannotWriteError(f"jitmagic: cannot save the report of "
                                       f"{_who(nodeid, index)}: {exc}") from None
            with self.lock:
                self.saved += 1

    def failures(self, o: BaselineCheck) -> list[str]:
        return [] if o.diff is None else \
            gate_failures(o.diff, self.slower_ratio, self.larger_ratio)

    def unreported(self, nodeid: str) -> str | None:
        """The message that fails test ``nodeid`` (None: nothing failed), said once."""
        lines, against, kept = [], [], False
        with self.lock:
            mine = [o for o in self.outcomes if o.test == nodeid and not o.reported]
            for o in mine:
                o.reported = True
        for o in mine:
            if failed := self.failures(o):
                lines += [f"jitmagic: {line}" for line in failed]
                against.append(str(self.compare_dir / o.name if self.compare_dir else o.name))
                kept = kept or o.kept
        if not lines:
            return None
        return "\n".join([*lines, f"(this test's report against its baseline "
                                   f"{', '.join(against)})", *([KEPT.format(self.save_dir)]
                                                               if kept else [])])

    def handed(self) -> str:
        """What a pytest-xdist worker hands the controller, as JSON."""
        with self.lock:
            outcomes = [{"test": o.test, "name": o.name, "problem": o.problem, "kept": o.kept,
                         "reports": None if o.reports is None
                         else [r.to_dict() for r in o.reports]} for o in self.outcomes]
            return json.dumps({"saved": self.saved, "outcomes": outcomes})

    def take(self, handed: str) -> None:
        """A worker's :meth:`handed` added to the controller's session, each pair diffed again."""
        data = json.loads(handed)
        taken = []
        for o in data["outcomes"]:
            pair = None if o["reports"] is None else tuple(
                Comparison.from_dict(r) for r in o["reports"])
            taken.append(BaselineCheck(o["test"], o["name"], None if pair is None else diff(*pair),
                                 o["problem"], reported=True, kept=o["kept"]))
        with self.lock:
            self.saved += data["saved"]
            self.outcomes += taken


#: Said under a gate failure where both options name one folder: the baseline stays.
KEPT = ("(its baseline is kept: a report that fails its gate is not saved over it in "
        "{0}, so a second run fails again; to make this report the baseline, run once "
        "with --jitmagic-save={0} alone)")


def _clash(path: Path, earlier: tuple[str, int], now: tuple[str, int]) -> str:
    again = " (the same test run twice in one session: --keep-duplicates, or a plugin " \
            "that reruns tests)" if earlier == now else ""
    return (f"jitmagic: refusing to save the report of {_who(*now)} as {path}: the report "
            f"of {_who(*earlier)} was saved under that name in this session{again}, and "
            "one would overwrite the other")


def compared(test: str, name: str, c: Comparison, folder: Path) -> BaselineCheck:
    """``c`` against ``folder / name``, or why it is not compared."""
    baseline = folder / name
    if not baseline.exists():
        return BaselineCheck(test, name, problem=f"no baseline {baseline}")
    try:
        old_report = as_comparison(baseline)
        if old_report.entry != c.entry:
            return BaselineCheck(test, name, problem=(
                f"the baseline {baseline} measured `{old_report.entry}`, this test "
                f"`{c.entry}`: another function, so not compared (save the baseline again "
                "if it was renamed)"))
        return BaselineCheck(test, name, diff(old_report, c), reports=(old_report, c))
    except (OSError, ReportSchemaError) as exc:
        return BaselineCheck(test, name, problem=str(exc))


KEY = pytest.StashKey[Reports]()
#: The options of the two gates.
GATES = ("--jitmagic-fail-on-slower", "--jitmagic-fail-on-larger")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jitmagic", "jitmagic: compile-time reports")
    group.addoption("--jitmagic-save", metavar="DIR", default=None,
                    help="save each jitcompare report as DIR/<test id>.json")
    group.addoption("--jitmagic-compare", metavar="DIR", default=None,
                    help="compare each jitcompare report with DIR/<test id>.json and print "
                         "a table at the end")
    group.addoption("--jitmagic-fail-on-slower", metavar="RATIO", nargs="?",
                    const=str(FAIL_RATIO), default=None,
                    help="with --jitmagic-compare, fail a test when a stage of its report "
                         "is significantly slower by at least RATIO (default "
                         f"{FAIL_RATIO}); write --jitmagic-fail-on-slower=RATIO before the "
                         "test paths")
    group.addoption("--jitmagic-disable", action="store_true", default=False,
                    help="measure each jitcompare call once (repeat=1, number=1) and "
                         "save, compare and gate nothing, as --benchmark-disable does: the "
                         "tests run quickly, with no timing claims")
    group.addoption("--jitmagic-fail-on-larger", metavar="RATIO", default=None,
                    help="with --jitmagic-compare, fail a test when a structure figure of "
                         "its report (jaxpr equations, StableHLO bytes, nested jit calls, "
                         "...) is at least RATIO times the baseline's, e.g. 1.3")


def pytest_configure(config: pytest.Config) -> None:
    """Read the options; a bad RATIO or folder is a usage error before any test runs."""
    if config.getoption("jitmagic_disable"):
        ignored = tuple(o for o in ("--jitmagic-save", "--jitmagic-compare", *GATES)
                        if config.getoption(o[2:].replace("-", "_")) is not None)
        config.stash[KEY] = Reports(None, None, None, disabled=ignored)
        return
    slower, larger = (_gate(config, option) for option in GATES)
    save_dir, compare_dir = _folder(config, "jitmagic_save"), _folder(config, "jitmagic_compare")
    given = [o for o, ratio in zip(GATES, (slower, larger), strict=True) if ratio is not None]
    if given and compare_dir is None:  # a gate that could never fail
        raise pytest.UsageError(
            f"{' and '.join(given)} judge each report against a baseline's: give the "
            "baseline's folder too, e.g. --jitmagic-compare=.jitmagic/main (saved before "
            "with --jitmagic-save=.jitmagic/main)")
    if compare_dir is not None:
        _check_compare(compare_dir, save_dir)
    if save_dir is not None:
        _check_save(save_dir)
    config.stash[KEY] = Reports(save_dir, compare_dir, slower, larger)


def _check_compare(folder: Path, save_dir: Path | None) -> None:
    """``pytest.UsageError`` unless ``folder`` can be read (or is also the save folder)."""
    if not folder.exists():
        if save_dir is not None and _same(folder, save_dir):
            return
        raise pytest.UsageError(
            f"--jitmagic-compare={folder}: there is no such folder, so no test would have a "
            f"baseline; save one first with --jitmagic-save={folder} (or give both options that "
            "folder, to compare with what is there and then save over it)")
    if not folder.is_dir():
        raise pytest.UsageError(f"--jitmagic-compare={folder}: it is a file, not a folder; "
                                "give the folder --jitmagic-save wrote the baseline's reports to")
    try:
        os.listdir(folder)
    except OSError as exc:
        raise pytest.UsageError(f"--jitmagic-compare={folder}: cannot read the folder "
                                f"({exc.strerror or exc})") from None


def _check_save(folder: Path) -> None:
    """``pytest.UsageError`` unless a report can be written into ``folder``."""
    if folder.exists() and not folder.is_dir():
        raise pytest.UsageError(f"--jitmagic-save={folder}: it is a file, not a folder; give a "
                                "folder (made if it does not exist), e.g. .jitmagic/main")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        check_target(folder / ".jitmagic-check.json")
        with tempfile.TemporaryFile(dir=folder, prefix=".jitmagic-"):
            pass
    except ValueError as exc:
        raise pytest.UsageError(f"--jitmagic-save={folder}: {exc}") from None
    except OSError as exc:
        raise pytest.UsageError(f"--jitmagic-save={folder}: cannot write a report there "
                                f"({exc.strerror or exc}); give a folder this process "
                                "can write to") from None


def _same(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _gate(config: pytest.Config, option: str) -> float | None:
    value = config.getoption(option.lstrip("-").replace("-", "_"))
    if value is None:
        return None
    try:
        return gate_ratio(value, option)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def _folder(config: pytest.Config, name: str) -> Path | None:
    """The folder an option names, absolute (a test may change the working folder)."""
    value = config.getoption(name)
    return None if value is None else Path(os.path.expanduser(value)).absolute()


@pytest.fixture
def jitcompare(request: pytest.FixtureRequest) -> Callable[..., Comparison]:
    """``jitmagic.compare`` with no progress, its report saved or compared as asked."""
    session = request.config.stash[KEY]
    calls = [0]

    def run(fn: Callable, /, *args: Any, **options: Any) -> Comparison:
        with session.lock:  # each call its own index, from whichever thread it came
            index = calls[0]
            calls[0] += 1
        if session.disabled is not None:
            options = {**options, "repeat": 1, "number": 1}
        c = measure(fn, *args, **options)
        session.record(request.node.nodeid, index, c)
        return c

    return run


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A gate failure fails the test whose report it is, unless it failed already."""
    report = yield
    if call.when == "setup" or KEY not in item.config.stash:
        return report
    message = item.config.stash[KEY].unreported(item.nodeid)
    if message is not None and report.passed:
        report.outcome = "failed"
        report.longrepr = message
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On a pytest-xdist worker: hand the controller what this worker saved and compared."""
    handed = getattr(session.config, "workeroutput", None)
    state = session.config.stash.get(KEY, None)
    if handed is not None and state is not None:
        handed["jitmagic"] = state.handed()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """On pytest-xdist's controller: a worker's reports, counted with the others."""
    handed = getattr(node, "workeroutput", {}).get("jitmagic")
    state = node.config.stash.get(KEY, None)
    if handed is not None and state is not None:
        state.take(handed)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int,
                            config: pytest.Config) -> None:
    """The table of every report against its baseline, then where the reports were saved."""
    from ..render.diff import summary_lines

    state = config.stash.get(KEY, None)
    if state is None:
        return
    if state.disabled is not None:
        off = f" ({', '.join(state.disabled)} not used)" if state.disabled else ""
        terminalreporter.write_sep("-", "jitmagic: disabled (--jitmagic-disable): each "
                                        f"jitcompare call measured one round; nothing saved, "
                                        f"compared or gated{off}")
        return
    if state.compare_dir is not None:
        terminalreporter.section("jitmagic: against " + str(state.compare_dir))
        for line in summary_lines(state.outcomes, state.slower_ratio, state.larger_ratio):
            terminalreporter.write_line(line)
    if state.save_dir is not None:
        for o in (o for o in state.outcomes if o.kept):  # the tests have ended
            terminalreporter.write_line(f"KEPT {o.test}: its baseline {state.save_dir / o.name} "
                                        "is kept, not replaced by a report that failed it")
        n = state.saved
        terminalreporter.write_sep("-", f"jitmagic: saved {n} report{'s' * (n != 1)} in "
                                        f"{state.save_dir}")

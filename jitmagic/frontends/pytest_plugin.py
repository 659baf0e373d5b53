"""jitmagic's pytest plugin: compile-time regression tests, after pytest-benchmark's fashion.

Installed with jitmagic (the ``pytest11`` entry point ``jitmagic``), or loaded with
``-p jitmagic.frontends.pytest_plugin``. A test asks for the ``jitcompare`` fixture and calls it
as ``jitmagic.compare``::

    def test_model_compiles_fast(jitcompare):
        c = jitcompare(model, x, repeat=3)
        assert c.flat.ok

``--jitmagic-save=DIR`` writes each test's report to ``DIR/<node id>.json``;
``--jitmagic-compare=DIR`` diffs each against the one saved there and prints a table at
the end of the session. Two gates fail the test that made the report (pytest counts it
failed, with a message naming what and by how much): ``--jitmagic-fail-on-slower[=RATIO]``
(default 1.2) when a stage got significantly slower, by the one rule, by at least RATIO;
``--jitmagic-fail-on-larger=RATIO`` when a structure figure (jaxpr equations, StableHLO
bytes, nested jit calls, ...) is at least RATIO times the baseline's. Nothing imports jax
until a test calls the fixture.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ..model.comparison import Comparison, ReportSchemaError
from ..model.diff import FAIL_RATIO, Diff, diff, gate_ratio
from ..model.saved.storage import save
from ..render.diff import gate_failures

#: The longest report file name written (a parametrised id can be very long).
MAX_NAME = 150


def measure(fn: Callable, /, *args: Any, **options: Any) -> Comparison:
    """``jitmagic.compare`` without progress (what the fixture calls; tests replace it)."""
    from .api import compare

    options.setdefault("progress", False)
    return compare(fn, *args, **options)


def report_name(nodeid: str, index: int = 0) -> str:
    """The file a test's report is saved as: its node id with every character other
    than letters, digits, ``.``, ``_`` and ``-`` made ``_`` (a second call of the fixture
    in the same test gets ``-2``)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", nodeid).strip("_.")[:MAX_NAME] or "test"
    return f"{name}{f'-{index + 1}' if index else ''}.json"


@dataclass
class Outcome:
    """One report of the session against its baseline (``diff`` None: none to compare);
    ``reported`` once its gate failures have failed its test."""

    test: str
    name: str
    diff: Diff | None = None
    problem: str | None = None
    reported: bool = False


@dataclass
class Reports:
    """What the plugin keeps for a session: the options and every report's outcome."""

    save_dir: Path | None
    compare_dir: Path | None
    slower_ratio: float | None
    larger_ratio: float | None = None
    outcomes: list[Outcome] = field(default_factory=list)

    def record(self, nodeid: str, index: int, c: Comparison) -> None:
        """Save ``c`` and compare it with its baseline, as the options ask."""
        name = report_name(nodeid, index)
        if self.save_dir is not None:
            self.save_dir.mkdir(parents=True, exist_ok=True)
            save(c, self.save_dir / name)
        if self.compare_dir is not None:
            self.outcomes.append(compared(nodeid, name, c, self.compare_dir / name))

    def failures(self, o: Outcome) -> list[str]:
        """What fails the gates in ``o``, a line each (none without a baseline)."""
        if o.diff is None:
            return []
        return gate_failures(o.diff, self.slower_ratio, self.larger_ratio)

    def unreported(self, nodeid: str) -> str | None:
        """The message that fails test ``nodeid``: its reports' gate failures not yet
        reported (then marked reported), a line each (the first is what pytest's short
        summary shows), then the baselines compared with; None where nothing failed."""
        lines, against = [], []
        for o in self.outcomes:
            if o.test != nodeid or o.reported:
                continue
            o.reported = True
            if failed := self.failures(o):
                lines += [f"jitmagic: {line}" for line in failed]
                against.append(str(self.compare_dir / o.name if self.compare_dir else o.name))
        if not lines:
            return None
        return "\n".join([*lines, f"(this test's report against its baseline "
                                   f"{', '.join(against)})"])


def compared(test: str, name: str, c: Comparison, baseline: Path) -> Outcome:
    """``c`` against the report at ``baseline``, or why it could not be compared."""
    if not baseline.exists():
        return Outcome(test, name, problem=f"no baseline {baseline}")
    try:
        return Outcome(test, name, diff(baseline, c, force=True))
    except (OSError, ReportSchemaError) as exc:
        return Outcome(test, name, problem=str(exc))


KEY = pytest.StashKey[Reports]()


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
    group.addoption("--jitmagic-fail-on-larger", metavar="RATIO", default=None,
                    help="with --jitmagic-compare, fail a test when a structure figure of "
                         "its report (jaxpr equations, StableHLO bytes, nested jit calls, "
                         "...) is at least RATIO times the baseline's, e.g. 1.3")


def pytest_configure(config: pytest.Config) -> None:
    """Read the options; a bad RATIO is a usage error (pytest exits 4) saying what to
    write, before any test runs."""
    config.stash[KEY] = Reports(_folder(config, "jitmagic_save"),
                                _folder(config, "jitmagic_compare"),
                                _gate(config, "--jitmagic-fail-on-slower"),
                                _gate(config, "--jitmagic-fail-on-larger"))


def _gate(config: pytest.Config, option: str) -> float | None:
    """The RATIO given to ``option`` (None if not given), checked by
    :func:`~jitmagic.model.diff.gate_ratio`."""
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
    """``jitcompare(fn, *args, **options)``: ``jitmagic.compare`` (no progress drawn),
    its report saved or compared as the ``--jitmagic-*`` options say."""
    session = request.config.stash[KEY]
    calls = [0]

    def run(fn: Callable, /, *args: Any, **options: Any) -> Comparison:
        c = measure(fn, *args, **options)
        session.record(request.node.nodeid, calls[0], c)
        calls[0] += 1
        return c

    return run


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A gate failure (``--jitmagic-fail-on-slower``, ``--jitmagic-fail-on-larger``) fails
    the test whose report it is, as pytest counts failures ("1 failed"), with a message
    naming each stage or figure, NEW's and OLD's values and the ratio.

    Judged when the test's call ends (a report made in teardown: when teardown ends,
    which pytest counts an error); a test that failed or was skipped already keeps its
    own outcome, and its reports are not judged again later."""
    report = yield
    if call.when == "setup" or KEY not in item.config.stash:
        return report
    message = item.config.stash[KEY].unreported(item.nodeid)
    if message is not None and report.passed:
        report.outcome = "failed"
        report.longrepr = message
    return report


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int,
                            config: pytest.Config) -> None:
    """The table of every report against its baseline, and the regressions that fail."""
    from ..render.diff import summary_lines

    state = config.stash[KEY]
    if state.compare_dir is None:
        return
    terminalreporter.section("jitmagic: against " + str(state.compare_dir))
    for line in summary_lines(state.outcomes, state.slower_ratio, state.larger_ratio):
        terminalreporter.write_line(line)

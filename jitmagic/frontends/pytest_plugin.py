"""jitmagic's pytest plugin: compile-time regression tests, after pytest-benchmark's fashion.

Installed with jitmagic (the ``pytest11`` entry point ``jitmagic``), or loaded with
``-p jitmagic.frontends.pytest_plugin``. A test asks for the ``jitcompare`` fixture and calls it
as ``jitmagic.compare``::

    def test_model_compiles_fast(jitcompare):
        c = jitcompare(model, x, repeat=3)
        assert c.flat.ok

``--jitmagic-save=DIR`` writes each test's report to ``DIR/<node id>.json``;
``--jitmagic-compare=DIR`` diffs each against the one saved there and prints a table at
the end of the session; ``--jitmagic-fail-on-slower[=RATIO]`` (default 1.2) makes the
session fail when a stage got significantly slower, by the one rule, by at least RATIO.
Nothing imports jax until a test calls the fixture.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ..model.comparison import Comparison, ReportSchemaError
from ..model.diff import FAIL_RATIO, Diff, diff
from ..model.saved.storage import save

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
    """One report of the session against its baseline (``diff`` None: none to compare)."""

    test: str
    name: str
    diff: Diff | None = None
    problem: str | None = None


@dataclass
class Reports:
    """What the plugin keeps for a session: the options and every report's outcome."""

    save_dir: Path | None
    compare_dir: Path | None
    fail_ratio: float | None
    outcomes: list[Outcome] = field(default_factory=list)

    def record(self, nodeid: str, index: int, c: Comparison) -> None:
        """Save ``c`` and compare it with its baseline, as the options ask."""
        name = report_name(nodeid, index)
        if self.save_dir is not None:
            self.save_dir.mkdir(parents=True, exist_ok=True)
            save(c, self.save_dir / name)
        if self.compare_dir is not None:
            self.outcomes.append(compared(nodeid, name, c, self.compare_dir / name))

    def regressions(self) -> list[tuple[Outcome, Any]]:
        if self.fail_ratio is None:
            return []
        return [(o, s) for o in self.outcomes if o.diff is not None
                for s in o.diff.regressions(self.fail_ratio)]


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
    group.addoption("--jitmagic-fail-on-slower", metavar="RATIO", nargs="?", type=float,
                    const=FAIL_RATIO, default=None,
                    help="with --jitmagic-compare, fail the session when a stage is "
                         f"significantly slower by at least RATIO (default {FAIL_RATIO}); "
                         "write --jitmagic-fail-on-slower=RATIO before the test paths")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[KEY] = Reports(_folder(config, "jitmagic_save"),
                                _folder(config, "jitmagic_compare"),
                                config.getoption("jitmagic_fail_on_slower"))


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


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A regression beyond ``--jitmagic-fail-on-slower`` fails a session that passed."""
    if session.config.stash[KEY].regressions() and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int,
                            config: pytest.Config) -> None:
    """The table of every report against its baseline, and the regressions that fail."""
    from ..render.diff import summary_lines

    state = config.stash[KEY]
    if state.compare_dir is None:
        return
    terminalreporter.section("jitmagic: against " + str(state.compare_dir))
    for line in summary_lines(state.outcomes, state.regressions(), state.fail_ratio):
        terminalreporter.write_line(line)

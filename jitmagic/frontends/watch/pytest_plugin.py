"""jitmagic's recompile gate for pytest: a test whose code compiles again after its warm-up
fails, naming the function, JAX's reason and the line: ``@pytest.mark.jitwatch(
fail_after_warmup=1)`` watches the whole test, ``with jitwatch(fail_after_warmup=0) as w:``
only the block. The marker's gate is what it was given (none: ``fail_after_warmup=1``)."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import pytest

MARKER = "jitwatch"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(fail_after_warmup=1, max_compiles=None): fail the test when "
                   "a function it calls compiles again after its warm-up (jitmagic)")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """Run a marked test watched; a passing test that broke the gate fails."""
    __tracebackhide__ = True  # a gate's failure shows its sentences, not this hook
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return (yield)
    from ...options.table import COMMAND, WATCH, specs_for
    from .api import watch

    if marker.args:
        raise pytest.UsageError(f"@pytest.mark.{MARKER} takes keywords only, e.g. "
                                f"@pytest.mark.{MARKER}(fail_after_warmup=1)")
    # a gate is only what was asked; no gate at all asks the marker's own, a warm-up of 1
    asked = {s.name for s in specs_for(WATCH, COMMAND) if s.tools == {WATCH}} & set(marker.kwargs)
    keywords = {**({} if asked else {"fail_after_warmup": 1}), **marker.kwargs}
    with watch(**keywords, source=item.nodeid):  # a broken gate raises, its ledger said
        return (yield)


@pytest.fixture
def jitwatch() -> Callable[..., Any]:
    """:func:`jitmagic.watch`: ``with jitwatch(fail_after_warmup=0) as w: ...``."""
    from .api import watch

    return watch

"""jitmagic's recompile gate for pytest: a test whose code compiles again after its warm-up
fails, naming the function, JAX's reason and the line::

    @pytest.mark.jitwatch(fail_after_warmup=1)   # the whole test is watched
    def test_training_does_not_recompile(): ...

    def test_steps(jitwatch):                    # only the block is watched
        with jitwatch(fail_after_warmup=0) as w:
            for batch in loader:
                state = step(state, batch)

The marker takes :func:`jitmagic.watch`'s gate keywords, its gate exactly what it was
given; with none, ``fail_after_warmup=1``. A failure is an ``AssertionError`` with the
gate's sentences and the ledger."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Generator
from typing import Any

import pytest

MARKER = "jitwatch"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(fail_after_warmup=1, max_compiles=None): fail the test when "
                   "a function it calls compiles again after its warm-up (jitmagic)")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """Under the marker the test runs watched; its own failure stays its own, and
    a passing test that broke the gate fails with ``RecompiledError``'s message."""
    __tracebackhide__ = True  # a gate's failure shows its sentences, not this hook
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return (yield)
    from .api import watch

    if marker.args:
        raise pytest.UsageError(f"@pytest.mark.{MARKER} takes keywords only, e.g. "
                                f"@pytest.mark.{MARKER}(fail_after_warmup=1)")
    # a gate is only what was asked; no gate at all asks the marker's own, a warm-up of 1
    asked = _gate_keywords() & set(marker.kwargs)
    keywords = {**({} if asked else {"fail_after_warmup": 1}), **marker.kwargs}
    with watch(**keywords, source=item.nodeid):  # a broken gate raises, its ledger said
        return (yield)


@pytest.fixture
def jitwatch() -> Callable[..., Any]:
    """:func:`jitmagic.watch`: ``with jitwatch(fail_after_warmup=0) as w: ...``."""
    from .api import watch

    return watch


def _gate_keywords() -> set[str]:
    """The options the watch alone takes (read when a marked test runs: pytest
    starts with nothing of jitmagic imported)."""
    from ...options.table import COMMAND
    from ...options.table import WATCH
    from ...options.table import specs_for

    return {spec.name for spec in specs_for(WATCH, COMMAND) if spec.tools == {WATCH}}

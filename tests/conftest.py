"""Shared fixtures: a real IPython shell with jitmagic loaded, and a leak check.

No test module imports this file: pytest hands its fixtures to the tests that name them.
"""

from __future__ import annotations

import gc
import os
import signal

os.environ.setdefault("MPLBACKEND", "Agg")

import jax
import matplotlib.pyplot as plt
import pytest
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output
from ipywidgets import Widget
from ipywidgets.widgets import widget as widget_module
from jax._src import monitoring


@pytest.fixture(scope="session")
def ip():
    shell = start_ipython()
    shell.run_line_magic("load_ext", "jitmagic")
    return shell


def kernel_state(shell) -> dict:
    """Everything a run of the magic must leave as it found it."""
    ns = {k: id(v) for k, v in shell.user_ns.items() if not k.startswith("_")}
    return {
        "namespace": ns,
        "jit": id(jax.jit),
        "config": dict(jax.config.values),
        "duration_listeners": list(monitoring._event_duration_secs_listeners),
        "event_listeners": list(monitoring._event_listeners),
        "figures": plt.get_fignums(),
        "sigint": signal.getsignal(signal.SIGINT),
        # A heap the user froze stays frozen (the count itself may drop as caches free).
        "gc_frozen": gc.get_freeze_count() > 0,
    }


@pytest.fixture(scope="session")
def kernel_snapshot(ip):
    """A function that records the kernel state a run of the magic must leave unchanged."""
    return lambda: kernel_state(ip)


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def undisplayed_widgets(before: set[str], outputs) -> set[str]:
    """Widgets created since ``before`` that no displayed widget holds (a leak)."""
    live = widget_module._instances
    todo = [live[o.data[WIDGET_VIEW]["model_id"]] for o in outputs if WIDGET_VIEW in o.data]
    reachable: set[str] = set()
    while todo:
        w = todo.pop()
        if w.model_id in reachable:
            continue
        reachable.add(w.model_id)
        for key in w.keys:
            value = getattr(w, key, None)
            values = value if isinstance(value, list | tuple) else [value]
            todo += [v for v in values if isinstance(v, Widget)]
    return set(live) - before - reachable


@pytest.fixture
def run_magic(ip):
    """Run ``%%jitcompare`` (``%jitcompare`` when cell is None) and check that the
    kernel is as before, whether the magic returned or raised.

    Returns (result, captured outputs).
    """

    def run(line: str, cell: str | None = None):
        before, widgets = kernel_state(ip), set(widget_module._instances)
        try:
            with capture_output() as cap:
                if cell is None:
                    result = ip.run_line_magic("jitcompare", line)
                else:
                    result = ip.run_cell_magic("jitcompare", line, cell)
        finally:
            assert kernel_state(ip) == before, "the magic changed the kernel's state"
            assert not undisplayed_widgets(widgets, cap.outputs), "a widget was left undisplayed"
        return result, cap

    return run

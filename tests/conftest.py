"""Shared fixtures: a real IPython shell with jitmagic loaded, and a leak check.

No test module imports this file: pytest hands its fixtures to the tests that name them.

The leak check runs with every ``run_magic`` call and is reported after the test: a
test that passed but left the kernel changed fails with what changed; a test that
failed shows its own error first and the leak below it.
"""

from __future__ import annotations

import gc
import os
import signal

os.environ.setdefault("MPLBACKEND", "Agg")
# The tests run on the CPU: with libtpu installed (the tpu extra, which CI installs for
# --target's tests) JAX would also start libtpu, whose warnings reach stderr and whose
# profiler sessions collide between two pytest workers ("Profile has already been
# started"). A TPU's own tests: JAX_PLATFORMS=tpu pytest -m tpu.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import matplotlib.pyplot as plt
import pytest
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output
from ipywidgets import Widget
from ipywidgets.widgets import widget as widget_module
from ipywidgets.widgets.widget_link import Link
from jax._src import monitoring


@pytest.fixture(autouse=True)
def claims_are_checked(monkeypatch):
    """On every comparison the suite makes: a helper claimed nested has jit calls in the
    nested program, and every helper found but not nested has a note saying why; a
    variant none of whose runs finished its trace says nothing of its program's calls."""
    import jitmagic.measure.variants.rows as variant_rows
    from jitmagic.measure import pipeline
    from jitmagic.render.notes import NO_CALL

    measured = variant_rows.variant_results

    def checked(runs):
        results = measured(runs)
        for r in results.values():
            if not r.samples.get("trace_s"):  # stopped before its trace, or raised: the
                assert not any(NO_CALL in note for note in r.notes), (r.name, r.notes)
                continue  # helpers it was to nest, of no program
            for h in r.helpers:
                assert r.helper_calls.get(h, 0) >= 1, (r.name, h, r.helper_calls)
            for h in r.inline:
                assert any(f"`{h}`" in note for note in r.notes), (r.name, h, r.notes)
        return results

    monkeypatch.setattr(variant_rows, "variant_results", checked)
    monkeypatch.setattr(pipeline, "variant_results", checked)


@pytest.fixture(scope="session")
def ip():
    shell = start_ipython()
    shell.run_line_magic("load_ext", "jitmagic")
    return shell


@pytest.fixture(scope="session", autouse=True)
def sigint_as_in_a_terminal():
    """Python sets its KeyboardInterrupt handler at start-up only where SIGINT is not
    ignored: under ``nohup`` or a background ``&`` it is, and then the tests that press
    Ctrl-C in this process would press nothing (an ignored SIGINT stays ignored by
    jitmagic too). The session runs with the handler a terminal or a kernel gives, and
    gives back the one it found."""
    before = signal.getsignal(signal.SIGINT)
    if before == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


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
    # a front-end link (jslink) is held by no widget, yet belongs to the ones it links
    links = {m for m, w in live.items() if isinstance(w, Link)
             and {w.source[0].model_id, w.target[0].model_id} <= reachable}
    return set(live) - before - reachable - links


def state_changes(before: dict, after: dict) -> list[str]:
    """What differs between two :func:`kernel_state` snapshots, one line per part."""
    lines = []
    for key, was in before.items():
        now = after[key]
        if now == was:
            continue
        if isinstance(was, dict):
            changed = sorted(k for k in was.keys() | now.keys() if was.get(k) != now.get(k))
            lines.append(f"{key}: {', '.join(map(str, changed))} changed")
        else:
            lines.append(f"{key}: {was!r} before, {now!r} after")
    return lines


#: What the ``run_magic`` calls of the test running now left behind, not reported yet.
LEAKS = pytest.StashKey[list[str]]()


@pytest.fixture
def run_magic(ip, request):
    """Run ``%%jitcompare`` (``%jitcompare`` when cell is None) and check that the
    kernel is as before, whether the magic returned or raised.

    What a call left changed is reported with the test (``pytest_runtest_makereport``
    below), so that the magic's own error, or the test's, is never hidden by it.
    Returns (result, captured outputs).
    """
    leaks = request.node.stash.setdefault(LEAKS, [])

    def run(line: str, cell: str | None = None):
        before, widgets = kernel_state(ip), set(widget_module._instances)
        cap = None
        try:
            with capture_output() as cap:
                if cell is None:
                    result = ip.run_line_magic("jitcompare", line)
                else:
                    result = ip.run_cell_magic("jitcompare", line, cell)
        finally:
            changes = state_changes(before, kernel_state(ip))
            if changes:
                leaks.append(f"the magic changed the kernel's state ({line!r}):\n  "
                             + "\n  ".join(changes))
            left = undisplayed_widgets(widgets, cap.outputs if cap else [])
            if left:
                leaks.append(f"a widget was left undisplayed ({line!r}): {sorted(left)}")
        return result, cap

    return run


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Fail a test phase that passed but left the kernel changed; below a phase that
    failed on its own, add what was left changed as a section of its report."""
    report = yield
    leaks = item.stash.get(LEAKS, [])
    if leaks:
        text = "\n".join(leaks)
        leaks.clear()
        if report.failed:
            report.sections.append(("kernel state check (after the error above)", text))
        else:
            report.outcome = "failed"
            report.longrepr = f"the kernel's state check failed after the test:\n{text}"
    return report

"""What the side-effect undo puts back, beside other threads: only what changed while the
measured code could run on the measuring thread; a change another thread made while it
could not (a steady-state loop) is left as that thread set it, and said.

The background thread is real, started by an earlier cell, and finds its moment from the
measuring thread's own stack (inside the steady-state loop), never after a sleep.
"""

from __future__ import annotations

import os
import sys
import threading
import types
import warnings

import jax
import pytest
from IPython.utils.capture import capture_output

from jitmagic.cell.effects import NOT_THE_CELLS, Watch, effects_undone

#: An earlier cell: ``when_steady`` runs in a thread of its own and, once the measuring
#: (main) thread is inside a steady-state loop, makes its ``change``, then notes whether
#: the main thread was still in that loop when the whole change was made.
EARLIER_CELL = """\
import os, sys, time, warnings
import jax

STATUS = "running"

def _in_steady_state(ident):
    frame = sys._current_frames().get(ident)
    while frame is not None:
        if frame.f_code.co_filename == "<timeit-src>":  # timeit's loop of compiled calls
            return True
        frame = frame.f_back
    return False

def when_steady(ident, change, seen, finished):
    while not finished.is_set() and not _in_steady_state(ident):
        time.sleep(0.0005)
    if not finished.is_set():
        change()
        seen.append(_in_steady_state(ident))

def change_everything(where):
    global STATUS
    os.environ["JITMAGIC_THREAD"] = "set by a thread"
    sys.path.append("/jitmagic-thread")
    STATUS = "done"
    warnings.filterwarnings("ignore", message="jitmagic-thread")
    jax.config.update("jax_log_compiles", True)
    os.chdir(where)

def change_the_environment():
    os.environ["JITMAGIC_THREAD"] = "set by a thread"
"""

#: The names the earlier cell defines.
EARLIER_NAMES = ("STATUS", "when_steady", "_in_steady_state", "change_everything",
                 "change_the_environment")

#: The cell measured (``EFFECT``: what its helper does at each trace). Its steady state
#: runs long enough for the thread to find it: a moment the cell's code cannot run.
CELL = """\
import os
import jax.numpy as jnp
def layer(x):
    EFFECT
    return jnp.sin(x) + x
def model(x):
    return layer(layer(x))
model(jnp.ones(4))
"""

OPTIONS = "-r 1 -n 20000 --no-plot -o"


@pytest.fixture
def thread_state(ip, tmp_path):
    """The state the thread changes, put back after the test (the magic must not)."""
    environ, path, cwd = dict(os.environ), list(sys.path), os.getcwd()
    filters, log_compiles = list(warnings.filters), jax.config.jax_log_compiles
    ip.run_cell(EARLIER_CELL)
    yield tmp_path
    os.environ.clear()
    os.environ.update(environ)
    sys.path[:] = path
    os.chdir(cwd)
    warnings.filters[:] = filters
    warnings._filters_mutated()
    jax.config.update("jax_log_compiles", log_compiles)
    for name in EARLIER_NAMES:
        ip.user_ns.pop(name, None)


def _beside_a_thread(ip, change, measure):
    """``measure()`` while the earlier cell's thread makes ``change`` in a steady-state
    loop: (what it returned, whether the whole change landed in one loop). Tried three
    times, for a machine so loaded that the thread misses every loop."""
    for _ in range(3):
        seen, finished = [], threading.Event()
        thread = threading.Thread(target=ip.user_ns["when_steady"], daemon=True,
                                  args=(threading.main_thread().ident, change, seen, finished))
        thread.start()
        try:
            got = measure()
        finally:
            finished.set()
            thread.join()
        if seen == [True]:
            return got
    pytest.fail("the thread never made its change inside one steady-state loop")


def test_what_another_thread_changed_while_measuring_is_left_and_said(ip, thread_state):
    def measure():
        with capture_output():
            return ip.run_cell_magic("jitcompare", OPTIONS, CELL.replace("EFFECT", "pass"))

    change = ip.user_ns["change_everything"]
    result = _beside_a_thread(ip, lambda: change(str(thread_state)), measure)
    assert os.environ["JITMAGIC_THREAD"] == "set by a thread"
    assert "/jitmagic-thread" in sys.path
    assert ip.user_ns["STATUS"] == "done"  # the thread's value, not lost
    assert any(f[1] is not None and f[1].pattern == "jitmagic-thread"
               for f in warnings.filters)
    assert jax.config.jax_log_compiles is True
    assert os.path.samefile(os.getcwd(), thread_state)
    left = [w for w in result.warnings if "changed while measuring (another thread?)" in w]
    assert len(left) == 1, result.warnings
    for name in ("the environment variable JITMAGIC_THREAD", "sys.path", "your global STATUS",
                 "the warnings filters", "JAX's config jax_log_compiles",
                 "the working directory"):
        assert name in left[0], (name, left[0])
    # nothing of it is blamed on the cell, or put back
    said = " ".join(result.warnings)
    assert "the code measured changed your globals" not in said
    assert "put back now" not in said and "is back to" not in said


def test_what_the_cell_changes_is_still_put_back_beside_a_thread(ip, run_magic, thread_state):
    # the thread sets one variable in the steady state; the cell's helper sets another
    # at every trace: the cell's is put back, the thread's kept
    cell = CELL.replace("EFFECT", "os.environ['JITMAGIC_CELL'] = '1'")
    result, _ = _beside_a_thread(ip, ip.user_ns["change_the_environment"],
                                 lambda: run_magic(OPTIONS, cell))
    assert "JITMAGIC_CELL" not in os.environ
    assert os.environ["JITMAGIC_THREAD"] == "set by a thread"
    said = " ".join(result.warnings)
    assert "changed environment variables JITMAGIC_CELL (added)" in said
    assert ("the environment variable JITMAGIC_THREAD changed while measuring (another "
            "thread?)") in said


#: A cell whose helper, the first time it is traced, lets the test's thread run (and
#: waits for it): a moment the cell's code is running on the measuring thread.
WHILE_TRACED = """\
import jax, jax.numpy as jnp
def layer(x):
    EFFECT
    if not ran.is_set():
        tracing.set()
        ran.wait(30)
    return jnp.sin(x) + x
def model(x):
    return layer(layer(x))
model(jnp.ones(4))
"""


@pytest.fixture
def while_traced(ip):
    """(run a cell with ``change`` made by a thread running since before the magic,
    while the cell's helper is first traced; its result), the config put back after."""
    log_compiles, debug_nans = jax.config.jax_log_compiles, jax.config.jax_debug_nans

    def run(change, effect="pass"):
        tracing, ran = threading.Event(), threading.Event()
        ip.user_ns.update(tracing=tracing, ran=ran)

        def other():
            if tracing.wait(60):
                change()
            ran.set()

        thread = threading.Thread(target=other, daemon=True)
        thread.start()
        try:
            with capture_output():  # the kernel's state changes: the thread's doing
                result = ip.run_cell_magic("jitcompare", "-r 1 -n 2 --no-plot -o",
                                           WHILE_TRACED.replace("EFFECT", effect))
        finally:
            ran.set()
            thread.join()
        return result

    yield run
    jax.config.update("jax_log_compiles", log_compiles)
    jax.config.update("jax_debug_nans", debug_nans)
    for name in ("tracing", "ran"):
        ip.user_ns.pop(name, None)


def test_another_threads_config_change_while_the_cell_ran_is_its_own(while_traced):
    # the thread's jax.config.update comes while the cell's helper is traced; the cell's
    # own update comes at every trace: each is named for whose it is
    result = while_traced(lambda: jax.config.update("jax_log_compiles", True),
                          effect="jax.config.update('jax_debug_nans', True)")
    assert jax.config.jax_log_compiles is True  # left as that thread set it
    assert jax.config.jax_debug_nans is False  # the cell's, put back
    said = " ".join(result.warnings)
    assert ("another thread changed JAX's config jax_log_compiles to True while the cell "
            "ran: jitmagic left it as it is") in said
    assert "the cell changed JAX's config jax_debug_nans to True" in said
    assert "the cell changed JAX's config jax_log_compiles" not in said


def test_a_config_change_no_call_shows_is_not_blamed_on_the_cell_alone(while_traced):
    # set past jax.config.update (as a flag parser would), while another thread runs
    holder = jax._src.config.config._value_holders["jax_log_compiles"]
    result = while_traced(lambda: holder._set(True))
    assert jax.config.jax_log_compiles is False  # put back: nothing says whose it was
    said = " ".join(result.warnings)
    assert ("the cell, or another thread while it ran, changed JAX's config "
            "jax_log_compiles to True") in said


# --- the watch itself ----------------------------------------------------------------


def test_a_change_in_any_window_the_cells_code_could_run_is_the_cells():
    state = {"a": 1, "b": 1, "c": 1, "cache": "off"}
    watch = Watch()
    watch.add("state", lambda: dict(state), lambda key: ("environ", key))
    state["a"] = 2  # the cell's setup (the first window is the cell's)
    state["cache"] = "on"  # the cell's too
    watch.mark(cells=False)  # a steady-state loop begins
    state["b"] = 2  # another thread's
    state["c"] = 2  # another thread's, then the cell's
    watch.mark(cells=True)
    state["c"] = 3
    state["cache"] = "off"  # jitmagic switches the cell's setting off while it measures,
    watch.mark(cells=False)
    state["cache"] = "on"  # and back on, as the measurement ends
    watch.mark(cells=False)
    assert watch.theirs("state") == {"b"}
    assert list(map(str, watch.left())) == [
        "the environment variable b changed while measuring (another thread?), at moments "
        "your code was not running: jitmagic left it as it is"]


def test_a_submodule_imported_while_compiling_is_nobodys_change():
    """JAX imports a submodule of its own (``jax.extend``) during a compile: the name it
    sets on ``jax`` stays, and no other thread is said to have changed it."""
    watch = Watch()
    with effects_undone(None, watch) as undone:
        watch.mark(cells=False)  # an XLA compile
        jax.jitmagic_submodule = types.ModuleType("jax.jitmagic_submodule")
        watch.mark(cells=False)
    try:
        assert watch.left() == [] and undone == []
        assert isinstance(jax.jitmagic_submodule, types.ModuleType)  # kept
    finally:
        del jax.jitmagic_submodule


def test_a_change_undone_before_the_end_is_nobodys():
    state = {"a": 1}
    watch = Watch()
    watch.add("state", lambda: dict(state), lambda key: ("environ", key))
    watch.mark(cells=False)
    state["a"] = 2
    watch.mark(cells=False)
    state["a"] = 1
    watch.mark(cells=False)
    assert watch.theirs("state") == set() and watch.left() == []


def test_only_compiled_calls_and_compiles_are_not_the_cells():
    assert {"steady state", "XLA compile"} == NOT_THE_CELLS


def test_two_measurements_ending_in_either_order_leave_no_wrapper_installed():
    """Two snapshots of the state (two measurements on two threads, the second wrapping
    the first's wrappers of ``jax.config.update`` and ``os.environ``'s writes) ending in
    either order leave the functions exactly as they were, and each still notes."""
    import os

    import jax

    from jitmagic.cell.effects.names import Config
    from jitmagic.cell.effects.settings import Environ

    kind = type(os.environ)
    before = (vars(jax.config).get("update"), kind.__setitem__, kind.__delitem__)
    for order in ((0, 1), (1, 0)):
        made = [(Config(), Environ()), (Config(), Environ())]
        os.environ["JITMAGIC_TEST_BOTH"] = "1"  # through both wrappers
        del os.environ["JITMAGIC_TEST_BOTH"]
        assert all("JITMAGIC_TEST_BOTH" in env.theirs for _, env in made)
        for i in order:
            config, env = made[i]
            config.undo()
            env.undo()
        assert (vars(jax.config).get("update"), kind.__setitem__, kind.__delitem__) == before

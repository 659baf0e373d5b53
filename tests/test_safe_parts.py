"""Ctrl-C at every point where ``--cache`` and ``--xla`` put something back, and nothing
left behind in the temp folder, on real JAX.

Each press is a real SIGINT (``signal.raise_signal``) from a hook patched into the very
call that puts a thing back (a JAX setting, the cache object, the profiler session, the
listeners, the frozen heap, a scratch folder's removal), once and twice. One press:
everything is back and the part's result is kept; two: everything is back and the
measurement ends in the one-line ``KeyboardInterrupt`` of a second Ctrl-C. Each run has
a temp folder of its own (``tempfile.tempdir``), whose ``jitmagic-*`` entries are
counted before and after.
"""

from __future__ import annotations

import gc
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from jax._src import monitoring

import jitmagic
from jitmagic._compat import persistent_cache_folder, profiler_running, reset_persistent_cache
from jitmagic.measure.parts import xla_passes
from jitmagic.measure.parts.second_start import measure_second_start
from jitmagic.measure.parts.xla_passes import add_xla_passes
from jitmagic.measure.pipeline import variants_of
from jitmagic.measure.sampling import conditions
from jitmagic.measure.sampling.conditions import CACHE_SETTINGS, cache_settings, scratch_cache
from jitmagic.measure.sampling.stops import ABANDONED, Checkpoint
from jitmagic.measure.scratch import MARK
from jitmagic.model.causes.second_start import SecondStart


def layer(x):
    return jnp.sin(x) * 0.5 + jnp.cos(x) * x


def model(x):
    for _ in range(4):
        x = layer(x)
    return x


#: The user's own cache settings, each unlike what ``--cache`` sets while it measures.
USERS = {"jax_persistent_cache_min_compile_time_secs": 0.5,
         "jax_persistent_cache_min_entry_size_bytes": 100}


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """A temp folder of the test's own (what ``TMPDIR`` names), empty."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def ours(folder: Path) -> list[str]:
    """The ``jitmagic-*`` entries of a temp folder."""
    return sorted(p.name for p in folder.glob("jitmagic-*"))


@pytest.fixture
def user_settings(tmp_path):
    """The user's cache on their own folder, with settings unlike ``--cache``'s; put back
    after the test."""
    before = cache_settings()
    folder = tmp_path / "my-cache"
    folder.mkdir()
    jax.config.update("jax_compilation_cache_dir", str(folder))
    for name, value in USERS.items():
        jax.config.update(name, value)
    reset_persistent_cache()
    try:
        yield folder
    finally:
        for name, value in before.items():
            jax.config.update(name, value)
        reset_persistent_cache()


class Presser:
    """Presses Ctrl-C ``times`` times (real SIGINTs), once, at the first call of a
    patched put-back that ``wanted`` accepts."""

    def __init__(self, times: int):
        self.times, self.pressed = times, False

    def press(self) -> None:
        """Every press made, as a user's quick presses come, even where the first one
        raises at once (a Python stage): what the last one raised is raised after."""
        if self.pressed:
            return
        self.pressed, raised = True, None
        for _ in range(self.times):
            try:
                signal.raise_signal(signal.SIGINT)
            except BaseException as exc:  # noqa: BLE001 (raised below)
                raised = exc
        if raised is not None:
            raise raised

    def before(self, owner, name: str, wanted=lambda *a, **k: True, monkeypatch=None) -> None:
        """``owner.name`` presses first where ``wanted(*args)``, then runs as before."""
        original = getattr(owner, name)

        def pressing(*args, **kwargs):
            if wanted(*args, **kwargs):
                self.press()
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, pressing)


def kernel_state() -> dict:
    """What the grids check is as before: the settings, the listeners, the heap, the
    SIGINT handler, the profiler."""
    return {"settings": cache_settings(), "profiler": profiler_running(),
            "listeners": (len(monitoring.get_event_listeners()),
                          len(monitoring.get_event_duration_listeners())),
            "frozen": gc.get_freeze_count(), "sigint": signal.getsignal(signal.SIGINT)}


def run_pressed(measure):
    """``measure(check)`` under a checkpoint's Ctrl-C handler, as the pipeline runs its
    parts; its value, or the ``KeyboardInterrupt`` it ended with."""
    check = Checkpoint()
    with check.catching_interrupts(), check.mode(python=False):
        try:
            return measure(check)
        except KeyboardInterrupt as exc:
            return exc


def assert_ended_well(outcome, times: int, kind) -> None:
    """One press: the part's result; two: the second Ctrl-C's one line."""
    if times == 1:
        assert isinstance(outcome, kind), outcome
    else:
        assert isinstance(outcome, KeyboardInterrupt) and str(outcome) == ABANDONED, \
            repr(outcome)


# --- --cache: every put-back of the second start --------------------------------------

#: Each point where the second start puts something back, in the order it does.
CACHE_POINTS = (*CACHE_SETTINGS, "cache object", "listeners", "heap", "scratch folder")


def _cache_hooks(point: str, presser: Presser, before: dict, monkeypatch) -> None:
    """Patch the put-back at ``point`` to press first."""
    restoring = [False]  # from the put-back of the user's folder on
    if point in CACHE_SETTINGS:
        def wanted(name, value):
            if name == "jax_compilation_cache_dir" and value == before[name] \
                    and "jitmagic-cache-" in str(jax.config.jax_compilation_cache_dir):
                restoring[0] = True
            return restoring[0] and name == point and value == before[name]

        presser.before(jax.config, "update", wanted, monkeypatch)
    elif point == "cache object":
        presser.before(conditions, "reset_persistent_cache", lambda: "jitmagic-cache-" not in str(
            jax.config.jax_compilation_cache_dir), monkeypatch)
    elif point == "listeners":
        presser.before(jax.monitoring, "unregister_event_listener", monkeypatch=monkeypatch)
    elif point == "heap":
        presser.before(gc, "unfreeze", monkeypatch=monkeypatch)
    else:
        presser.before(shutil, "rmtree", lambda path, *a, **k: "jitmagic-cache-" in str(path),
                       monkeypatch)


@pytest.fixture(scope="module")
def flat_model():
    return {"flat": variants_of(model, (jnp.ones(16),), {})["flat"]}


@pytest.mark.slow  # 18 second starts
@pytest.mark.parametrize("times", [1, 2])
@pytest.mark.parametrize("point", CACHE_POINTS)
def test_ctrl_c_while_the_second_start_puts_back_leaves_nothing_changed(
        point, times, flat_model, user_settings, private_tmp, monkeypatch):
    before = kernel_state()
    presser = Presser(times)
    _cache_hooks(point, presser, before["settings"], monkeypatch)
    outcome = run_pressed(lambda check: measure_second_start(flat_model, 1, check))
    monkeypatch.undo()  # the hooks off before anything is checked
    assert presser.pressed
    assert_ended_well(outcome, times, SecondStart)
    assert kernel_state() == before
    assert ours(private_tmp) == []
    # the cache object was reset: the user's next compile makes it on their own folder
    jax.block_until_ready(jax.jit(lambda y: y * 3.0 - 1.0)(jnp.ones(7)))
    assert persistent_cache_folder() == str(user_settings)


# --- --xla: the profiled compile, its profiler session and folder ----------------------

#: Each point of the profiled compile where Ctrl-C lands: its lowering, the profiler starting, the
#: compile, the session stopped, the profile read, the cache setting and folder put back.
XLA_POINTS = ("lowering", "profiler started", "compile", "profiler stopped", "profile read",
              "cache setting", "folder")


def _xla_hooks(point: str, presser: Presser, monkeypatch) -> None:
    if point == "profiler started":
        start = jax.profiler.start_trace

        def started(*args, **kwargs):
            start(*args, **kwargs)
            presser.press()

        monkeypatch.setattr(jax.profiler, "start_trace", started)
    elif point in ("lowering", "compile"):
        timed = xla_passes.timed_stage

        def compile_pressed(check, stage, times, key, run, **kwargs):
            if stage.startswith("XLA compile" if point == "compile" else "lowering"):
                return timed(check, stage, times, key, lambda: (presser.press(), run())[1],
                             **kwargs)
            return timed(check, stage, times, key, run, **kwargs)

        monkeypatch.setattr(xla_passes, "timed_stage", compile_pressed)
    elif point == "profiler stopped":
        presser.before(jax.profiler, "stop_trace", monkeypatch=monkeypatch)
    elif point == "profile read":
        presser.before(xla_passes, "read_compile", monkeypatch=monkeypatch)
    elif point == "cache setting":
        presser.before(jax.config, "update", lambda name, value: (
            name == "jax_enable_compilation_cache" and value), monkeypatch)
    else:
        presser.before(shutil, "rmtree", lambda path, *a, **k: "jitmagic-xla-" in str(path),
                       monkeypatch)


@pytest.fixture(scope="module")
def compared():
    """One comparison of the model, and its prepared variants, for the profiled compiles."""
    result = jitmagic.compare(model, jnp.ones(16), repeat=1, number=1, quiet=True)
    return result, variants_of(model, (jnp.ones(16),), {})


@pytest.mark.slow  # 12 runs of two profiled compiles
@pytest.mark.parametrize("times", [1, 2])
@pytest.mark.parametrize("point", XLA_POINTS)
def test_ctrl_c_anywhere_in_the_profiled_compile_ends_as_in_the_comparison(
        point, times, compared, user_settings, private_tmp, monkeypatch):
    result, prepared = compared
    before = kernel_state()
    presser = Presser(times)
    _xla_hooks(point, presser, monkeypatch)
    outcome = run_pressed(lambda check: add_xla_passes(result, prepared, check))
    monkeypatch.undo()
    assert presser.pressed
    assert_ended_well(outcome, times, type(result))
    if times == 1:  # what was profiled before the stop is kept, the stop said
        xla = outcome.xla_passes
        assert xla.reason is None and xla.stopped.startswith("interrupted by the user")
        assert "run 0 of 0" not in xla.stopped
        assert outcome.variants == result.variants
    assert kernel_state() == before  # no profiler session left running among them
    assert ours(private_tmp) == []


# --- nothing left behind ---------------------------------------------------------------

def test_a_timeout_and_an_error_leave_no_scratch_folder(compared, private_tmp):
    result, prepared = compared
    stopped = add_xla_passes(result, prepared, Checkpoint(deadline=0.0))
    assert stopped.xla_passes.stopped.startswith("stopped by --timeout")
    with pytest.raises(RuntimeError, match="inside"), scratch_cache():
        assert ours(private_tmp) != []
        raise RuntimeError("inside")
    assert ours(private_tmp) == []


KILLED = """
import os, signal, sys
from jitmagic.measure.sampling.conditions import scratch_cache
with scratch_cache() as folder:
    print(folder, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_folder_a_killed_process_left_is_removed_and_none_of_the_users(private_tmp):
    env = {**os.environ, "TMPDIR": str(private_tmp)}
    run = subprocess.run([sys.executable, "-c", KILLED], env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == -signal.SIGKILL
    left = Path(run.stdout.strip())
    assert left.parent == private_tmp and left.is_dir()  # SIGKILL removes nothing
    # the user's own folders, named like ours: no mark, or a process still running
    users = private_tmp / "jitmagic-cache-12345-mine"
    users.mkdir()
    (users / "entry").write_text("the user's")
    running = private_tmp / f"jitmagic-cache-{os.getppid()}-abc"
    running.mkdir()
    (running / MARK).write_text(str(os.getppid()))
    with scratch_cache() as folder:
        assert not left.exists()  # the killed process's, removed
        assert ours(private_tmp) == sorted([users.name, running.name, folder.name])
    assert ours(private_tmp) == sorted([users.name, running.name])
    assert (users / "entry").read_text() == "the user's"

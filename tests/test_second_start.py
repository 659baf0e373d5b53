"""--cache: a second start with a warm persistent compilation cache, on real JAX.

A warm start shows JAX's cache-hit event and a cold one its miss; the user's cache
settings, their cache folder (and the files in it) and JAX's cache object are as before,
also when the user's code raises and on Ctrl-C; the temporary folder is gone; where the
cache was not read, no warm figure is shown; the user's own settings are judged; reports
with the record round-trip and reports without it load.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import signal
import tempfile
import threading
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

import jitmagic
from jitmagic._compat import persistent_cache_folder, reset_persistent_cache
from jitmagic.errors import InputError
from jitmagic.measure.parts.second_start import PART, measure_second_start
from jitmagic.measure.pipeline import checkpoint, measure_prepared, variants_of
from jitmagic.measure.sampling.conditions import cache_settings, persistent_cache_in
from jitmagic.measure.sampling.stops import Checkpoint
from jitmagic.model.causes.second_start import CacheRow, SecondStart, Start, UserCache
from jitmagic.model.comparison import Comparison
from jitmagic.model.parts import later_labels
from jitmagic.model.saved.schema import ReportSchemaError
from jitmagic.model.stats.rule import FASTER, SLOWER
from jitmagic.model.stats.units import fmt_s
from jitmagic.options import Options
from jitmagic.render.causes.second_start import NOT_READ, TITLE, text
from jitmagic.render.comparison import text_table

#: The prefix of jitmagic's scratch cache folders (conditions.scratch_cache).
SCRATCH = "jitmagic-cache-"


def layer(x):
    return jnp.sin(x) * 0.5 + jnp.cos(x) * x


def model(x):
    for _ in range(7):  # a helper reused in a Python loop, as users write it
        x = layer(x)
    return x


def under_the_scratch_cache() -> bool:
    """Whether JAX's cache folder is jitmagic's scratch one (the second start runs)."""
    return SCRATCH in str(jax.config.jax_compilation_cache_dir or "")


def fails_in_the_second_start(x):
    if under_the_scratch_cache():
        raise ValueError("boom in the second start")
    return model(x)


def interrupted_in_the_second_start(x):
    if under_the_scratch_cache():
        raise KeyboardInterrupt  # as a second Ctrl-C raises it, wherever it lands
    return model(x)


def printing(x):
    jax.debug.print("x0 = {}", x[0])  # a host callback: JAX writes no cache entry for it
    return model(x)


def scratch_folders() -> set[Path]:
    """This process's scratch caches (named with its pid: a pytest-xdist sibling's come
    and go on their own)."""
    return set(Path(tempfile.gettempdir()).glob(f"{SCRATCH}{os.getpid()}-*"))


def listing(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``folder``: its bytes and modification time."""
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def user_cache(tmp_path):
    """A user's own persistent cache: a folder set beforehand with a file in it, JAX's
    cache object already made on it; their settings put back after the test."""
    before = cache_settings()
    folder = tmp_path / "my-cache"
    folder.mkdir()
    (folder / "my-entry-cache").write_bytes(b"an entry of the user's")
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
    reset_persistent_cache()
    jax.block_until_ready(jax.jit(lambda y: y * 2.0)(jnp.ones(3)))  # the object is made
    assert persistent_cache_folder() == str(folder)
    try:
        yield folder
    finally:
        for name, value in before.items():
            jax.config.update(name, value)
        reset_persistent_cache()


def assert_as_before(folder: Path, settings: dict, files: dict, scratch: set[Path]) -> None:
    """The user's settings, folder and cache object, and no scratch folder left."""
    assert cache_settings() == settings
    assert listing(folder) == files
    assert scratch_folders() == scratch
    # JAX's cache object was reset: the user's next compile makes it on their folder
    jax.block_until_ready(jax.jit(lambda y: y - 1.0)(jnp.ones(5)))
    assert persistent_cache_folder() == str(folder)


@pytest.fixture(scope="module")
def measured() -> Comparison:
    """One comparison with --cache of the loop-helper model (default cache settings)."""
    return jitmagic.compare(model, jnp.ones(64), repeat=1, number=1, cache=True, quiet=True)


# --- what is measured -------------------------------------------------------------------

def test_a_warm_start_shows_the_cache_hit_and_a_cold_one_the_miss():
    scratch = scratch_folders()
    prepared = variants_of(model, (jnp.ones(64),), {})
    s = measure_second_start(prepared, 2, Checkpoint())
    assert list(s.rows) == ["flat", "nested"] and s.stopped is None
    for row in s.rows.values():
        assert len(row.no_cache) == len(row.cold) == len(row.warm) == 2 and row.error is None
        assert all(x.misses == x.hits == 0 for x in row.no_cache)  # the cache was off
        assert all(x.misses >= 1 and x.hits == 0 for x in row.cold)
        assert all(x.hits >= 1 and x.misses == 0 for x in row.warm)
        assert row.read and row.warm_s is not None and row.saved_s is not None
        # JAX's own events came inside each warm start: the trace, lowering and read
        assert all(x.trace_s and x.lower_s and x.compile_s for x in row.warm)
        assert row.compile_s is not None  # the no-cache starts' XLA compile
    assert scratch_folders() == scratch  # the scratch folder is gone


def test_the_comparison_then_the_second_start_of_each_variant(measured):
    s = measured.second_start
    assert measured.stopped is None and s is not None and s.stopped is None
    assert list(s.rows) == ["flat", "nested"]
    for row in s.rows.values():
        assert len(row.cold) == len(row.warm) == 3  # at least 3 pairs, with -r 1
        assert row.read and not math.isnan(row.difference.ratio)
    assert not math.isnan(s.nesting.ratio)  # both read: nesting is judged
    assert PART in later_labels(Options(cache=True)) and PART not in later_labels(Options())


def test_the_wall_time_of_flat_against_nested_and_of_the_whole_are_told_apart(measured):
    # the second start's cold and warm pairs ran after flat against nested, inside the whole
    pairs = sum(x.seconds for row in measured.second_start.rows.values()
                for x in (*row.cold, *row.warm))
    assert measured.whole_s >= measured.wall_s + pairs > measured.wall_s >= measured.measured_s()
    line = next(ln for ln in text_table(measured).splitlines() if ln.startswith("wall time"))
    assert line.startswith(f"wall time {fmt_s(measured.wall_s)} for flat against nested")
    assert f"; {fmt_s(measured.whole_s)} in all, with the parts after it" in line
    assert Comparison.from_dict(measured.to_dict()).whole_s == measured.whole_s
    assert "whole_s" not in dataclasses.replace(measured, whole_s=math.nan).to_dict()


def test_only_the_flat_program_where_nothing_is_nested():
    def plain(x):
        return jnp.sin(x) * 2.0 + x

    prepared = variants_of(plain, (jnp.ones(8),), {})
    result = measure_prepared(prepared, Options(repeat=1, number=1, cache=True, quiet=True))
    assert list(result.second_start.rows) == ["flat"]
    assert "whether nesting" not in text(result.second_start)


def test_the_option_is_checked():
    with pytest.raises(InputError, match="--cache is on or off"):
        Options(cache="yes")


# --- the user's cache, settings and kernel left as they were --------------------------

def test_the_users_settings_folder_and_cache_object_are_as_before(user_cache):
    settings, files, scratch = cache_settings(), listing(user_cache), scratch_folders()
    result = jitmagic.compare(model, jnp.ones(32), repeat=1, number=1, cache=True, quiet=True)
    assert result.second_start.user == UserCache(folder_set=True, min_compile_s=0.5)
    assert result.second_start.rows["flat"].read
    assert_as_before(user_cache, settings, files, scratch)


def test_the_users_cache_is_as_before_when_their_code_raises(user_cache):
    settings, files, scratch = cache_settings(), listing(user_cache), scratch_folders()
    result = jitmagic.compare(fails_in_the_second_start, jnp.ones(16), repeat=1, number=1,
                              cache=True, quiet=True)
    s = result.second_start
    assert result.stopped is None and result.flat.ok
    assert "boom in the second start" in s.rows["flat"].error
    assert s.rows["flat"].cold == () and not s.rows["flat"].read
    assert "boom in the second start" in text(s)
    assert_as_before(user_cache, settings, files, scratch)


def test_the_users_cache_is_as_before_after_a_keyboard_interrupt(user_cache):
    settings, files, scratch = cache_settings(), listing(user_cache), scratch_folders()
    with pytest.raises(KeyboardInterrupt):
        jitmagic.compare(interrupted_in_the_second_start, jnp.ones(16), repeat=1, number=1,
                         cache=True, quiet=True)
    assert_as_before(user_cache, settings, files, scratch)


def test_ctrl_c_in_the_second_start_keeps_what_finished_and_puts_everything_back(
        user_cache):
    settings, files, scratch = cache_settings(), listing(user_cache), scratch_folders()
    handler = signal.getsignal(signal.SIGINT)

    def press(p, check):
        if p.what == PART and p.stage == "warm first call" and p.round == 2:
            signal.raise_signal(signal.SIGINT)  # a real Ctrl-C, before that call

    opts = Options(repeat=1, number=1, cache=True)
    check = checkpoint("model", opts, time.perf_counter())
    check.report.draw = lambda p: press(p, check)
    result = measure_prepared(variants_of(model, (jnp.ones(16),), {}), opts, check=check)
    s = result.second_start
    assert result.stopped is None  # the comparison had finished: only this part stopped
    assert s.stopped.startswith("interrupted by the user")
    assert result.stopped_anywhere == s.stopped
    assert len(s.rows["flat"].cold) >= 1  # the pairs that finished are kept
    assert f"PARTIAL: {s.stopped}" in text(s)
    assert SecondStart.from_dict(s.to_dict()).stopped == s.stopped
    assert signal.getsignal(signal.SIGINT) is handler
    assert_as_before(user_cache, settings, files, scratch)


def test_another_threads_compiles_meanwhile_are_named(monkeypatch):
    """JAX's cache folder is the process's: a compile in another thread while the second
    start runs goes to the scratch folder, and the record says so."""
    from jitmagic.measure.parts import second_start

    start, seen = second_start.first_start, []

    def with_a_thread_compiling(*args, **kwargs):
        if not seen and args[-1] == "cold first call":  # once, while the scratch folder
            # is JAX's cache (the no-cache start before it has the cache off)
            def compiles():
                seen.append(str(jax.config.jax_compilation_cache_dir))
                jax.block_until_ready(jax.jit(lambda y: jnp.tan(y) * 3.25)(jnp.ones(9)))

            thread = threading.Thread(target=compiles)
            thread.start()
            thread.join()
        return start(*args, **kwargs)

    monkeypatch.setattr(second_start, "first_start", with_a_thread_compiling)
    prepared = variants_of(model, (jnp.ones(8),), {})
    s = measure_second_start({"flat": prepared["flat"]}, 1, Checkpoint())
    assert SCRATCH in seen[0]
    (said,) = s.warnings  # the jit, and the eager ops that made its argument
    assert re.fullmatch(r"\d+ compiles? of another thread used JAX's persistent cache while "
                        r"the second start measured: JAX's cache folder is the process's, so "
                        r"(it|they) went to jitmagic's folder \(removed after\), not to your "
                        r"own cache", said), said
    assert f"warning: {said}" in text(s)
    quiet = measure_second_start({"flat": prepared["flat"]}, 1, Checkpoint())
    assert quiet.warnings == ()  # the measuring thread's own compiles are not counted


def test_an_error_under_the_scratch_settings_puts_the_users_back():
    before = cache_settings()
    with pytest.raises(RuntimeError, match="inside"), \
            persistent_cache_in("/nonexistent/jitmagic-test"):
        assert jax.config.jax_persistent_cache_min_compile_time_secs == 0
        raise RuntimeError("inside")
    assert cache_settings() == before and persistent_cache_folder() is None


def test_the_magic_leaves_the_kernel_as_it_was(run_magic):
    cell = "import jax.numpy as jnp\n" + "\n".join([
        "def layer(x):", "    return jnp.sin(x) * 0.5 + x",
        "def model(x):", "    for _ in range(6):", "        x = layer(x)", "    return x",
        "model(jnp.ones(8))"])
    result, cap = run_magic("-o -r 1 -n 1 --no-plot --cache", cell)
    assert result.second_start is not None and result.second_start.rows["flat"].read
    assert TITLE in cap.outputs[0].data["text/plain"]


# --- honesty: what is said ----------------------------------------------------------------

def test_a_program_the_cache_does_not_hold_shows_no_warm_figure(capfd):
    prepared = variants_of(printing, (jnp.ones(8),), {})
    s = measure_second_start({"flat": prepared["flat"]}, 1, Checkpoint())
    row = s.rows["flat"]
    assert row.warm and all(x.hits == 0 for x in row.warm)  # nothing was written to read
    assert not row.read and row.warm_s is None and row.saved_s is None
    said = text(s)
    assert f"flat: {NOT_READ}: 1 of 1 warm first calls saw no cache hit" in said
    flat_row = next(line for line in said.splitlines() if line.startswith("flat "))
    assert NOT_READ in flat_row and "ms" not in flat_row.split(NOT_READ)[1]
    assert "faster" not in said


def test_a_user_with_the_default_settings_is_told_their_jax_would_not_cache_it(measured):
    s = measured.second_start
    assert s.user == UserCache()  # the suite's JAX: no folder, the 1.0 s default
    said = text(s)
    assert "your JAX would not cache this program: it compiles in " in said
    assert ("under `jax_persistent_cache_min_compile_time_secs` (1.0 s): set "
            "`jax_persistent_cache_min_compile_time_secs` to 0") in said
    assert "`jax_compilation_cache_dir` is not set" in said


def _start(seconds: float, hit: bool, compile_s: float = 0.3) -> Start:
    """A start whose trace and lowering are most of it, as JAX's events would say."""
    return Start(seconds, hits=int(hit), misses=int(not hit), trace_s=0.6 * seconds,
                 lower_s=0.2 * seconds, compile_s=compile_s)


def _row(name: str, cold: list[float], warm: list[float]) -> CacheRow:
    return CacheRow(name, tuple(_start(s, False) for s in cold),
                    tuple(_start(s, True, 0.01) for s in warm))


def test_the_sentences_follow_the_rule_and_the_users_settings():
    rows = {"flat": _row("flat", [0.50, 0.52, 0.51], [0.10, 0.11, 0.10]),
            "nested": _row("nested", [0.30, 0.31, 0.33], [0.04, 0.042, 0.045])}
    cached = SecondStart(rows, UserCache(folder_set=True, min_compile_s=0.0))
    said = text(cached)
    assert "flat: with a warm cache the first call is " in said and "faster" in said
    assert "on a second start nesting still pays" in said
    assert "are most of a warm first call (80% flat, 80% nested of its wall time): Python " \
           "work, which nesting shrinks here: 2.38× faster" in said
    assert "would not cache" not in said and "is not set" not in said
    assert cached.rows["flat"].saved_s == pytest.approx(0.41)
    # the same runs, a spread too wide for the rule at three pairs: not called
    noisy = {"flat": rows["flat"], "nested": _row("nested", [0.3, 0.31, 0.33],
                                                  [0.05, 0.12, 0.09])}
    said = text(SecondStart(noisy, UserCache(folder_set=True, min_compile_s=0.0)))
    assert "is inconclusive" in said and "nesting shrinks" not in said
    # a user whose minimum is above the compile: told the setting to change
    slow_min = text(SecondStart(rows, UserCache(folder_set=True, min_compile_s=1.0)))
    assert "your JAX would not cache this program: it compiles in 300 ms flat and 300 ms " \
           "nested of wall time (as JAX times it), under " \
           "`jax_persistent_cache_min_compile_time_secs` (1.0 s)" in slow_min


def test_the_saving_is_against_no_cache_and_the_first_starts_writing_is_said_apart():
    """The issue's figures by hand (an 8 MiB table): no cache 295 ms, the first start
    writing the cache 542 ms, warm 108 ms. The saving was read against the first start
    (434 ms, more than the whole compile a cache saves); it is 187 ms, and the first
    start's cost is its own sentence."""
    row = CacheRow("flat", tuple(_start(s, False) for s in (0.540, 0.542, 0.545)),
                   tuple(_start(s, True, 0.01) for s in (0.107, 0.108, 0.109)), None,
                   tuple(Start(s) for s in (0.294, 0.295, 0.297)))
    assert row.saved_s == pytest.approx(0.295 - 0.108)
    assert row.difference.kind == FASTER and row.writing.kind == SLOWER
    said = text(SecondStart({"flat": row}, UserCache(folder_set=True, min_compile_s=0.0)))
    assert "than with no cache: 108 ms warm against 295 ms with no cache" in said
    assert ("flat: the first start, which also writes the cache, is 1.84× slower than the "
            "first call with no cache (") in said and "(542 ms against 295 ms)" in said
    (flat_row,) = [line for line in said.splitlines() if line.startswith("flat ")]
    assert flat_row.index("295 ms") < flat_row.index("542 ms") < flat_row.index("108 ms")
    assert "0.37×" in flat_row  # warm over no cache


# --- the record, saved ----------------------------------------------------------------------

def test_a_saved_report_with_the_second_start_round_trips(measured, tmp_path):
    path = tmp_path / "r.json"
    jitmagic.save(measured, path)
    loaded = jitmagic.load(path)
    assert loaded.second_start == measured.second_start
    assert loaded.to_dict()["second_start"] == measured.to_dict()["second_start"]
    assert TITLE in str(loaded)


def test_an_old_report_without_it_loads_and_a_bad_field_is_named(measured, tmp_path):
    d = measured.to_dict()
    old = {k: v for k, v in d.items() if k != "second_start"}
    old["schema"] = "jitmagic.comparison/3"
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    loaded = jitmagic.load(path)
    assert loaded.second_start is None and TITLE not in str(loaded)
    d["second_start"]["rows"]["flat"]["cold"][0]["seconds"] = "slow"
    with pytest.raises(ReportSchemaError, match=r"second_start\.rows\.flat\.cold\[0\]\.seconds"):
        Comparison.from_dict(d)


def test_on_a_busy_machine_the_saving_and_its_seconds_share_the_cpu_clock():
    """A ratio judged on CPU time gives CPU seconds beside it, said so: the wall seconds
    (stretched by waiting for a CPU) beside a CPU ratio read as 8.0x where it said 9.1x."""
    def busy(seconds: float, cpu: float, hit: bool) -> Start:
        return Start(seconds, cpu_s=cpu, wait_s=0.6 * seconds, hits=int(hit),
                     misses=int(not hit), trace_s=0.1 * cpu, lower_s=0.05 * cpu,
                     compile_s=0.5 * cpu if not hit else 0.01)

    row = CacheRow("flat", tuple(busy(s, c, False) for s, c in
                                 ((1.84, 0.90), (1.90, 0.92), (1.80, 0.88))),
                   tuple(busy(s, c, True) for s, c in
                         ((0.23, 0.10), (0.25, 0.11), (0.22, 0.095))))
    assert row.clock() == "CPU"
    said = text(SecondStart({"flat": row}, UserCache(folder_set=True, min_compile_s=0.0)))
    assert "100 ms warm against 900 ms on the first start, CPU time" in said
    assert "230 ms warm against 1.84 s" not in said


def test_the_table_shows_each_rows_seconds_on_the_clock_its_ratio_is_judged_on():
    """A new user read 'flat 76.4 ms, 29.1 ms, 0.38×' on wall time beside 'nested 80.3 ms,
    23.2 ms, 0.25× [CPU time]' (23.2/80.3 is 0.29), under a footer saying every row was
    compared on CPU time: each row's seconds and ratio are on one clock, and said so."""
    def start(seconds: float, cpu: float, hit: bool, wait: float) -> Start:
        return Start(seconds, cpu_s=cpu, wait_s=wait * seconds, hits=int(hit),
                     misses=int(not hit), trace_s=0.1 * cpu, lower_s=0.05 * cpu,
                     compile_s=0.5 * cpu if not hit else 0.01)

    quiet = CacheRow("flat", tuple(start(s, 0.9 * s, False, 0.0) for s in (0.076, 0.078, 0.075)),
                     tuple(start(s, 0.9 * s, True, 0.0) for s in (0.029, 0.030, 0.028)))
    busy = CacheRow("nested",
                    tuple(start(s, c, False, 0.6) for s, c in
                          ((0.080, 0.040), (0.082, 0.041), (0.079, 0.039))),
                    tuple(start(s, c, True, 0.6) for s, c in
                          ((0.023, 0.010), (0.024, 0.011), (0.022, 0.0095))))
    assert (quiet.clock(), busy.clock()) == ("wall", "CPU")
    said = text(SecondStart({"flat": quiet, "nested": busy},
                            UserCache(folder_set=True, min_compile_s=0.0)))
    (flat_row,) = [line for line in said.splitlines() if line.startswith("flat ")]
    (nested_row,) = [line for line in said.splitlines() if line.startswith("nested ")]
    assert "76 ms" in flat_row and "CPU time" not in flat_row
    assert "40 ms" in nested_row and "10 ms" in nested_row and "80 ms" not in nested_row
    assert nested_row.count("CPU time") == 3  # cold, warm and the ratio
    assert ("the machine was busy: nested compared and shown on the process's CPU time, "
            "seconds and ratio alike; flat on wall time (what remains warm, and its share, "
            "are JAX's events: wall time)") in said  # its lines' clock, not the table's
    assert "the table's seconds are wall time" not in said


def test_one_round_leaves_no_empty_spread_nor_double_space():
    """A run stopped by --timeout after one round of the second start (a new user's
    trial): its cells read ``3.16 s [, CPU time]`` and a sentence ``less CPU time  (``."""
    row = CacheRow("flat", (Start(0.540, hits=0, misses=1, trace_s=0.3, lower_s=0.1,
                                  compile_s=0.1),),
                   (_start(0.108, True, 0.01),), None, (Start(0.295),))
    said = text(SecondStart({"flat": row}, UserCache(folder_set=True, min_compile_s=0.0)))
    assert "[," not in said and "  (" not in said and " )" not in said
    assert "(542 ms against 295 ms)" not in said  # one round each: its own medians
    assert "(540 ms against 295 ms)" in said


def _remains(said: str, name: str) -> tuple[float, list[float]]:
    """The whole a variant's "what remains warm" line names, and its parts, in seconds."""
    line = next(ln for ln in said.splitlines() if ln.startswith(f"{name}, what remains warm"))
    unit = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}
    whole = re.search(r"warm first call, ([\d.]+) (s|ms|µs|ns) of wall time", line)
    assert whole, line
    parts = re.findall(r"(?:trace|lower|reading the entry|the rest) ([\d.]+) (s|ms|µs|ns)",
                       line.split("): ", 1)[1])
    return (float(whole[1]) * unit[whole[2]], [float(x) * unit[u] for x, u in parts])


def test_what_remains_warm_names_its_whole_on_its_own_clock_and_adds_up_to_it(measured):
    """A new user read 'flat, what remains warm: trace 25.6 ms, lower 28.8 ms, reading the
    entry 47.5 ms, the rest 80.5 ms (wall time)' beside a warm first call of 38.7 ms of CPU
    time (a busy machine): parts outgrew the whole they are parts of. The line names its
    whole on the parts' clock, the parts add up to it, and CPU time is named apart."""
    said = text(measured.second_start)  # a real run: every part of one start, wall time
    for name in measured.second_start.rows:
        whole, parts = _remains(said, name)
        assert len(parts) == 4 and sum(parts) == pytest.approx(whole, rel=0.01), (whole, parts)

    def busy(seconds: float, cpu: float, trace: float, lower: float, hit: bool) -> Start:
        return Start(seconds, cpu_s=cpu, wait_s=0.6 * seconds, hits=int(hit),
                     misses=int(not hit), trace_s=trace, lower_s=lower, compile_s=0.0475)

    # the trial's figures; and medians of each part (90 ms, 90 ms) above the median whole
    warm = (busy(0.183, 0.045, 0.0256, 0.0288, True), busy(0.100, 0.035, 0.09, 0.005, True),
            busy(0.300, 0.05, 0.09, 0.09, True), busy(0.190, 0.04, 0.005, 0.09, True),
            busy(0.175, 0.036, 0.09, 0.03, True))
    row = CacheRow("flat", tuple(busy(0.9, 0.4, 0.2, 0.1, False) for _ in warm), warm)
    assert row.clock() == "CPU"
    said = text(SecondStart({"flat": row}, UserCache(folder_set=True, min_compile_s=0.0)))
    whole, parts = _remains(said, "flat")
    assert whole == pytest.approx(0.183) and sum(parts) == pytest.approx(whole, rel=0.01)
    # the CPU figure is the table's median warm (40 ms), not the middle wall run's (45 ms)
    assert "compared above on CPU time, whose median warm is 40 ms" in said
    warm_cell = next(ln for ln in said.splitlines() if ln.lstrip().startswith("flat ")).split()
    assert "40" in warm_cell and "45" not in said.split("what remains warm")[1]

"""Measuring under jax.distributed: lockstep, the slowest-process merge, the launcher.

The fast tests check the one-process lockstep (it shares nothing), the merge of several
processes' samples, ``per_process`` in saved reports, the checkpoint the processes agree
on, the coordination-service timeouts and the refusals. The slow ones start real
processes on loopback (CPU collectives through gloo): the launcher on a plain file,
processes the user started calling ``compare`` on a global array, and a process that
exits early.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support import comparison, variant

import jitmagic
from jitmagic.frontends import launcher
from jitmagic.frontends.command import main
from jitmagic.measure.sampling import lockstep
from jitmagic.measure.sampling.lockstep import (
    SINGLE,
    Distributed,
    LockstepError,
    SharedCheckpoint,
    merged,
    shared_by_processes,
)
from jitmagic.measure.sampling.stops import Checkpoint, Stop
from jitmagic.model.comparison import Comparison
from jitmagic.model.rows import slowest
from jitmagic.options import Options

ROOT = Path(__file__).resolve().parents[1]

PLAIN = """\
import jax
import jax.numpy as jnp

def layer(x):
    return jnp.tanh(x @ x.T * 0.1)

def loss(x):
    return jnp.sum(layer(layer(x)))

x = jnp.ones((16, 16))
loss(x)
"""


# --- one process: nothing shared, nothing changed -----------------------------------------


def test_one_process_lockstep_shares_nothing_and_changes_nothing():
    assert not SINGLE.shared and SINGLE.leader
    assert SINGLE.gather("anything", {"a": 1}) == [{"a": 1}]
    assert SINGLE.decide("anything", 7) == 7
    assert SINGLE.slowest("anything", 0.25) == 0.25
    assert SINGLE.env() == {}
    assert lockstep.current() is SINGLE  # this test process never joined jax.distributed
    check = Checkpoint()
    assert shared_by_processes(check, Options(vmap=True)) is check  # one process refuses nothing
    variants = {"flat": variant("flat", every=1.0)}
    assert merged(variants, SINGLE) is variants


def test_a_one_process_report_is_written_as_before():
    d = comparison(every=0.01).to_dict()
    assert "per_process" not in d["variants"]["flat"]
    assert "process_count" not in d["env"]


# --- several processes' samples as one ----------------------------------------------------


def test_the_headline_run_is_the_slowest_process_run_with_its_stages():
    p0 = {"trace_s": [0.5, 0.1], "lower_s": [0.1, 0.1], "compile_s": [1.0, 1.0],
          "first_call_s": [2.0, 1.3], "execute_s": [0.010, 0.030]}
    p1 = {"trace_s": [0.2, 0.2], "lower_s": [0.1, 0.2], "compile_s": [1.5, 1.4],
          "first_call_s": [2.1, 1.9], "execute_s": [0.020, 0.010]}
    got = slowest([p0, p1])
    # both runs: process 1's first call was the slower, so its stages come with it
    assert got["first_call_s"] == [2.1, 1.9]
    assert got["trace_s"] == [0.2, 0.2] and got["compile_s"] == [1.5, 1.4]
    assert got["execute_s"] == [0.020, 0.030]  # steady state: the slowest of each sample
    for run in range(2):  # the stages still fit inside the first call they came from
        assert sum(got[k][run] for k in ("trace_s", "lower_s", "compile_s")) <= \
            got["first_call_s"][run]


def test_only_runs_every_process_has_are_merged():
    got = slowest([{"first_call_s": [1.0, 2.0], "trace_s": [0.1, 0.2]},
                   {"first_call_s": [3.0], "trace_s": [0.3, 0.4]}])
    assert got == {"first_call_s": [3.0], "trace_s": [0.3, 0.4]}
    assert slowest([]) == {}


def test_per_process_is_saved_and_read_back(tmp_path):
    import jitmagic

    each = ({"first_call_s": [1.0], "execute_s": [0.1]},
            {"first_call_s": [2.0], "execute_s": [0.3]})
    flat = variant("flat", slowest(each), per_process=each)
    c = comparison(flat, variant("nested", every=1.0),
                   env={"process_count": 2, "processes": [
                       {"process": 0, "host": "a", "devices": ["cpu:0"]},
                       {"process": 1, "host": "b", "devices": ["cpu:2048"]}]})
    path = tmp_path / "r.json"
    jitmagic.save(c, path)
    saved = json.loads(path.read_text())
    assert saved["variants"]["flat"]["per_process"][1]["first_call_s"] == [2.0]
    loaded = jitmagic.load(path)
    assert loaded.flat.per_process == each and loaded.env["process_count"] == 2
    assert loaded.to_dict() == c.to_dict()
    assert loaded.flat.first_call_s == 2.0  # the slowest process's
    full = loaded.report(verbose=True)
    assert "(1 cold run, the slowest of 2 processes; wall time)" in full.splitlines()[0]
    assert "\nthe slowest of 2 processes · " in str(loaded)  # at a glance too
    old = dict(saved)  # a report without per_process (one process, or an older one) loads
    del old["variants"]["flat"]["per_process"]
    assert Comparison.from_dict(old).flat.per_process == ()


# --- agreeing: stops, timeouts, the helpers -----------------------------------------------


class Two(lockstep.Lockstep):
    """Process 0 of two, the other process's values given."""

    index, count = 0, 2

    def __init__(self, other):
        self.other, self.asked = other, []

    def gather(self, what, value):
        self.asked.append(what)
        return [value, self.other]


def test_the_processes_stop_together_when_any_of_them_is_interrupted():
    check = SharedCheckpoint(Two([True, False, "the flat variant's run 1 of 3"]), Checkpoint())
    check("the flat variant's run 1 of 3")  # no process stops on its own
    check.poll("steady state")
    with pytest.raises(Stop, match=r"interrupted by the user \(process 1\) after the flat"):
        check.agree("the nested variant's run 1 of 3")
    on_time = SharedCheckpoint(Two([False, False, "x"]), Checkpoint())
    on_time.agree("the flat variant's run 1 of 3")  # nobody is due: no stop


def test_a_deadline_passed_on_one_process_stops_all():
    check = SharedCheckpoint(Two([False, True, "x"]), Checkpoint(deadline=math.inf))
    assert check.deadline == math.inf  # no process stops by its own clock
    with pytest.raises(Stop, match="stopped by --timeout"):
        check.agree("the flat variant's run 2 of 3")


def test_the_processes_must_nest_the_same_helpers():
    lockstep.agree_variants(("layer",), Two(["layer"]))
    with pytest.raises(Exception, match="process 0: layer; process 1: norm"):
        lockstep.agree_variants(("layer",), Two(["norm"]))


class Store:
    """The coordination service's key-value store, in memory: a missing key times out."""

    def __init__(self):
        self.kv = {}

    def key_value_set(self, key, value):
        self.kv[key] = value

    def blocking_key_value_get(self, key, timeout_in_ms):
        if key not in self.kv:
            raise RuntimeError("DEADLINE_EXCEEDED: GetKeyValue() timed out")
        return self.kv[key]

    def key_value_delete(self, key):
        self.kv.pop(key, None)


def test_a_process_that_does_not_arrive_ends_the_wait_naming_it():
    store = Store()
    step = Distributed(store, index=0, count=2, timeout_s=0.05)
    with pytest.raises(LockstepError, match="process 0 waited 0.05 s at the timings for "
                                            "process 1, which did not arrive"):
        step.gather("the timings", 1)


def test_processes_at_different_places_are_said_to_be_out_of_step():
    store = Store()
    first, second = Distributed(store, 0, 2), Distributed(store, 1, 2)
    n = next(lockstep._EXCHANGES) + 1  # the next exchange's number
    store.key_value_set(lockstep._key(n, 1), json.dumps(["the helpers to nest", []]))
    with pytest.raises(LockstepError, match="process 0 was at the timings; process 1 was at "
                                            "the helpers"):
        first.gather("the timings", 1)
    assert second.count == 2


# --- bad input ----------------------------------------------------------------------------


@pytest.fixture
def plain(tmp_path):
    path = tmp_path / "plain.py"
    path.write_text(PLAIN)
    return path


@pytest.mark.parametrize("count", ["0", "-2", str((os.cpu_count() or 1) * 4 + 1)])
def test_a_process_count_out_of_range_is_a_usage_error(plain, count, capsys):
    assert main(["--processes", count, str(plain)]) == 2
    err = capsys.readouterr().err
    assert f"--processes must be a whole number from 1 to {launcher.most_processes()}" in err
    assert f"not {count}" in err


@pytest.mark.parametrize("option", [["--vmap"], ["--batch", "4"], ["--lines"], ["--advise"]])
def test_options_not_measured_in_lockstep_are_refused(plain, option, capsys):
    assert main(["--processes", "2", str(plain), *option]) == 2
    assert "cannot be" in capsys.readouterr().err


def test_a_file_that_initializes_jax_distributed_itself_is_refused(tmp_path, capsys):
    path = tmp_path / "own.py"
    path.write_text(PLAIN.replace("import jax\n", "import jax\njax.distributed.initialize()\n"))
    assert main(["--processes", "2", str(path)]) == 2
    err = capsys.readouterr().err
    assert "calls jax.distributed.initialize itself (line 2)" in err


@pytest.mark.parametrize("source, line", [
    ("import jax\njax.distributed.initialize()\n", 2),
    ("from jax import distributed as dist\n\ndist.initialize()\n", 3),
    ("from jax.distributed import initialize\ninitialize('127.0.0.1:1234', 2, 0)\n", 2),
    ("import jax.distributed as jd\njd.initialize()\n", 2),
    ("def initialize():\n    pass\ninitialize()\n", None),  # a function of its own
])
def test_every_spelling_of_initialize_is_found(source, line):
    assert launcher.initializes(source) == line


# --- real processes on loopback -----------------------------------------------------------


def _env(**extra):
    return {**os.environ, "PYTHONPATH": str(ROOT), lockstep.TIMEOUT_ENV: "60", **extra}


def _launch(*argv, timeout=120, tmpdir=None):
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "jitmagic", *argv], capture_output=True,
                          text=True, env=_env() | ({"TMPDIR": str(tmpdir)} if tmpdir else {}),
                          timeout=timeout)
    return done, time.monotonic() - start


@pytest.mark.slow  # two processes on loopback
def test_the_launcher_shows_process_0s_report_with_every_process_samples(plain, tmp_path):
    saved, temporary = tmp_path / "two.json", tmp_path / "tmp"
    temporary.mkdir()
    done, _ = _launch("--processes", "2", str(plain), "-r", "3", "-q", "--save", str(saved),
                      tmpdir=temporary)
    assert done.returncode == 0, done.stderr
    assert not list(temporary.glob("jitmagic-processes-*"))  # its processes' logs removed
    assert done.stdout.count("jitcompare: loss") == 1  # process 0's report, once
    report = json.loads(saved.read_text())
    assert report["env"]["process_count"] == 2
    assert report["options"] == "--processes 2 -r 3 -q"  # as the made … with line says
    assert [p["process"] for p in report["env"]["processes"]] == [0, 1]
    assert report["env"]["processes"][1]["devices"] != report["env"]["processes"][0]["devices"]
    for name in ("flat", "nested"):
        v = report["variants"][name]
        assert len(v["per_process"]) == 2
        assert all(len(p["first_call_s"]) == 3 for p in v["per_process"])
        assert v["samples"] == slowest(v["per_process"])


BIG_TABLE = """\
import jax
import jax.numpy as jnp
import numpy as np

TABLE = jnp.asarray(np.linspace(0.0, 1.0, 1 << 20, dtype=np.float32))  # 4 MiB, captured

def lookup(i):
    return jnp.take(TABLE, i % TABLE.shape[0]) * 2.0

def loss(i):
    return jnp.sum(lookup(lookup(i).astype(jnp.int32)))

i = jnp.arange(64)
loss(i)
"""


@pytest.mark.slow  # two processes on loopback
def test_a_4_mib_constant_under_two_processes_is_left_out_with_a_note(tmp_path):
    path = tmp_path / "big.py"
    path.write_text(BIG_TABLE)
    saved = tmp_path / "big.json"
    done, _ = _launch("--processes", "2", str(path), "-r", "3", "-q", "--save", str(saved))
    assert done.returncode == 0, done.stderr
    report = json.loads(saved.read_text())
    assert report["env"]["process_count"] == 2
    assert report["variants"]["flat"]["constant_bytes"] >= 4 << 20  # it did capture it
    assert "constant_arguments" not in report
    assert any("constants passed as arguments were not measured" in w
               and "2 processes" in w for w in jitmagic.load(saved).warnings)  # said


@pytest.mark.parametrize("option", [["--cache"], ["--effort"], ["--attribute"]])
def test_each_part_of_one_process_is_refused_before_any_process_starts(plain, option, capsys):
    assert main(["--processes", "2", str(plain), *option]) == 2
    assert f"{option[0]} cannot be measured across 2 processes" in capsys.readouterr().err


def test_why_is_refused_before_any_process_starts_naming_the_parts_it_asks_for(plain, capsys):
    assert main(["--processes", "2", str(plain), "--why"]) == 2
    err = capsys.readouterr().err
    assert "--cache (asked by --why), --effort (asked by --why), --lines (asked by --why) " \
        "cannot be measured across 2 processes yet" in err
    assert "leave them out (--why too), or measure in one process" in err
    assert "process 0" not in err  # refused up front: no process was started


USER_STARTED = """\
import json, sys
index, port = int(sys.argv[1]), sys.argv[2]
import jax
jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=2,
                           process_id=index)
import numpy as np
import jax.numpy as jnp
from jax.experimental import multihost_utils
from jax.sharding import Mesh, PartitionSpec as P
import jitmagic

mesh = Mesh(np.array(jax.devices()), ("d",))
x = multihost_utils.host_local_array_to_global_array(
    np.full((4, 8), index + 1.0, np.float32), mesh, P("d"))

def layer(x):
    return jnp.tanh(x * 2.0)

def loss(x):
    return jnp.sum(layer(layer(x)))  # an all-reduce across the two processes

result = jitmagic.compare(loss, x, repeat="auto", budget=3, quiet=True)
print("RESULT " + json.dumps({"variants": result.to_dict()["variants"],
                              "ended": result.repeats_ended, "env": result.env}))
"""


@pytest.mark.slow  # two processes on loopback
def test_processes_the_user_started_get_the_same_comparison(tmp_path):
    script = tmp_path / "mine.py"
    script.write_text(USER_STARTED)
    port = str(launcher.free_port())
    procs = [subprocess.Popen([sys.executable, str(script), str(i), port], env=_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for i in range(2)]
    try:
        outs = [p.communicate(timeout=120)[0] for p in procs]
    finally:
        for p in procs:
            p.kill()
    assert [p.returncode for p in procs] == [0, 0], outs
    results = [json.loads(next(ln for ln in out.splitlines()
                               if ln.startswith("RESULT "))[7:]) for out in outs]
    assert results[0] == results[1]  # the same comparison, -r auto's rounds included
    flat = results[0]["variants"]["flat"]
    assert len(flat["per_process"]) == 2 and results[0]["env"]["process_count"] == 2
    assert len(flat["samples"]["first_call_s"]) >= 3 and results[0]["ended"] is not None


@pytest.mark.slow  # two processes on loopback
def test_a_process_that_exits_early_stops_all_within_a_minute(tmp_path):
    script = tmp_path / "dies.py"
    script.write_text(textwrap.dedent("""\
        import jax
        import jax.numpy as jnp
        import os

        if jax.process_index() == 1:
            os._exit(3)

        def loss(x):
            return jnp.sum(jnp.tanh(x))

        x = jnp.ones((8,))
        loss(x)
        """))
    done, took = _launch("--processes", "2", str(script), "-r", "3", "-q", timeout=90)
    assert took < 60
    assert done.returncode == 3  # the process's own status, passed on
    assert "process 1 exited with status 3" in done.stderr
    assert "stopped processes 0" in done.stderr


#: process 1 fails on the trace of its first cold run (the discovery and preflight traces
#: before it pass), or hangs there.
FAILS_ON_ONE = """\
import time
import jax
import jax.numpy as jnp

HOW = {how!r}
traces = 0

def layer(x):
    return jnp.sin(x) * 2

def loss(x):
    global traces
    traces += 1
    if jax.process_index() == 1 and traces == 3:
        if HOW == "raise":
            raise RuntimeError("no data shard on this host")
        while True:
            time.sleep(1)
    return jnp.sum(layer(x) + layer(x))

loss(jnp.ones(8))
"""


@pytest.mark.slow  # two processes on loopback
def test_one_process_raising_ends_all_at_once_naming_it_and_its_error(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text(FAILS_ON_ONE.format(how="raise"))
    done, took = _launch("--processes", "2", str(script), "-r", "3", "-q", timeout=90)
    assert took < 30 and done.returncode == 1, done.stderr
    assert "process 1 raised in the flat variant's run 1 of 3 (RuntimeError: no data " \
           "shard on this host), and process 0 did not" in done.stderr


@pytest.mark.slow  # two processes on loopback
def test_a_hanging_process_ends_all_after_the_lockstep_timeout(tmp_path):
    script = tmp_path / "hangs.py"
    script.write_text(FAILS_ON_ONE.format(how="hang"))
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "jitmagic", "--processes", "2", str(script),
                           "-r", "3", "-q"], capture_output=True, text=True, timeout=120,
                          env=_env(**{lockstep.TIMEOUT_ENV: "8"}))
    # the wait, the launcher's grace, and no minutes in JAX's shutdown barrier
    assert time.monotonic() - start < 45 and done.returncode == 1, done.stderr
    assert "process 0 waited 8 s at the outcome of the flat variant's run 1 of 3 for " \
           "process 1, which did not arrive" in done.stderr


def _ended(index: int, status: int) -> launcher.Child:
    popen = subprocess.Popen([sys.executable, "-c", f"raise SystemExit({status})"])
    popen.wait(timeout=30)
    return launcher.Child(index, popen, None)


@pytest.mark.slow  # six interpreters
def test_a_measurement_stopped_early_is_not_a_failed_process(capsys):
    # process 0 exits 4 after a --timeout or Ctrl-C stop (its report shown and saved): the
    # launcher passes that on rather than calling it a failure
    assert launcher.watch([_ended(0, 4), _ended(1, 0)]) == 4
    assert launcher.watch([_ended(0, 0), _ended(1, 0)]) == 0
    assert capsys.readouterr().err == ""
    assert launcher.watch([_ended(0, 0), _ended(1, 3)]) == 3
    assert "process 1 exited with status 3" in capsys.readouterr().err


def test_only_process_0_draws_progress(monkeypatch):
    import io

    from jitmagic.frontends import stderr_progress

    log = io.StringIO()
    with stderr_progress.drawing(stderr_progress.StderrProgress(log)) as draw:
        assert draw is not None  # one process (or process 0) draws
    monkeypatch.setattr(stderr_progress, "leads", lambda: False)
    with stderr_progress.drawing(stderr_progress.StderrProgress(log)) as draw:
        assert draw is None  # another process of several draws nothing

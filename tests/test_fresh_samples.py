"""Cold samples in fresh processes where the backend's compiler remembers (issue 60): the
probe that decides it (a CPU does not remember), the sampler with a stand-in backend that
does (a real child per sample, real JAX on the CPU), a child that dies by a signal, Ctrl-C,
and no child at all in a CPU comparison."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from jitmagic.backends import memory
from jitmagic.measure.sampling import fresh
from jitmagic.options import Options
from jitmagic.render.notes import NO_CALL

FIXTURES = Path(__file__).parent / "fixtures" / "fresh"
ROOT = str(Path(__file__).parents[1])


def _env(tmp_path: Path, remembers: str | None) -> dict[str, str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "TMPDIR": str(tmp_path), "PYTHONPATH": ROOT}
    env.pop(memory.STANDIN_ENV, None)
    if remembers is not None:
        env[memory.STANDIN_ENV] = remembers
    return env


def _command(tmp_path: Path, remembers: str | None, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(FIXTURES / "counted.py"), *argv],
                          env=_env(tmp_path, remembers), capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)


def test_the_rule_reads_a_tpus_later_compiles_as_remembered_and_noise_as_not():
    tpu = {"wall": [3.25, 2.89, 2.50, 2.15, 2.40], "cpu": [5.6, 3.3, 2.9, 2.7, 3.0]}
    cpu = {"wall": [0.065, 0.041, 0.040, 0.044, 0.036], "cpu": [0.012, 0.013, 0.011,
                                                                 0.011, 0.013]}
    assert memory.remembers([tpu, tpu]) is True
    assert memory.remembers([cpu, tpu]) is False  # one process's first was only noise
    assert memory.remembers([cpu, cpu]) is False
    # this CPU's probe (2026-12-06): its first compile costs a fifth more, as a first
    # compile in a process does, but it saves milliseconds, not seconds
    first = {"wall": [0.205, 0.179, 0.164, 0.159, 0.164], "cpu": [0.317, 0.265, 0.243,
                                                                  0.235, 0.24]}
    assert memory.remembers([first, first]) is False
    # a TPU v5e's two probes (2026-12-06): the warmth grows compile after compile
    v5e = [{"wall": [2.81, 2.89, 2.56, 2.26, 2.09], "cpu": [4.4, 4.17, 3.56, 3.42, 3.29]},
           {"wall": [2.79, 2.63, 2.95, 2.78, 2.17], "cpu": [4.23, 3.94, 3.87, 3.81, 3.04]}]
    assert memory.remembers(v5e) is True


def test_cached_probes_are_judged_by_todays_rule_not_the_verdict_saved_with_them(
        tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(memory.STANDIN_ENV, raising=False)
    cache = tmp_path / "jitmagic" / "backend-memory" / f"{memory.key()}.json"
    cache.parent.mkdir(parents=True)
    v5e = [{"wall": [2.81, 2.89, 2.56, 2.26, 2.09], "cpu": [4.4, 4.17, 3.56, 3.42, 3.29]},
           {"wall": [2.79, 2.63, 2.95, 2.78, 2.17], "cpu": [4.23, 3.94, 3.87, 3.81, 3.04]}]
    # saved by an earlier rule, which read these probes as no warmth
    cache.write_text(json.dumps({"remembers": False, "platform": "tpu", "probes": v5e}))
    monkeypatch.setattr(fresh, "run_child", lambda *a, **k: pytest.fail("probed again"))
    assert fresh.backend_memory()["remembers"] is True
    assert fresh.session_remembers() is True


@pytest.mark.slow
def test_the_probe_says_a_cpu_does_not_remember_and_is_paid_once(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(memory.STANDIN_ENV, raising=False)
    monkeypatch.setattr(memory, "only_cpu", lambda: False)  # measured, as with libtpu
    found = fresh.backend_memory()
    assert found["remembers"] is False and found["platform"] == "cpu"
    assert len(found["probes"]) == fresh.PROBES
    assert all(len(p["wall"]) == memory.COMPILES for p in found["probes"])
    cached = json.loads(next((tmp_path / "jitmagic" / "backend-memory").iterdir()).read_text())
    assert cached["remembers"] is False
    monkeypatch.setattr(fresh, "run_child", lambda *a, **k: pytest.fail("probed twice"))
    assert fresh.backend_memory()["remembers"] is False
    assert fresh.for_command(fresh.Entry("m", "f"), "x.py", [], Options()) is None


@pytest.mark.slow
def test_each_cold_sample_is_a_fresh_process_where_the_backend_remembers(tmp_path):
    saved = tmp_path / "out.json"
    ran = _command(tmp_path, "1", str(FIXTURES / "small.py"), "-r", "2", "-q",
                   "--save", str(saved), "--", "--size", "3")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines()[-1] == "children 4"  # one per variant and run
    report = json.loads(saved.read_text())
    assert report["options"].endswith(" -- --size 3")  # they make the script's program
    said = report["env"]["cold_samples"]
    assert said["where"] == "fresh" and said["sample_s"] > 0
    assert "cold samples: each a fresh process running the file (" in ran.stdout
    for name in ("flat", "nested"):
        samples = report["variants"][name]["samples"]
        assert len(samples["compile_s"]) == len(samples["first_call_s"]) == 2
        assert len(samples["execute_s"]) == 2 and min(samples["first_call_s"]) > 0
    assert not list(tmp_path.glob("jitmagic-child-*"))


def test_a_child_compiles_its_row_under_the_users_own_name_and_the_session_its_own(monkeypatch):
    """A fresh child compiles one program: the nested one as the user's ``jax.jit(g)`` is
    named (``jit(g)``), not the ``g_nested`` a process comparing both rows gives it."""
    import jax

    from jitmagic._compat import unregister
    from jitmagic.frontends.command import measure_in_child

    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    compiled: list[str] = []

    def heard(event: str, seconds: float, **kwargs) -> None:
        if event == "/jax/core/compile/backend_compile_duration":
            compiled.append(kwargs.get("fun_name", ""))

    jax.monitoring.register_event_duration_secs_listener(heard)
    try:
        child = measure_in_child({"argv": [str(FIXTURES / "small.py"), "-r", "1", "-q"],
                                  "sample": "nested"})
        in_child, compiled[:] = list(compiled), []
        measure_in_child({"argv": [str(FIXTURES / "small.py"), "-r", "1", "-q"]})
    finally:
        unregister("event_duration_listener")(heard)
    assert child["variants"]["nested"]["samples"]["first_call_s"][0] > 0
    assert "jit(g)" in in_child and "jit(g_nested)" not in in_child
    assert {"jit(g)", "jit(g_nested)"} <= set(compiled)


@pytest.mark.slow
def test_a_cpu_comparison_starts_no_child_and_says_nothing_of_samples(tmp_path, monkeypatch):
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")  # only the CPU: nothing to probe
    saved = tmp_path / "out.json"
    ran = _command(tmp_path, None, str(FIXTURES / "small.py"), "-r", "2", "-q",
                   "--save", str(saved))
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines()[-1] == "children 0"
    assert "cold_samples" not in json.loads(saved.read_text())["env"]


@pytest.mark.slow
def test_a_child_that_dies_by_a_signal_is_its_variants_finding(tmp_path):
    ran = _command(tmp_path, "1", str(FIXTURES / "crashes.py"), "-r", "1", "-q")
    assert ran.returncode == 1
    assert "the flat variant (and nested) failed" in ran.stderr
    assert "the child process was killed by SIGSEGV during" in ran.stderr
    assert not list(tmp_path.glob("jitmagic-child-*"))


BOOT = "jitmagic.measure.children.boot"


def _is_boot(p: psutil.Process) -> bool:
    try:
        return BOOT in " ".join(p.cmdline())
    except psutil.Error:
        return False


def _samplers(command: psutil.Process) -> list[psutil.Process]:
    """The command's children that take a cold sample: started by the runner from the
    process that measures (itself a child of the command's own start)."""
    return [p for p in command.children(recursive=True)
            if _is_boot(p) and _is_boot(p.parent() or command)]


@pytest.mark.slow
@pytest.mark.parametrize(("failure", "remembers", "said"), [
    ("raise", "0", "ValueError: the nested variant's own error"),
    ("raise", "1", "ValueError: the nested variant's own error"),
    ("crash", "1", "killed by SIGSEGV")], ids=["raises here", "raises in a child",
                                                "dies in a child"])
def test_a_variant_that_raises_or_dies_is_shown_and_the_status_says_so(
        tmp_path, failure, remembers, said):
    """No run of the nested variant finished: the helper it nested is shown, and no note
    says its program had no jit call of it (that program's calls were never read)."""
    saved = tmp_path / "out.json"
    ran = _command(tmp_path, remembers, str(FIXTURES / "nested_fails.py"), "-r", "1", "-q",
                   "--save", str(saved), "--", failure)
    assert ran.returncode == 1, ran.stderr  # as for a raise before it: 0 would pass a gate
    assert "Only one variant ran; see its error below." in ran.stdout
    assert said in ran.stdout + ran.stderr
    report = json.loads(saved.read_text())
    assert report["variants"]["flat"]["samples"]["first_call_s"][0] > 0
    assert said in report["variants"]["nested"]["error"]
    assert report["variants"]["nested"]["helpers"] == ["layer"]
    assert NO_CALL not in " ".join(ran.stdout.split()), ran.stdout
    if failure == "crash":  # where, as this process counts its runs, and the user's frame
        error = report["variants"]["nested"]["error"]
        assert "failed, in your function `_fail`" in error
        assert "during the nested variant's run 1 of 1 · first call" in error
        assert 'nested_fails.py", line 14 in _fail' in error


@pytest.mark.slow
def test_a_raise_in_a_child_reads_as_the_same_raise_here(tmp_path):
    """One message: the parent's variant and the user's own exception, as without children;
    not the child's round (it runs -r 1) nor its message around the parent's."""
    errors = {}
    for remembers in ("0", "1"):
        saved = tmp_path / f"out{remembers}.json"
        ran = _command(tmp_path, remembers, str(FIXTURES / "nested_fails.py"), "-r", "2",
                       "-q", "--save", str(saved), "--", "raise")
        assert ran.returncode == 1, ran.stderr
        assert ran.stdout.count("the nested variant failed") == 1, ran.stdout
        assert "ValueError: the nested variant's own error" in ran.stdout
        errors[remembers] = json.loads(saved.read_text())["variants"]["nested"]["error"]
    child = errors["1"]
    assert 'nested_fails.py", line 15, in _fail' in child  # the user's frame
    for wrapper in ("1/1", "without a result", "UserCodeError", "fresh process", "(while"):
        assert wrapper not in child, child
    # the same text but for the frames JAX's message lists, cut to the user's files (the
    # harness's own counted.py is one here): neither jitmagic's nor JAX's are shown
    assert [ln for ln in child.splitlines() if not ln.startswith("  File ")] == \
        [ln for ln in errors["0"].splitlines() if not ln.startswith("  File ")]
    for error in errors.values():
        frames = [ln for ln in error.splitlines() if ln.startswith("  File ")]
        assert frames[-1].endswith('nested_fails.py", line 15, in _fail'), error
        assert not any("jitmagic/" in ln or "jax/" in ln for ln in frames), error
        assert "JAX_TRACEBACK_FILTERING" not in error  # JAX's note on frames none shows


@pytest.mark.slow
def test_the_progress_shows_the_parents_structure_run_as_a_warm_up_not_a_first_call(tmp_path):
    ran = _command(tmp_path, "1", str(FIXTURES / "small.py"), "-r", "1")
    assert ran.returncode == 0, ran.stderr
    lines = ran.stderr.splitlines()  # not a terminal: a line per stage
    for name in ("flat", "nested"):
        assert [ln.split(" · ")[1] for ln in lines if f": {name} 1/1 · " in ln] == \
            ["first call, in a fresh process", "warm-up"], ran.stderr


@contextlib.contextmanager
def _hanging(tmp_path: Path) -> Iterator[tuple[subprocess.Popen, list[psutil.Process]]]:
    """The command on hangs.py, once its first child is into its two minutes' hang; with
    the children taking a sample. Killed, with all its processes, where a test failed."""
    command = subprocess.Popen([sys.executable, "-m", "jitmagic", str(FIXTURES / "hangs.py"),
                                "-r", "3", "-q"], env=_env(tmp_path, "1"), cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    parent, end = psutil.Process(command.pid), time.monotonic() + 120
    try:
        while not _samplers(parent) and time.monotonic() < end:
            time.sleep(0.05)
        children = _samplers(parent)
        assert children, "no child started"
        time.sleep(1)  # into its hang
        yield command, children
    finally:  # a failing run leaves nothing either
        if command.poll() is None:
            for p in (*parent.children(recursive=True), parent):
                with contextlib.suppress(psutil.Error):
                    p.kill()
            command.communicate()


def _ended(processes: list[psutil.Process]) -> bool:
    """Whether each of ``processes`` has ended (within 10 s)."""
    end = time.monotonic() + 10
    while any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in processes):
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.slow
def test_ctrl_c_ends_the_children_with_the_command_and_leaves_nothing(tmp_path):
    """The child hangs (two minutes): the command ends it at the Ctrl-C, not after."""
    with _hanging(tmp_path) as (command, children):
        command.send_signal(signal.SIGINT)
        out, err = command.communicate(timeout=60)  # the hang's end is 120 s away
    assert "interrupted by the user" in out + err, out + err
    # no sample ended with a result: where they were taken is said, with no cost
    assert "cold samples: each a fresh process running the file: the compiler here " \
        "remembers" in out, out
    assert _ended(children)
    assert not list(tmp_path.glob("jitmagic-child-*"))


@pytest.mark.slow
def test_a_command_killed_outright_leaves_folders_only_until_the_next_command(tmp_path):
    """SIGKILL (the OOM killer's) ends the command with no cleanup: its children die with it,
    and the next command removes the folders it left, never those of one still running."""
    with _hanging(tmp_path) as (killed, _):
        left = set(tmp_path.glob("jitmagic-child-*"))
        with _hanging(tmp_path) as (running, _):
            kept = set(tmp_path.glob("jitmagic-child-*")) - left
            assert len(left) == len(kept) == 2  # the watched child's, and its sample's
            tree = [psutil.Process(killed.pid), *psutil.Process(killed.pid).children(True)]
            killed.kill()
            killed.wait()
            assert _ended(tree)  # they die with it, and nothing ran to remove their folders
            assert set(tmp_path.glob("jitmagic-child-*")) == left | kept
            ran = subprocess.run([sys.executable, "-m", "jitmagic", str(FIXTURES / "small.py"),
                                  "-r", "1", "-q"], env=_env(tmp_path, "0"), cwd=tmp_path,
                                 capture_output=True, text=True, timeout=300)
            assert ran.returncode == 0, ran.stderr
            assert set(tmp_path.glob("jitmagic-child-*")) == kept
            running.send_signal(signal.SIGINT)
            running.communicate(timeout=60)
    assert not list(tmp_path.glob("jitmagic-child-*"))


def _target_run(compile_s: list[float], cpu: list[float]) -> dict[str, list[float]]:
    runs = len(compile_s)
    return {"trace_s": [0.4] * runs, "trace_cpu_s": [0.4] * runs, "lower_s": [0.2] * runs,
            "lower_cpu_s": [0.2] * runs, "compile_s": compile_s, "compile_cpu_s": cpu}


def test_target_leaves_its_warm_compiles_out_as_the_main_comparison_does():
    from support import comparison

    from jitmagic.model.target import TargetCompile
    from jitmagic.render.target import headline, warm_lines

    flat = _target_run([3.3, 3.2, 3.4, 3.3], [3.3, 3.2, 3.4, 3.3])
    warm_nested = _target_run([3.3, 1.0, 1.1, 3.2], [3.3, 1.0, 1.1, 3.2])
    cold_nested = _target_run([3.3, 3.2], [3.3, 3.2])
    record = TargetCompile("v5e:2x2", 4, "TPU v5 lite", "2-core CPU", "one device",
                           warm={"nested": (1, 2)})
    said = [headline(comparison(flat, nested, env={"target": record.to_dict()}), record)
            for nested in (warm_nested, cold_nested)]
    assert said[0] == said[1]  # the warm runs read as if never taken
    assert "left out of the medians and the verdict" in warm_lines(record)[0]


def test_a_process_that_holds_the_device_gives_the_sessions_figures_and_the_cold_command(
        monkeypatch):
    import jax.numpy as jnp

    import jitmagic

    def f(x):
        return jnp.sin(x) * 2

    def g(x):
        return f(x) + f(x)

    monkeypatch.setenv(memory.STANDIN_ENV, "1")  # the backend remembers, as a TPU's does
    said = jitmagic.compare(g, jnp.ones(8), repeat=1, quiet=True)
    assert said.env["cold_samples"] == {"where": "session"}
    for full in (said.report(), said.report(verbose=True)):
        assert "figures: this session's" in full
        assert "put the code that sets up and calls `g` (a cell's, without its %%jitcompare " \
            "line) in FILE.py and run python -m jitmagic FILE.py -r 1" in " ".join(full.split())
    magic = dataclasses.replace(said, options="-r 2 -o --no-plot --nest f")
    assert "run python -m jitmagic FILE.py -r 2 --nest f" in " ".join(magic.report().split())
    # a part, a sweep or a target keeps the command's samples here: the cold command leaves
    # them out, or it would give this session's figures again
    parts = dataclasses.replace(said, options="-r 2 --effort --sweep n=1,2 --why --nest f",
                                file="/tmp/cell.py")
    assert "run python -m jitmagic cell.py -r 2 --nest f (without --sweep, --why: with " \
        "them, the command too keeps its samples in one process)" in \
        " ".join(parts.report().split())
    why = dataclasses.replace(said, options="--lines --cache --xla --effort --why", file="c.py")
    assert "c.py (without --why: with it, the command" in " ".join(why.report().split())
    fresh_said = "cold samples: each a fresh process running the file: the compiler"
    for crafted, said_fresh in (  # another's report: untrusted, never a crash
            ({"where": "fresh", "sample_s": "7\x1b[31m"}, True),
            ("fresh", False), ({"where": ["fresh"]}, False)):
        shown = dataclasses.replace(said, env={**said.env, "cold_samples": crafted}).report()
        assert "\x1b" not in shown
        assert (fresh_said in " ".join(shown.split())) is said_fresh
    script = dataclasses.replace(said, options="-r 2 --effort -- --effort --depth 3")
    assert "run python -m jitmagic FILE.py -r 2 -- --effort --depth 3 (without --effort:" in \
        " ".join(script.report().split())
    swept = jitmagic.sweep("n", [2, 3], lambda x: g(x), jnp.ones(8), repeat=1, quiet=True)
    from jitmagic.render.sweep import sweep_text

    brief = " ".join(sweep_text(swept).split())
    assert "bind `n` at the file's top to one of its values (`n = 2`) and run python -m " \
        "jitmagic FILE.py -r 1" in brief
    assert " ".join(sweep_text(swept, verbose=True).split()).count("this session's") == 1
    monkeypatch.setenv(memory.STANDIN_ENV, "0")
    here = jitmagic.compare(g, jnp.ones(8), repeat=1, quiet=True)
    assert "cold_samples" not in here.env
    from jitmagic.render.diff import warnings

    changed = " ".join(warnings(jitmagic.diff(here, said)))
    assert "cold samples in the measuring process → in a process that had compiled before" \
        in changed


def test_the_children_measure_the_comparison_alone_with_the_commands_own_options(monkeypatch):
    monkeypatch.setenv(memory.STANDIN_ENV, "1")
    entry = fresh.Entry("m", "f")
    spawn = fresh.for_command(entry, "cell.py", ["--size", "3"],
                              Options(nest=("f",), number=5, repeat=7))
    assert spawn is not None and spawn.entry == entry
    assert spawn.argv == ("cell.py", "-r", "1", "-q", "-n", "5", "--nest", "f", "--",
                          "--size", "3")
    for part in ({"xla": True}, {"cache": True}, {"effort": True}, {"sweep": ("n", (1, 2))},
                 {"why": True}, {"batch": 4}, {"lines": True}):
        assert fresh.for_command(entry, "cell.py", [], Options(**part)) is None

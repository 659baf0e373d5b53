"""--target TOPOLOGY (issue 52): flat and nested compiled for a TPU this machine lacks.

The tests that compile need libtpu (``pip install -e ".[tpu]"``; CI installs it) and
skip cleanly without it; the names, the refusals and the missing-libtpu message need
nothing. Every compile here is a real one, with libtpu's compile-only client.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import pytest
from support import SMALL_CELL

import jitmagic
from jitmagic.backends import memory
from jitmagic.backends import target as tpu
from jitmagic.errors import InputError
from jitmagic.model.stats.units import fmt_s
from jitmagic.model.target import (
    ONE_DEVICE,
    REPLICATED,
    YOURS,
    compile_difference,
    target_clock,
    target_of,
)
from jitmagic.options import Options
from jitmagic.render.blocks import SESSION, TARGET_SESSION
from jitmagic.render.bundle import text as report_text
from jitmagic.render.target import FOLDED
from jitmagic.render.verdicts import judged

libtpu = pytest.mark.skipif(not tpu.libtpu_installed(),
                            reason='needs libtpu: pip install -e ".[tpu]"')
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def full(r) -> str:
    """The report in full (``-v``): what these tests read."""
    return report_text(r, verbose=True)


def f(x):
    return sum(i * jnp.sin(x) for i in range(16))


def g(x):
    return sum(f(x) for _ in range(8))


# --------------------------------------------------------------- names, refusals, no libtpu


def test_a_topology_name_is_read_as_libtpu_takes_it():
    assert tpu.parse("v5e:1x1").host_bounds == (1, 1, 1)
    assert tpu.parse("V5E:2x4").name == "v5e:2x4"
    assert tpu.parse("v5e:2x4").host_bounds == (2, 2, 1)
    assert tpu.parse("v5p:2x2x1").chips == (2, 2, 1)
    assert tpu.parse("v5p:2x2x1").chip.hbm_bytes == 95 * 2**30


@pytest.mark.parametrize(("name", "said"), [
    ("v5litepod-4", "did you mean v5e:2x2?"),
    ("v5litepod-8", "did you mean v5e:2x4?"),
    ("v5e:3x3", "whole hosts of 2x2x1 chips"),
    ("v5e:2x32", "at most 16 chips along an axis"),  # libtpu aborts the process there
    ("v5e:16x16x2", "a v5e slice is 2-D, at most 16 chips along an axis"),  # it aborts too
    ("v6e:2x2x2", "write e.g. v6e:2x2"),
    ("v4:64x64x64", "is 262144 chips: a v4 slice has at most 4096; write a smaller one, "
                    "e.g. v4:16x16x16"),  # libtpu: "limit -674"
    ("v5p:32x32x32", "a v5p slice has at most 8960"),
    ("v5x:2x2", "did you mean v5p:2x2?"),
    ("tpu", "KIND:AxB"),
    ("v5e:2", "KIND:AxB"),
])
def test_a_bad_topology_name_says_what_would_do(name, said):
    with pytest.raises(InputError, match="--target") as caught:
        Options(target=name)
    assert said in str(caught.value)


@pytest.mark.parametrize("option", ["vmap", "cache", "advise", "lines", "why", "attribute"])
def test_options_that_need_the_device_are_refused_up_front_with_why(option):
    with pytest.raises(InputError, match=f"--target .* cannot take --{option}"):
        Options(target="v5e:1x1", **{option: True})


def test_the_options_that_read_a_compile_are_taken():
    chosen = Options(target="v5e:1x1", xla=True, repeat=3, nest="f")
    assert chosen.target == "v5e:1x1" and chosen.xla


def test_without_libtpu_the_error_names_the_install(monkeypatch):
    monkeypatch.setattr(tpu, "libtpu_installed", lambda: False)
    with pytest.raises(InputError) as caught:
        jitmagic.compare(g, jnp.ones(8), target="v5e:1x1", repeat=1, quiet=True)
    assert 'pip install "jitmagic[tpu]"' in str(caught.value)
    assert "libtpu" in str(caught.value) and "not installed" in str(caught.value)


@pytest.mark.slow
def test_the_command_without_libtpu_says_what_to_install(tmp_path):
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "sitecustomize.py").write_text('import sys; sys.modules["libtpu"] = None\n')
    script = tmp_path / "cell.py"  # refused before the user's code runs (a new user's
    script.write_text("print('RAN')\n" + SMALL_CELL)  # file ran 21 s first)
    done = subprocess.run([sys.executable, "-m", "jitmagic", str(script), "--target",
                           "v5e:1x1", "-q"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300,
                          env={**os.environ, "PYTHONPATH": f"{hidden}{os.pathsep}{ROOT}"})
    assert done.returncode == 2 and "RAN" not in done.stdout
    assert 'not installed in this Python' in done.stderr
    assert 'pip install "jitmagic[tpu]"' in done.stderr


def test_libtpus_variables_are_set_only_while_it_starts(monkeypatch):
    monkeypatch.delenv("TPU_SKIP_MDS_QUERY", raising=False)
    monkeypatch.setenv("ALLOW_MULTIPLE_LIBTPU_LOAD", "0")  # the user's own: kept
    with tpu.libtpu_environment():
        assert os.environ["TPU_SKIP_MDS_QUERY"] == "1"
        assert os.environ["ALLOW_MULTIPLE_LIBTPU_LOAD"] == "0"
    assert "TPU_SKIP_MDS_QUERY" not in os.environ
    assert os.environ["ALLOW_MULTIPLE_LIBTPU_LOAD"] == "0"


def test_native_stderr_is_kept_off_the_output(capfd):
    kept: list[str] = []
    with tpu.native_stderr_kept(kept):
        os.write(2, b"WARNING: could not determine TPU accelerator type\n")
    assert "accelerator type" in kept[0]
    assert "accelerator type" not in capfd.readouterr().err


# --------------------------------------------------------------- real compiles for a TPU


@libtpu
def test_compare_compiles_both_variants_for_the_tpu_and_runs_nothing():
    before = (jax.devices(), os.environ.get("JAX_PLATFORMS"),
              os.environ.get("TPU_SKIP_MDS_QUERY"))
    r = jitmagic.compare(g, jnp.ones(128), target="v5e:1x1", repeat=3, quiet=True)
    assert (jax.devices(), os.environ.get("JAX_PLATFORMS"),
            os.environ.get("TPU_SKIP_MDS_QUERY")) == before
    t = target_of(r.env)
    assert t is not None and t.topology == "v5e:1x1" and t.devices == 1
    assert t.device_kind == "TPU v5 lite" and t.placement == ONE_DEVICE
    for v in r.variants.values():
        assert [len(v.samples[s]) for s in ("trace_s", "lower_s", "compile_s")] == [3, 3, 3]
        assert all(x > 0 for x in v.samples["compile_s"])
        assert v.samples["first_call_s"] == [] and v.samples["execute_s"] == []
    assert r.nested.helpers == ("f",) and r.nested.helper_calls == {"f": 8}
    assert r.flat.jaxpr_eqns > r.nested.jaxpr_eqns
    # XLA's analyses are the TPU's: its memory analysis counts code for the TPU
    assert t.memory["flat"].argument_bytes == 128 * 4 and t.memory["flat"].code_bytes > 0
    assert t.fits("flat") is True and r.flat.compiled_flops > 0


@libtpu
def test_the_report_says_whose_seconds_and_what_cannot_be_measured(monkeypatch):
    monkeypatch.setattr(tpu, "CALIBRATION", {})  # a host kind measured on no TPU
    r = jitmagic.compare(g, jnp.ones(128), target="v5e:1x1", repeat=3, quiet=True)
    text = full(r)
    clock = target_clock(r.flat.samples, r.nested.samples)  # CPU time where it was busy
    d = compile_difference(r.flat.samples, r.nested.samples, clock)
    headline = text.splitlines()[1]
    assert headline.startswith(judged("Compiling for v5e:1x1 (trace + lower + XLA compile) "
                                      "with nesting", d, clock))  # the one rule's verdict
    assert all(len(v.samples["wait_s"]) == 3 for v in r.variants.values())  # how busy
    # the record's verdict is that one too, not an unmeasured first call's
    assert (r.verdict.key, r.verdict.kind, r.verdict.clock) == ("target_compile", d.kind, clock)
    assert r.verdict.headline == headline and r.to_dict()["verdict"]["target_compile"] == d.kind
    # by default the answer alone: the title, the verdict, where the arguments were placed,
    # where the rest is
    short = report_text(r).splitlines()
    assert short == [*text.splitlines()[:2], "arguments: on the topology's one device",
                     f"(-v shows {FOLDED})"]
    assert "first call  " in text and text.count("not measurable: nothing runs without") == 2
    assert f"seconds of this host ({tpu.host_kind()})" in text
    assert f"calibration: none for this host ({tpu.host_kind()}) and v5e yet" in text
    assert "of 16 GiB HBM: fits" in text
    assert "XLA compile for TPU v5 lite" in text
    again = jitmagic.Comparison.from_dict(json.loads(json.dumps(r.to_dict())))
    assert full(again) == text  # a saved report keeps the target


@libtpu
def test_a_calibration_for_this_host_is_quoted(monkeypatch):
    found = tpu.Calibration(tpu.host_kind(), "v5e:1x1", 4.5, 3.9, 5.2, "a test's figures",
                            2.34, 1.12)
    monkeypatch.setitem(tpu.CALIBRATION, tpu.host_kind(), found)
    r = jitmagic.compare(g, jnp.ones(16), target="v5e:1x1", repeat=1, quiet=True)
    assert ("calibration (a test's figures; v5e, measured on v5e:1x1, wall time on a quiet "
            "machine): the TPU host took 3.90× to 5.20× this host's compile seconds, by "
            "program (median 4.50×)") in full(r)
    assert ("the discussion's example compiled 2.34× faster nested here and 1.12× on the "
            "TPU: a verdict here says which way nesting goes there, not by how much") in full(r)
    v4 = jitmagic.compare(g, jnp.ones(16), target="v4:2x2x1", repeat=1, quiet=True)
    assert f"calibration: none for this host ({tpu.host_kind()}) and v4 yet" in full(v4)


@libtpu
def test_where_the_compiler_remembers_the_figures_are_the_sessions_with_no_cold_command(
        monkeypatch):
    # compiled for in this process, after compiles before: said as every comparison taken
    # in one process says it, without a command (none gives cold figures for a topology)
    monkeypatch.setenv(memory.STANDIN_ENV, "1")  # the backend remembers, as a TPU's does
    r = jitmagic.compare(g, jnp.ones(16), target="v5e:1x1", repeat=2, quiet=True)
    assert r.env["cold_samples"] == {"where": "session"}
    short, text = (" ".join(t.split()) for t in (report_text(r), full(r)))
    assert SESSION.format("compiles") + TARGET_SESSION in short  # in the answer, its verdict
    assert "warm compiles are left out" in short  # it runs none: its compiles are judged
    assert text.count("this session's") == 1 and "python -m jitmagic" not in text
    monkeypatch.setenv(memory.STANDIN_ENV, "0")  # a CPU's: nothing said
    here = jitmagic.compare(g, jnp.ones(16), target="v5e:1x1", repeat=1, quiet=True)
    assert "cold_samples" not in here.env and "this session's" not in full(here)


def test_this_machines_calibration_is_the_one_measured():
    """The figures of docs/benchmarks.md (2026-12-06): a 2-core x86_64 CPU against the
    TPU v5e host's chip, each program in fresh processes."""
    found = tpu.calibration("v5e:2x2", "2-core x86_64 CPU")
    assert found is not None and (found.low, found.tpu_over_here, found.high) == (2.6, 7.4, 15.5)
    assert tpu.calibration("v5p:2x2x1", "2-core x86_64 CPU") is None  # another TPU kind
    assert tpu.calibration("v5e:1x1", "13-core x86_64 CPU") is None


@libtpu
def test_xla_reads_the_tpu_compilers_passes():
    r = jitmagic.compare(g, jnp.ones(128), target="v5e:1x1", repeat=1, xla=True, quiet=True)
    flat = r.xla_passes.compiles["flat"]
    assert flat.backend == "tpu"
    assert "tpu_fusion" in [p.name for p in flat.passes]
    fusion = {n.key: n for n in flat.named}["main_fusion"]
    assert fusion.biggest == "Main fusion (jit_g)" and 0 < fusion.seconds < flat.compile_s
    assert "Main fusion (jit_g)" in full(r)
    host = r.env["target"]["host"] if isinstance(r.env["target"], dict) else r.env["target"].host
    assert (f"flat: profiled compile {fmt_s(flat.compile_s)} for the TPU v5e:1x1, on this "
            f"host ({host}): this host's seconds;") in full(r)
    assert "on the TPU;" not in full(r)  # the seconds are not the TPU host's


@libtpu
def test_effort_compiles_the_flat_program_for_the_target_at_the_tpus_settings():
    r = jitmagic.compare(g, jnp.ones(128), target="v5e:1x1", repeat=1, effort=True,
                         quiet=True)
    t = target_of(r.env)
    assert list(t.effort) == ["default", "jax_optimization_level=O0"]
    for row in t.effort.values():
        assert 3 <= len(row.compile_s) <= 5 and all(s > 0 for s in row.compile_s)
        assert len(row.compile_cpu_s) == len(row.compile_s) and row.error is None
    assert r.part("effort") is None  # this host's effort part, which calls, did not run
    assert "what a call costs at it is not measurable without the TPU" in full(r)


@libtpu
@pytest.mark.slow
def test_in_ipython_a_topology_libtpu_aborts_on_is_said_and_the_kernel_lives(
        run_magic, monkeypatch):
    """libtpu 0.0.42 describes v5e:16x16x2 but aborts the whole process compiling for it
    (the name check refuses it now: lifted here, as for a layout it does not know). The
    first compile for a topology is a child process's: the cell fails with libtpu's
    reason in one line, and the kernel measures on."""
    from IPython.core.error import UsageError

    lifted = dataclasses.replace(tpu.CHIPS["v5e"], axes=None, most_chips=10 ** 6)
    monkeypatch.setitem(tpu.CHIPS, "v5e", lifted)
    with pytest.raises(UsageError) as caught:
        run_magic("-r 1 --target v5e:16x16x2", SMALL_CELL)
    said = str(caught.value)
    assert said.startswith("--target v5e:16x16x2: libtpu killed the process compiling for "
                           "it (SIGABRT): Check failed: Topology()->chip_bounds().z == 1")
    assert "\n" not in said and "this one lives on" in said
    result, _ = run_magic("-o -r 1 --target v5e:1x1", SMALL_CELL)  # the kernel lives
    assert target_of(result.env).topology == "v5e:1x1"


@libtpu
def test_a_topology_libtpu_refuses_in_the_child_is_an_input_error_with_its_words():
    from jitmagic.measure.target import topology_devices

    unchecked = tpu.Topology("v5e:4x3", "v5e", (4, 3))  # past the name check
    with pytest.raises(InputError) as caught:
        topology_devices(unchecked)
    assert str(caught.value).startswith("--target v5e:4x3: libtpu refused it: ")
    assert 'Topology layout "v5e:4x3" is not divisible' in str(caught.value)


@libtpu
def test_a_topology_compiled_for_in_a_child_is_compiled_for_here_after(monkeypatch):
    from jitmagic.measure import target as measure_target

    started: list[str] = []
    real = measure_target.run_child
    monkeypatch.setattr(measure_target, "run_child",
                        lambda what, given, **kw: started.append(given["name"])
                        or real(what, given, **kw))
    monkeypatch.setattr(measure_target, "_CHECKED", set())
    for _ in range(2):
        assert len(measure_target.topology_devices(tpu.parse("v5e:2x2"))) == 4
    assert started == ["v5e:2x2"]


@libtpu
def test_in_ipython_the_magic_leaves_jax_and_the_environment_as_they_were(run_magic):
    before = (jax.devices(), os.environ.get("JAX_PLATFORMS"),
              os.environ.get("TPU_SKIP_MDS_QUERY"), os.environ.get("ALLOW_MULTIPLE_LIBTPU_LOAD"))
    result, cap = run_magic("-o -r 1 --target v5e:1x1", SMALL_CELL)
    assert target_of(result.env).topology == "v5e:1x1"
    assert result.nested.helpers == ("layer",)
    assert (jax.devices(), os.environ.get("JAX_PLATFORMS"), os.environ.get("TPU_SKIP_MDS_QUERY"),
            os.environ.get("ALLOW_MULTIPLE_LIBTPU_LOAD")) == before
    assert "nothing runs without the TPU" in cap.outputs[0].data["text/html"]  # folded


SHARDED = """\
import jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
def layer(x):
    return jnp.tanh(x @ x.T) @ x
def model(x):
    for _ in range(4):
        x = x + layer(x)
    return x
mesh = Mesh(jax.devices()[:4], ("data",))
x = {put}
model(x)
"""

ON_MESH = 'jax.device_put(jnp.ones((512, 256)), NamedSharding(mesh, P("data")))'


def _command(tmp_path, source: str, *options: str) -> tuple[subprocess.CompletedProcess, dict]:
    path, saved = tmp_path / "cell.py", tmp_path / "r.json"
    path.write_text(source)
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4",
           "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, "-m", "jitmagic", str(path), "-q", "--save",
                           str(saved), *options], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)
    return done, (json.loads(saved.read_text()) if saved.exists() else {})


@libtpu
@pytest.mark.slow
def test_a_sharded_cell_is_compiled_with_its_shardings_on_four_chips_its_jits_too(tmp_path):
    done, yours = _command(tmp_path, SHARDED.format(put=ON_MESH), "-r", "1",
                           "--target", "v5e:2x2")
    assert done.returncode == 0, done.stderr
    _, replicated = _command(tmp_path, SHARDED.format(put="jnp.ones((512, 256))"), "-r", "1",
                             "--target", "v5e:2x2")
    mine, every = target_of(yours["env"]), target_of(replicated["env"])
    assert (mine.placement, mine.devices, every.placement) == (YOURS, 4, REPLICATED)
    # the batch split over 4 chips: each holds a quarter of the argument
    assert mine.memory["flat"].argument_bytes * 4 == every.memory["flat"].argument_bytes
    assert "your shardings, over the topology's 4 devices" in done.stdout
    # the in_shardings of the user's own jit, the arrays plain
    jitted = SHARDED.format(put="jnp.ones((512, 256))").replace(
        "model(x)\n", 'jax.jit(model, in_shardings=NamedSharding(mesh, P("data")))(x)\n')
    done, given = _command(tmp_path, jitted, "-r", "1", "--target", "v5e:2x2")
    assert done.returncode == 0, done.stderr
    theirs = target_of(given["env"])
    assert theirs.placement == YOURS
    assert theirs.memory["flat"].argument_bytes == mine.memory["flat"].argument_bytes
    assert "libtpu" not in done.stderr.lower() or "warning" not in done.stderr.lower()


@libtpu
@pytest.mark.slow
def test_the_command_refuses_a_bad_topology_with_a_did_you_mean(tmp_path):
    done = subprocess.run([sys.executable, "-m", "jitmagic", "demo", "--target", "v5lite:1x1"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 2
    assert "did you mean v5e:1x1?" in done.stderr
    odd = subprocess.run([sys.executable, "-m", "jitmagic", "demo", "--target", "v5e:3x3"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert odd.returncode == 2 and "whole hosts of 2x2x1 chips" in odd.stderr
    assert "finding helpers" not in odd.stderr  # refused before the cell ran
    long = subprocess.run([sys.executable, "-m", "jitmagic", "demo", "--target", "v5e:2x64"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert long.returncode == 2, long.stderr  # libtpu would abort the process (SIGABRT)
    assert "at most 16 chips along an axis" in long.stderr


@libtpu
def test_the_command_keeps_libtpus_start_up_warnings_off_the_report(tmp_path):
    """With libtpu installed and no JAX_PLATFORMS, JAX starts libtpu with its backends and
    libtpu prints its warnings (accelerator type, worker hostnames) above the report:
    the command's own process, which runs nothing on a device, starts the CPU only.
    (ALLOW_MULTIPLE_LIBTPU_LOAD: libtpu starts, and warns, even where another process
    holds it.)"""
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}
    env["ALLOW_MULTIPLE_LIBTPU_LOAD"] = "1"
    done = subprocess.run([sys.executable, "-m", "jitmagic", "demo", "--target", "v5e:1x1",
                           "-r", "2", "--html", str(tmp_path / "demo.html")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "jitcompare --target v5e:1x1" in done.stdout
    assert "TPU_WORKER_HOSTNAMES" not in done.stdout + done.stderr
    assert "accelerator type" not in done.stdout + done.stderr


def test_the_command_refuses_processes_with_target_before_the_script_runs(tmp_path):
    script = tmp_path / "cell.py"
    script.write_text("print('RAN')\n" + SMALL_CELL)
    done = subprocess.run([sys.executable, "-m", "jitmagic", str(script), "--target",
                           "v5e:1x1", "--processes", "2"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "RAN" not in done.stdout
    assert "--target compiles for the TPU in this one process and runs nothing, so it " \
           "cannot take --processes" in done.stderr


@libtpu
def test_a_stop_before_any_compile_and_different_programs_are_said():
    """A new user's --timeout run read 'nothing to nest, so flat alone was compiled' with
    nothing compiled; a cell whose variants the TPU compiler built differently (45
    against 196 instructions) read nothing of it, beside a verdict on compile time."""
    from support import comparison

    from jitmagic.render.target import program_lines

    stopped = jitmagic.compare(g, jnp.ones(16), target="v5e:1x1", timeout=1e-6, quiet=True)
    headline = full(stopped).splitlines()[1]
    assert headline.endswith(f"{stopped.stopped}, before any compile finished.")
    assert "nothing to nest" not in headline
    assert program_lines(comparison(same_compiled=False))[0].startswith(
        "XLA compiled the variants to DIFFERENT programs for the target")
    assert "the same program for the target" in program_lines(comparison(same_compiled=True))[0]
    assert program_lines(comparison()) == []  # not compared: nothing said
    r = jitmagic.compare(g, jnp.ones(16), target="v5e:1x1", repeat=1, quiet=True)
    assert r.same_compiled is True and "the same program for the target" in full(r)


def test_an_inconclusive_compile_verdict_says_inconclusive_before_any_ratio():
    """Issue 58: the headline read "... is 1.24× faster (0.30×–3.64×): inconclusive", the
    direction word first; an undecided verdict says so first, then the gap it saw."""
    from support import comparison

    from jitmagic.model.target import TARGET, TargetCompile

    t = TargetCompile("v5e:2x2", 4, "TPU v5 lite", "a host", "replicated")
    stages = {"lower_s": [0.1] * 3, "first_call_s": [], "execute_s": []}
    r = comparison({**stages, "trace_s": [1.0, 2.0, 3.0], "compile_s": [1.0, 3.0, 2.0]},
                   {**stages, "trace_s": [1.5, 1.0, 2.5], "compile_s": [2.5, 1.0, 2.0]},
                   env={TARGET: t.to_dict()})
    assert r.verdict.kind == "inconclusive"
    assert report_text(r).splitlines()[1] == (
        "Compiling for v5e:2x2 (trace + lower + XLA compile) with nesting: inconclusive, "
        "1.24× faster (0.30×–3.64×) after 3 runs; -r auto or a larger -r (say -r 9) may tell.")

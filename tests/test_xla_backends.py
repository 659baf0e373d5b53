"""``--xla`` on each backend: real profiles of TPU v5e compiles (``tests/fixtures/tpu-v5e``,
JAX 0.10.2) are read as the whole compile, with the main fusion pass named and no thread
added up as wall time; a GPU compile's events, made here with ``TraceAnnotation`` nested
as XLA's GPU compiler nests them, are read by their own names; and, on a TPU only, the
real ``--xla`` reading of a compile there."""

from __future__ import annotations

import glob
import json
import os
import re
import threading
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from jax.profiler import ProfileData, TraceAnnotation

import jitmagic
from jitmagic.backends import profile as compile_events
from jitmagic.measure.parts.xla_passes import compiled_as_read, profiling, read_compile
from jitmagic.model.causes.xla_passes import ProfiledCompile, XlaPasses
from jitmagic.render.causes.xla_passes import text

FIXTURES = Path(__file__).parent / "fixtures" / "tpu-v5e"
#: The flat seed's profiled compile, wall time (README.txt there); its backend call's
#: seconds are read from the profile.
SEED_COMPILE_S = 4.22


def profile_of(name: str) -> ProfileData:
    return ProfileData.from_file(str(FIXTURES / f"{name}.xplane.pb"))


def call_s(profile: ProfileData) -> float:
    """The backend call's seconds (jaxlib's ``backend_compile_and_load``) in ``profile``."""
    return max(e.duration_ns for plane in profile.planes for line in plane.lines
               for e in line.events if e.name == "backend_compile_and_load") / 1e9


@pytest.fixture(scope="module")
def seed() -> ProfiledCompile:
    return compiled_as_read(SEED_COMPILE_S, read_compile(profile_of("compile-seed-flat"), "tpu"))


# --- the TPU v5e fixtures --------------------------------------------------------------

def test_the_tpu_seed_reads_as_the_profile_sums_it(seed):
    """The figures of compile-seed-flat.events.txt (the main fusion pass 3,022 ms)."""
    assert seed.backend == "tpu"
    assert seed.hlo_passes_s == pytest.approx(3.3228, abs=0.001)  # XLA::TPU run hlo passes
    main = seed.named_as("main_fusion")
    assert main is not None and main.biggest == "Main fusion (jit_g)" and main.events == 1
    assert main.seconds == pytest.approx(3.0217, abs=0.001)
    assert seed.share(main.seconds) == pytest.approx(0.716, abs=0.005)
    assert seed.top_passes[0] == ("tpu_fusion", pytest.approx(3.022, abs=0.001))
    assert seed.codegen_s == pytest.approx(0.1332, abs=0.001)  # XLA::TPU run backend
    assert seed.named_as("code_generator").seconds == pytest.approx(0.1012, abs=0.001)
    assert seed.serialize_s == pytest.approx(0.1533, abs=0.001)
    assert seed.deserialize_s == pytest.approx(0.0392, abs=0.001)
    assert seed.before_passes_s == pytest.approx(0.517, abs=0.002)  # MLIR to HLO, unevented
    assert seed.llvm_s is None  # no LLVM on a TPU: not a part of its compile


def test_the_tpu_seed_is_read_to_90_percent_and_its_parts_add_up(seed):
    assert seed.read_s / SEED_COMPILE_S >= 0.9
    assert seed.read_s <= call_s(profile_of("compile-seed-flat")) + 1e-6  # never over-counted
    assert seed.rest_s == pytest.approx(SEED_COMPILE_S - seed.read_s)
    assert sum(p.seconds for p in seed.passes) <= seed.hlo_passes_s


def test_the_cpus_names_miss_the_tpus_parts(seed):
    """Read by the CPU's events, a TPU compile has its pipelines and nothing else: no code
    generation, no time before the passes (it said "not read")."""
    read = read_compile(profile_of("compile-seed-flat"), "cpu")
    assert set(read.parts) == {"hlo_passes"} and not read.named
    assert read.parts["hlo_passes"] < seed.hlo_passes_s  # the pipelines, not the stage


@pytest.mark.parametrize(("name", "main_s", "hlo_s", "codegen_s"), [
    ("compile-seed-nested", 3.2927, 3.5482, 0.2491),
    ("compile-mlp24-flat", 0.5524, 0.9432, 2.1351),
])
def test_each_tpu_fixture_is_read_whole(name, main_s, hlo_s, codegen_s):
    profile = profile_of(name)
    whole = call_s(profile)
    c = compiled_as_read(whole, read_compile(profile, "tpu"))
    assert c.named_as("main_fusion").seconds == pytest.approx(main_s, abs=0.001)
    assert c.hlo_passes_s == pytest.approx(hlo_s, abs=0.001)
    assert c.codegen_s == pytest.approx(codegen_s, abs=0.001)
    assert 0.9 <= c.read_s / whole <= 1.0 + 1e-9
    assert c.serialize_s and c.deserialize_s and c.before_passes_s


def test_code_generation_threads_are_never_added_up():
    """The MLP's kernels are emitted on 8 threads at once: their events add up to far more
    than the wall time they took, which is what the reading keeps."""
    profile = profile_of("compile-mlp24-flat")
    kernels = compile_events.TPU.named_as("kernels").events
    spans = [(e.start_ns, e.start_ns + e.duration_ns) for plane in profile.planes
             for line in plane.lines for e in line.events if kernels(e.name)]
    added = sum(end - start for start, end in spans) / 1e9
    wall = (max(end for _, end in spans) - min(start for start, _ in spans)) / 1e9
    read = read_compile(profile, "tpu").named["kernels"]
    assert read.events == 8 and read.seconds == pytest.approx(wall, abs=0.001)
    assert added > 2 * read.seconds


def libtpu_stages() -> dict[str, float]:
    """libtpu's own split of its last compile (jit_g's) in the stage log, in seconds."""
    found: dict[str, float] = {}
    log = (FIXTURES / "compile-seed-flat.stage-log.txt").read_text()
    for stage, value, unit in re.findall(r"(\w+) stage duration: ([\d.]+)(ms|s)", log):
        found[stage] = float(value) / (1000 if unit == "ms" else 1)
    return found


def test_the_split_agrees_with_libtpus_own_stage_log(seed):
    """A separate compile of the same program: HLO passes against libtpu's backend passes
    and code generation, share for share, within a few points."""
    stages = libtpu_stages()
    assert stages["HLO_PASSES"] == pytest.approx(2.796, abs=0.001)
    theirs = stages["HLO_PASSES"] / (stages["HLO_PASSES"] + stages["BACKEND_PASSES"]
                                     + stages["CODE_GENERATION"])
    ours = seed.hlo_passes_s / (seed.hlo_passes_s + seed.codegen_s)
    assert ours == pytest.approx(theirs, abs=0.04)


def test_the_tpu_reading_is_said_with_its_main_fusion_pass(seed):
    shown = text(XlaPasses({"flat": seed}, same_program=True))
    assert "profiled compile 4.22 s on the TPU" in shown
    assert "the main fusion pass `Main fusion (jit_g)` 3.02 s, 72%" in shown
    assert "serialized for the backend's plugin 153 ms (3.6%)" in shown
    assert "read back by the plugin 39.2 ms" in shown
    assert "code generation 133 ms (3.2%; the code generator 101 ms" in shown
    assert "not read" not in shown and "LLVM" not in shown
    assert "The parts read cover 99% of the compile" in shown


def test_the_nesting_sentence_names_the_main_fusion_pass_of_both(seed):
    nested = compiled_as_read(4.38, read_compile(profile_of("compile-seed-nested"), "tpu"))
    shown = text(XlaPasses({"flat": seed, "nested": nested}))
    assert "the main fusion pass 72% and 75%" in shown
    assert "kernels lowered and emitted" not in shown.split("Nesting:")[1]  # under 5%


def test_a_tpu_record_round_trips_and_an_old_one_reads_as_the_cpus(seed):
    again = XlaPasses.from_dict(json.loads(json.dumps(XlaPasses({"flat": seed}).to_dict())))
    assert again.compiles["flat"] == seed
    old = {"compile_s": 0.43, "before_passes_s": 0.21, "hlo_passes_s": 0.1,
           "codegen_s": 0.06, "llvm_s": 0.016,
           "passes": [{"name": "algsimp", "seconds": 0.015, "runs": 4}]}
    loaded = XlaPasses.from_dict({"compiles": {"flat": old}, "same_program": True})
    c = loaded.compiles["flat"]
    assert c.backend is None and c.serialize_s is None and c.named == ()
    assert c.rest_s == pytest.approx(0.06)
    shown = text(loaded)
    assert "profiled compile 430 ms; before XLA's passes" in shown  # no backend said
    assert "serialized" not in shown and "LLVM's compile to machine code 3.7%" in shown


# --- GPU: XLA's GPU compiler's events, made here ---------------------------------------

def _ptxas(seconds: float) -> None:
    with TraceAnnotation("PTX->CUBIN"):
        time.sleep(seconds)


def gpu_like_compile() -> None:
    """A backend call nested as the GPU compiler's (XLA's gpu_compiler.cc and
    nvptx_compiler.cc), with two threads compiling PTX at once."""
    with TraceAnnotation("backend_compile_and_load"):
        with TraceAnnotation("PjRtCApiClient::SerializeProgram"):
            time.sleep(0.02)
        with TraceAnnotation("PJRT_Client_Compile"):
            with TraceAnnotation("PJRT_Client_Compile::Deserialize"):
                time.sleep(0.01)
            time.sleep(0.03)  # the module converted to HLO: no event
            with TraceAnnotation("HLO Transforms:jit_f"):
                with TraceAnnotation("optimization (jit_f)", module="jit_f"):
                    with TraceAnnotation("algsimp"):
                        time.sleep(0.01)
                    with TraceAnnotation("gemm-fusion-autotuner"):
                        time.sleep(0.06)
                time.sleep(0.01)  # inside HLO Transforms, outside any pipeline
            with TraceAnnotation("GpuCompiler::CompileToBackendResult"):
                with TraceAnnotation("post-scheduling (jit_f)", module="jit_f"), \
                        TraceAnnotation("cse"):
                    time.sleep(0.01)
                other = threading.Thread(target=_ptxas, args=(0.05,))
                other.start()
                _ptxas(0.05)
                other.join()


@pytest.fixture(scope="module")
def gpu_profile(tmp_path_factory) -> ProfileData:
    folder = tmp_path_factory.mktemp("gpu")
    with profiling(str(folder), compile_events.GPU.host_tracer_level):
        gpu_like_compile()
    found = glob.glob(os.path.join(folder, "**", "*.xplane.pb"), recursive=True)
    return ProfileData.from_file(found[0])


def test_a_gpu_compile_is_read_by_the_gpus_names(gpu_profile):
    c = compiled_as_read(call_s(gpu_profile), read_compile(gpu_profile, "gpu"))
    assert c.backend == "gpu" and c.llvm_s is None
    assert 0.08 <= c.hlo_passes_s < 0.13  # the pipeline and HLO Transforms' own time
    assert c.named_as("autotuning").seconds >= 0.06
    assert c.named_as("autotuning").biggest == "gemm-fusion-autotuner"
    assert c.serialize_s >= 0.02 and c.deserialize_s >= 0.01
    assert 0.03 <= c.before_passes_s < 0.06  # from the call to HLO Transforms, less those
    cse = next(p for p in c.passes if p.name == "cse")  # a pipeline in code generation: HLO
    assert cse.seconds >= 0.01 and c.hlo_passes_s >= 0.09


def test_gpu_threads_compiling_ptx_at_once_count_once(gpu_profile):
    c = compiled_as_read(call_s(gpu_profile), read_compile(gpu_profile, "gpu"))
    ptxas = c.named_as("ptxas")
    assert ptxas.events == 2 and 0.05 <= ptxas.seconds < 0.09  # two threads, 50 ms each
    assert ptxas.seconds <= c.codegen_s < 0.13
    assert c.read_s <= call_s(gpu_profile) + 1e-6
    assert c.read_s / call_s(gpu_profile) >= 0.9


def test_the_cpu_names_miss_a_gpu_compile(gpu_profile):
    read = read_compile(gpu_profile, "cpu")
    assert "codegen" not in read.parts and "before_passes" not in read.parts


def test_every_backend_names_its_parts_and_an_unknown_one_only_pipelines():
    assert compile_events.of("cpu").parts == ("before_passes", "hlo_passes", "codegen", "rest")
    assert compile_events.of("tpu").parts[:2] == ("serialize", "deserialize")
    assert compile_events.of("cuda") is compile_events.GPU and compile_events.of(None).platform \
        == "cpu"
    other = compile_events.of("metal")
    assert other.platform == "metal" and not other.codegen and not other.named


# --- on a TPU --------------------------------------------------------------------------

def seed_f(x):
    return sum(i * jnp.sin(x) for i in range(64))


def seed_g(x):
    return sum(seed_f(x) for _ in range(16))


@pytest.mark.tpu
@pytest.mark.skipif(jax.default_backend() != "tpu", reason="needs a TPU")
def test_xla_reads_a_real_tpu_compile_whole():
    result = jitmagic.compare(seed_g, jnp.ones(128), xla=True, repeat=1, number=1,
                              quiet=True)
    for variant, c in result.xla_passes.compiles.items():
        assert c.backend == "tpu", variant
        assert c.named_as("main_fusion") is not None, variant
        assert c.read_s / c.compile_s >= 0.9, (variant, c)
    shown = text(result.xla_passes)
    assert "the main fusion pass `Main fusion (jit_seed_g)`" in shown and "not read" not in shown

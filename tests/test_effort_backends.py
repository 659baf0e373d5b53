"""--effort per backend: each backend's own settings (``jitmagic.backends.effort``), chosen
by JAX's platform name without that backend's device; the TPU's set checked against the
figures measured on a TPU v5e; and a setting whose compile the rule found no different
said as "no measurable effect", on a record built from those real numbers.

The fixtures are ``benchmarks/tpu_effort.py``'s JSON from one TPU v5e host (JAX 0.10.2,
2026-12-05), each compile the first of a fresh process: ``effort-seed-mlp24.json`` (eight
candidates, both programs, 3 rounds, ``--calls``) and ``effort-mlp24-6rounds.json`` (the
MLP, three candidates, 6 rounds).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jitmagic.backends import CPU, GPU, TPU, named
from jitmagic.backends.effort import for_backend
from jitmagic.measure.parts.effort import candidates
from jitmagic.model.causes.effort import NO_EFFECT, USE_BELOW, Effort, EffortRow, Setting, causes
from jitmagic.render.causes.effort import sentence, text

FIXTURES = Path(__file__).parent / "fixtures" / "tpu-v5e"
BOTH = json.loads((FIXTURES / "effort-seed-mlp24.json").read_text(encoding="utf-8"))
MLP6 = json.loads((FIXTURES / "effort-mlp24-6rounds.json").read_text(encoding="utf-8"))


# --- each backend's own set, by platform name -----------------------------------------------

def names(platform: str) -> list[str]:
    return [s.name for s in for_backend(named(platform))]


def test_each_backend_has_its_own_settings_by_platform_name():
    assert names("cpu") == ["xla_backend_optimization_level=0",
                            "xla_backend_optimization_level=1",
                            "exec_time_optimization_effort=-1", "jax_optimization_level=O0"]
    assert names("gpu") == names("cuda") == names("rocm") == [
        "xla_backend_optimization_level=0", "jax_optimization_level=O0",
        "xla_gpu_autotune_level=0", "xla_gpu_experimental_enable_fusion_autotuner=false"]
    assert names("tpu") == names("TPU") == ["jax_optimization_level=O0"]
    assert names("metal") == []  # a backend jitmagic does not know: nothing is assumed


def test_every_setting_says_what_it_acts_on_and_the_line_to_write():
    for backend in (CPU, GPU, TPU):
        for s in for_backend(backend):
            assert s.acts_on and s.config, s.name
            assert s.keyword or s.config.startswith("jax.config.update("), s.name


def test_the_settings_of_a_backend_not_running_here_are_made_for_this_jax():
    """A TPU's and a GPU's sets, chosen on this CPU machine: effort levels as the numbers
    XLA takes, and each setting's own words carried into the record."""
    (o0,) = candidates(TPU)
    assert (o0.name, o0.options, o0.keyword) == ("jax_optimization_level=O0",
                                                 {"optimization_level": 9}, False)
    assert o0.acts_on == "XLA's effort level (which optimization passes run)"
    gpu = {s.name: s.options for s in candidates(GPU)}
    assert gpu["xla_gpu_autotune_level=0"] == {"xla_gpu_autotune_level": 0}
    assert gpu["xla_gpu_experimental_enable_fusion_autotuner=false"] == {
        "xla_gpu_experimental_enable_fusion_autotuner": False}
    assert candidates(named("metal")) == []


def test_the_backends_settings_import_no_jax():
    """Records and renderers read them: importing them must not start JAX."""
    code = ("import sys, jitmagic.backends.effort as e; "
            "e.for_backend(e.TPU); assert 'jax' not in sys.modules, 'jax imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


# --- the TPU's set is the one the v5e measured ---------------------------------------------

def measured_name(options: dict, run: dict) -> str:
    """The benchmark's name of the candidate with these options (by level name)."""
    (name,) = [n for n, o in run["settings"].items() if o == options]
    return name


def test_the_tpus_set_is_what_changed_the_compile_on_a_tpu_v5e():
    """Each TPU setting offered changed the MLP's optimized program and made its compile
    faster by the rule (6 rounds); each candidate left out left the program as the
    default's on both programs, or compiled what an offered one compiled, or (O1) saved
    less than O0 at the same cost per call."""
    offered = [measured_name(dict(s.options), BOTH) for s in for_backend(TPU)]
    for name in offered:
        six = MLP6["compile"]["mlp24"][name]
        assert six["same_hlo_as_default"] is False
        assert six["compile_s"]["vs_default"]["verdict"] == "faster"
    o0_program = MLP6["compile"]["mlp24"][offered[0]]["hlo_sha"]
    for name in set(BOTH["settings"]) - {"default", *offered}:
        rows = [BOTH["compile"][p][name] for p in ("seed", "mlp24")]
        same = all(r["same_hlo_as_default"] for r in rows)
        as_offered = MLP6["compile"]["mlp24"].get(name, {}).get("hlo_sha") == o0_program
        o1 = name == "optimization_level=O1" and rows[1]["compile_s"]["median"] > \
            BOTH["compile"]["mlp24"][offered[0]]["compile_s"]["median"]
        assert same or as_offered or o1, name
    assert all(BOTH["compile"]["seed"][n]["same_hlo_as_default"] for n in BOTH["settings"]
               if n != "default")  # the seed: no candidate changed its program


# --- "no measurable effect", on real numbers ---------------------------------------------------

MEMORY_FITTING = Setting("jax_memory_fitting_level=O0", {"memory_fitting_level": 9},
                         'jax.config.update("jax_memory_fitting_level", "O0")',
                         keyword=False, acts_on="how hard XLA fits the program in memory")


def samples(name: str) -> dict[str, tuple[float, ...]]:
    """The MLP's XLA compiles at ``name`` (6 rounds, wall and CPU), and its steady calls
    on the chip (5 batches), as a record's samples."""
    compiled = MLP6["compile"]["mlp24"][name]
    return {"compile_s": tuple(compiled["compile_s"]["samples"]),
            "compile_cpu_s": tuple(compiled["compile_cpu_s"]["samples"]),
            "execute_s": tuple(BOTH["calls"]["mlp24"][name]["samples"])}


@pytest.fixture(scope="module")
def tpu_record() -> Effort:
    (o0,) = candidates(TPU)
    rows = [EffortRow(MEMORY_FITTING, samples("memory_fitting_level=O0"), reached=True,
                      outputs="exact"),
            EffortRow(o0, samples("optimization_level=O0"), reached=True, outputs="rounding")]
    return Effort("mlp24", samples("default"), {r.name: r for r in rows}, backend="tpu")


def test_a_setting_with_no_measurable_effect_is_said_so_not_as_slower(tpu_record):
    row = tpu_record[MEMORY_FITTING.name]
    o = tpu_record.outcome(row)
    assert o.compile.kind == "no measurable difference" and o.verdict(row) == NO_EFFECT
    said = sentence(tpu_record, row)
    assert said.startswith(
        "at `jax_memory_fitting_level=O0` no measurable effect on this backend's compile "
        "(TPU; it acts on how hard XLA fits the program in memory): XLA's compile "
        "2.54 s → 2.57 s (")
    assert said.endswith(", wall time: nothing to gain here")
    assert "slower" not in said and "faster" not in said and "0.99×" not in said


def test_the_setting_that_acts_on_the_tpu_keeps_its_verdict_on_real_numbers(tpu_record):
    row = tpu_record["jax_optimization_level=O0"]
    o = tpu_record.outcome(row)
    assert (o.compile.kind, o.execute.kind, o.verdict(row)) == ("faster", "slower", USE_BELOW)
    said = text(tpu_record)
    assert "settings that act on this backend (TPU)" in said
    assert "at `jax_optimization_level=O0` XLA compiles 1.12× faster" in said
    assert "what each setting acts on: `jax_memory_fitting_level=O0`: how hard" in said
    (cause,) = causes(_Holding(tpu_record))
    assert cause.kind == "saving" and "`jax.config.update(\"jax_optimization_level\"" in cause.fix


def test_the_backend_and_what_a_setting_acts_on_round_trip_and_old_reports_load(tpu_record):
    back = Effort.from_dict(json.loads(json.dumps(tpu_record.to_dict())))
    assert back.backend == "tpu" and back.rows[MEMORY_FITTING.name].setting == MEMORY_FITTING
    old = tpu_record.to_dict()
    del old["backend"]
    for r in old["rows"].values():
        del r["setting"]["acts_on"]
    loaded = Effort.from_dict(old)
    assert loaded.backend is None
    said = sentence(loaded, loaded.rows[MEMORY_FITTING.name])
    assert "no measurable effect on this backend's compile: XLA's compile" in said


class _Holding:
    """A comparison as the causes read it: the record of a part by name."""

    stopped_anywhere = None

    def __init__(self, effort: Effort) -> None:
        self.effort = effort

    def part(self, name: str) -> Effort | None:
        return self.effort if name == "effort" else None

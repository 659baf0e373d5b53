"""``--xla``: one extra profiled cold compile per variant says where XLA spends it (each
HLO pass, code generation), beside a comparison whose samples it leaves as they were; a
profiler session of the user's own is left running, and the report says why nothing was
measured."""

from __future__ import annotations

import glob
import json
import os
import sys
import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

import jitmagic
from jitmagic import Comparison, ReportSchemaError
from jitmagic._compat import profiler_running
from jitmagic.frontends.command import build_parser
from jitmagic.measure.parts.xla_passes import REFUSED, add_xla_passes
from jitmagic.measure.pipeline import variants_of
from jitmagic.measure.sampling.stops import Checkpoint
from jitmagic.model.causes.xla_passes import PassTime, ProfiledCompile, XlaPasses
from jitmagic.options import Options
from jitmagic.render.bundle import text as report_text
from jitmagic.render.causes.xla_passes import HEADING, nesting_sentence

ONCE = {"repeat": 1, "number": 2, "quiet": True}
#: Passes XLA's CPU compiler runs on every program (each in at least one pipeline).
COMMON_PASSES = {"algsimp", "cse", "dce", "call-inliner", "flatten-call-graph"}


def text(result) -> str:
    """The report in full (``-v``), where each compile's passes are."""
    return report_text(result, verbose=True)


def layer(x, w):
    return jnp.tanh(x @ w) + jnp.sin(x)


def loss(w, x):
    for _ in range(6):  # a helper called several times in a loop
        x = layer(x, w)
    return jnp.sum(x ** 2)


def helperless(x):
    return jnp.cos(x) * 3


ARGS = (jnp.ones((16, 16)), jnp.ones((4, 16)))


def our_folders() -> set[str]:
    """This process's ``--xla`` scratch folders (named with its pid: another process's,
    a pytest-xdist worker's say, come and go on their own)."""
    return set(glob.glob(str(Path(tempfile.gettempdir()) / f"jitmagic-xla-{os.getpid()}-*")))


@pytest.fixture(scope="module")
def measured() -> tuple[Comparison, set[str]]:
    """``--xla`` on ``jax.grad`` of a loss, and the temp folders of ours there were before."""
    before = our_folders()
    return jitmagic.compare(jax.grad(loss), *ARGS, xla=True, **ONCE), before


def test_each_variant_names_its_hlo_passes_and_code_generation(measured):
    result, _ = measured
    xla = result.xla_passes
    assert xla is not None and xla.reason is None and not xla.same_program
    assert set(xla.compiles) == {"flat", "nested"}
    for variant, compiled in xla.compiles.items():
        names = {p.name for p in compiled.passes}
        assert len(names) == len(compiled.passes) >= 5, variant  # summed: one row a pass
        assert names >= COMMON_PASSES, variant
        assert compiled.hlo_passes_s > 0 and compiled.codegen_s > 0 and compiled.llvm_s > 0
        assert compiled.rest_s is not None and compiled.before_passes_s is not None
        tops = compiled.top_passes
        assert [s for _, s in tops] == sorted((s for _, s in tops), reverse=True)
        assert sum(p.runs for p in compiled.passes) > len(names)  # dce, algsimp run again
    assert xla.compile_s.keys() == {"flat", "nested"}


def test_the_comparison_samples_are_those_of_a_plain_run(measured):
    result, _ = measured
    profiled = result.xla_passes.compile_s
    for name, v in result.variants.items():
        assert {k: len(xs) for k, xs in v.samples.items() if k.endswith("_s")} \
            == {k: 1 for k in v.samples if k.endswith("_s")}, name  # -r 1: one each
        assert profiled[name] not in v.samples["compile_s"]  # an extra compile, not a sample
    assert result.stopped_anywhere is None


def test_the_sample_keys_match_a_run_without_xla(measured):
    result, _ = measured
    plain = jitmagic.compare(jax.grad(loss), *ARGS, **ONCE)
    assert plain.xla_passes is None
    for name in ("flat", "nested"):
        assert result.variants[name].samples.keys() == plain.variants[name].samples.keys()


def test_nothing_is_left_behind(measured):
    _, before = measured
    assert our_folders() == before
    assert not profiler_running()
    with tempfile.TemporaryDirectory() as folder:  # a session of one's own starts as usual
        jax.profiler.start_trace(folder)
        jax.profiler.stop_trace()


def test_the_report_shows_where_xla_spends_the_compile(measured):
    result, _ = measured
    shown = text(result)
    assert HEADING in shown and "HLO pass" in shown and "code generation" in shown
    assert "seconds, wall time" in shown  # the clock the profiler records, named
    assert "not one of its samples" in shown and "Nesting:" in shown
    assert "faster" not in shown.split(HEADING)[1]  # one sample each: shares only


def test_a_report_with_it_round_trips_and_an_old_one_loads(measured, tmp_path):
    result, _ = measured
    path = tmp_path / "xla.json"
    jitmagic.save(result, path)
    loaded = jitmagic.load(path)
    assert loaded.xla_passes == result.xla_passes
    assert loaded.to_dict() == result.to_dict()
    old = result.to_dict()
    del old["xla_passes"]
    path.write_text(json.dumps(old))
    assert jitmagic.load(path).xla_passes is None


def test_a_running_user_profiler_is_left_running(tmp_path):
    jax.profiler.start_trace(tmp_path)
    try:
        result = jitmagic.compare(helperless, jnp.ones(8), xla=True, **ONCE)
        assert profiler_running()
        with pytest.raises(RuntimeError):  # still the user's session: a second is refused
            jax.profiler.start_trace(tmp_path / "other")
    finally:
        jax.profiler.stop_trace()
    assert glob.glob(str(tmp_path / "**" / "*.xplane.pb"), recursive=True)  # theirs, written
    xla = result.xla_passes
    assert xla.reason == REFUSED and xla.compiles == {}
    assert REFUSED in text(result) and "HLO pass" not in text(result)
    again = XlaPasses.from_dict(json.loads(json.dumps(xla.to_dict())))
    assert again == xla and again.compile_s == {}


def test_nothing_nested_is_one_profiled_compile():
    result = jitmagic.compare(helperless, jnp.ones(8), xla=True, **ONCE)
    xla = result.xla_passes
    assert xla.same_program and set(xla.compiles) == {"flat"}
    assert xla.of("nested") is xla.of("flat") and xla.compile_s.keys() == {"flat", "nested"}
    assert "Nothing was nested" in text(result) and nesting_sentence(xla) == ""


def test_a_stop_keeps_the_comparison_and_says_what_was_not_profiled(measured):
    result, before = measured
    prepared = variants_of(jax.grad(loss), ARGS, {})
    stopped = add_xla_passes(result, prepared, Checkpoint(deadline=0.0))  # long past
    xla = stopped.xla_passes
    assert xla.compiles == {} and xla.stopped.startswith("stopped by --timeout after")
    assert xla.stopped.endswith("no profiled compile of the flat and nested variants")
    assert stopped.stopped_anywhere == xla.stopped and stopped.variants == result.variants
    assert our_folders() == before and not profiler_running()


def test_a_python_profile_hook_is_kept():
    calls: list[str] = []

    def hook(frame, event, arg):
        if event == "call":
            calls.append(frame.f_code.co_name)

    sys.setprofile(hook)
    try:
        jitmagic.compare(helperless, jnp.ones(8), xla=True, **ONCE)
        assert sys.getprofile() is hook
    finally:
        sys.setprofile(None)
    assert "add_xla_passes" in calls


def test_the_option_is_a_switch_everywhere():
    parsed = build_parser().parse_args(["f.py", "--xla"])
    assert Options.from_namespace(parsed).xla and not Options().xla
    with pytest.raises(jitmagic.InputError, match="--xla is on or off"):
        Options(xla="yes")


def _compile(*passes: tuple[str, float]) -> ProfiledCompile:
    return ProfiledCompile(0.2, sum(s for _, s in passes), 0.15, 0.06,
                           tuple(PassTime(n, s, 1) for n, s in passes))


def test_the_nesting_sentence_says_only_what_the_shares_show():
    xla = XlaPasses({"flat": _compile(("fusion", 0.002), ("cse", 0.001)),
                     "nested": _compile(("fusion", 0.002), ("cse", 0.001),
                                        ("call-inliner", 0.004))})
    said = nesting_sentence(xla)
    assert "only the nested compile ran `call-inliner`" in said
    assert "`call-inliner` (0.00% flat, 2.0% nested)" in said
    assert "faster" not in said and "slower" not in said


def test_an_unread_figure_is_not_read_never_zero():
    unread = ProfiledCompile(0.2, None, None, None)
    assert unread.rest_s is None and unread.share(unread.codegen_s) is None
    shown = text_of(XlaPasses({"flat": unread}, same_program=True))
    assert "HLO passes (0 kinds): not read" in shown and "code generation: not read" in shown
    assert "before XLA's passes (the module converted to HLO): not read" in shown
    assert "0 s" not in shown


def text_of(xla: XlaPasses) -> str:
    from jitmagic.render.causes.xla_passes import text as xla_text

    return xla_text(xla)


@pytest.mark.parametrize(("change", "message"), [
    ({"compiles": {"flat": {"compile_s": 0}}}, "xla_passes.compiles.flat.compile_s"),
    ({"compiles": {"vmap": {"compile_s": 1.0}}}, "xla_passes.compiles: expected the variants"),
    ({"compiles": {"flat": {"compile_s": 1.0, "passes": [{"name": "cse", "seconds": -1,
                                                          "runs": 1}]}}},
     r"xla_passes.compiles.flat.passes\[0\].seconds"),
    ({"compiles": {}, "reason": 3}, "xla_passes.reason: expected a string"),
])
def test_a_wrong_field_is_named(change, message):
    with pytest.raises(ReportSchemaError, match=message):
        XlaPasses.from_dict(change)

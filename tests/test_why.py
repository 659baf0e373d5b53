"""The "why is the first call slow" section: only measured causes, ranked, each with what
to do; what was not measured is said to be, with the option that measures it."""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jitmagic
from jitmagic.model.causes.cause import KINDS, NAME, NOT_MEASURED, NOTHING, SAVING, STAGE, UNDECIDED
from jitmagic.model.causes.second_start import CacheRow, Start, samples
from jitmagic.model.rows import VARIANTS
from jitmagic.model.stats.rule import FASTER, median
from jitmagic.model.stats.units import fmt_s
from jitmagic.model.stats.witness import on
from jitmagic.render.bundle import text as report_text
from jitmagic.render.causes.said import NAMED_PASS, _cache_fix
from jitmagic.render.causes.second_start import text


def mix(x, w):
    return jnp.tanh(x @ w) * 0.5 + jnp.sin(x) * 0.1


def stacked(x, w):
    """A helper reused in a Python loop, as a layer stack is written."""
    for _ in range(6):
        x = mix(x, w)
    return x.sum()


def unrolled(x):
    y = x
    for k in range(24):
        y = y + jnp.sin(y * k) * 0.01  # the line that builds the program
    return y.sum()


UNROLLED_LINE = unrolled.__code__.co_firstlineno + 3
X, W = jnp.ones((16, 16)), jnp.eye(16) * 0.5


def _by_name(c):
    return {x.name: x for x in c.why}


def test_savings_then_stages_come_biggest_first_each_from_its_own_samples():
    c = jitmagic.compare(stacked, X, W, repeat=3, number=1, progress=False)
    found = c.why
    kinds = [x.kind for x in found]
    assert kinds == sorted(kinds, key=KINDS.index)
    for kind in (SAVING, STAGE):
        seconds = [x.seconds for x in found if x.kind == kind]
        assert seconds == sorted(seconds, reverse=True)
    by_name = _by_name(c)
    for name, phase in (("Python tracing", "trace_s"), ("lowering to StableHLO", "lower_s"),
                        ("XLA compile", "compile_s")):
        assert by_name[name].kind == STAGE
        clock = c.clock_of("first_call_s")  # the section's one clock
        assert by_name[name].seconds == median(on(c.flat.samples, phase, clock))
    # nesting's saving is counted only where the one rule calls nested faster, in
    # seconds of the clock that decided it
    nesting = next(x for x in found if x.name.startswith(NAME))
    first, clock = c.difference("first_call_s"), c.clock_of("first_call_s")
    if first.kind == FASTER:
        flat, nested = (median(on(c.variants[v].samples, "first_call_s", clock))
                        for v in VARIANTS)
        assert nesting.kind == SAVING and nesting.seconds == flat - nested
        assert nesting.name.startswith(f"{NAME} (saved in ")
        assert "`jax.jit` on `mix`" in nesting.fix
    else:
        assert math.isnan(nesting.seconds) and nesting.said.startswith("nesting `mix`")
        assert nesting.kind == (UNDECIDED if first.kind == "inconclusive" else NOTHING)
    assert by_name["big constants"].said == "no array constant captured"
    assert by_name["big constants"].kind == NOTHING


def test_the_section_says_the_biggest_cause_and_what_to_do_first_the_rest_folded():
    """Two lines under the title: the biggest measured saving with what to do (where the
    rule found one), then where the first call's time goes; every cause in full with -v,
    or behind a click."""
    from jitmagic.render.causes.said import FOLDED, section

    c = jitmagic.compare(stacked, X, W, repeat=3, number=1, progress=False)
    text, page = section(c)
    lines = text.splitlines()
    assert lines[0].startswith("Why the first call takes") and lines[-1] == f"(-v shows {FOLDED})"
    savings = [x for x in c.why if x.kind == SAVING]
    if savings:
        biggest = savings[0]
        assert lines[1] == (f"the biggest measured saving: {biggest.name}, "
                            f"{fmt_s(biggest.seconds)}; what to do: {biggest.fix}"
                            + (f" (and {len(savings) - 1} more measured saving"
                               f"{'s' * (len(savings) != 2)})" if len(savings) > 1 else ""))
    assert any(x.startswith("where it goes: ") for x in lines) and len(lines) <= 5
    assert "not measured:" not in text and "not measured:" in page.split("<details>", 1)[1]
    full, _ = section(c, verbose=True)
    assert full.startswith("\n".join(lines[:-1])) and "not measured:" in full
    # -v says where the time goes once, not the answer's line and then the full form's
    assert full.count("where it goes: ") == 1


def test_what_was_not_measured_is_listed_with_the_option_never_ranked():
    c = jitmagic.compare(stacked, X, W, repeat=2, number=1, progress=False)
    second = _by_name(c)["a second start"]
    assert not second.measured and second.option == "--cache" and math.isnan(second.seconds)
    assert second.kind == NOT_MEASURED
    shown = c.report(verbose=True)  # nothing that tells a cause asked for: the glance names one
    assert "Why the first call takes" not in str(c) and str(c).count("\nwhy: ") == 1
    section = shown[shown.index("Why the first call takes"):]
    assert "not measured:\n  which lines build the program: use `--lines`" in section
    assert "\n  a second start: use `--cache`" in section
    assert "a second start," not in section  # not among the savings
    assert "<h4>Why the first call takes" in c._repr_mimebundle_()["text/html"]


def test_with_lines_the_tracing_cause_names_the_loop_that_builds_the_program():
    c = jitmagic.compare(unrolled, X, repeat=2, number=1, lines=True, progress=False)
    tracing = _by_name(c)["Python tracing"]
    assert f"line {UNROLLED_LINE}" in tracing.fix and "jax.lax.scan" in tracing.fix
    assert f"  Python tracing: what to do: line {UNROLLED_LINE}" in report_text(c, verbose=True)
    without = jitmagic.compare(unrolled, X, repeat=2, number=1, progress=False)
    assert _by_name(without)["Python tracing"].fix == ""


def test_a_function_without_helpers_has_nothing_to_nest_and_says_so():
    c = jitmagic.compare(unrolled, X, repeat=2, number=1, progress=False)
    nesting = _by_name(c)[NAME]
    assert nesting.kind == NOTHING and math.isnan(nesting.seconds)
    assert nesting.said == "no helper of yours is called, so nothing was nested"


TABLE = np.ones((64, 64), np.float32)


def looked_up(x):
    return (x @ TABLE).sum()


def test_small_captured_constants_are_counted_and_not_worth_measuring():
    c = jitmagic.compare(looked_up, jnp.ones((4, 64)), repeat=2, number=1, progress=False)
    constants = _by_name(c)["big constants"]
    assert constants.kind == NOTHING and constants.said == "1 array constant captured, 16 KiB"


def test_the_section_is_derived_so_a_saved_report_gives_the_same_causes(tmp_path):
    c = jitmagic.compare(stacked, X, W, repeat=2, number=1, progress=False)
    path = tmp_path / "r.json"
    jitmagic.save(c, path)
    loaded = jitmagic.load(path)
    assert loaded.to_dict()["why"] == c.to_dict()["why"]
    assert [x["cause"] for x in c.to_dict()["why"]] == [x.name for x in c.why]


@pytest.mark.slow  # 3-6 s on 2 cores
def test_with_xla_the_compile_stage_says_where_xlas_time_went_from_the_profile():
    c = jitmagic.compare(stacked, X, W, repeat=2, number=1, xla=True, progress=False)
    compiling = _by_name(c)["XLA compile"]
    profiled = c.xla_passes.of("flat")
    top, seconds = profiled.top_passes[0]
    assert "of an extra profiled compile, " in compiling.said
    assert f"code generation {profiled.share(profiled.codegen_s):.0%}" in compiling.said
    named = f"(the biggest pass: `{top}`, {profiled.share(seconds):.0%})"
    if profiled.share(seconds) >= NAMED_PASS:
        assert named in compiling.said
    else:  # a pass of a few percent is not the answer to a slow compile
        assert "biggest pass" not in compiling.said


BIG = np.linspace(0, 1, 1024 * 1024, dtype=np.float32).reshape(1024, 1024)  # 4 MiB


def projected(x):
    return (x @ (jnp.sin(BIG) * 2.0)).sum()  # XLA folds sin(BIG) into the program


BIG_LINE = projected.__code__.co_firstlineno + 1


@pytest.mark.slow
def test_big_constants_are_ranked_by_what_passing_them_saved():
    c = jitmagic.compare(projected, jnp.ones((4, 1024)), repeat=3, number=1, progress=False)
    measured = c.constant_arguments["flat"]
    constants = _by_name(c)["big constants"]
    assert constants.said.startswith(f"line {BIG_LINE} captures `BIG` (4.0 MiB); passed as "
                                     "arguments, ")
    if measured.difference.kind == FASTER:
        captured, passed = (median(on(measured.samples[form], "first_call_s",
                                      measured.clock)) for form in ("captured", "passed"))
        assert constants.kind == SAVING and constants.seconds == captured - passed
        assert "as an argument" in constants.fix
    else:
        assert math.isnan(constants.seconds) and constants.kind in (UNDECIDED, NOTHING)


VOCABULARY = np.random.default_rng(0).standard_normal((2048, 1024)).astype(np.float32)  # 8 MiB


def embed(x):
    """A lookup through a big table captured from Python, as a vocabulary is written."""
    return jnp.tanh(x @ VOCABULARY)


def embedded(x):
    h = embed(x)
    return (h * h).sum()


def _starts(seconds: list[float], hit: bool) -> tuple[Start, ...]:
    return tuple(Start(x, hits=int(hit), misses=int(not hit)) for x in seconds)


@pytest.mark.slow  # 7-16 s on 2 cores: the comparison, the constants passed, the starts
def test_a_second_start_saves_against_the_first_call_with_no_cache_and_its_writing_is_apart():
    """With an 8 MiB captured table, the second start's saving was read against the first
    start, which also writes the cache (its 8 MiB entry): '1. a second start, 422 ms'
    ranked above '2. big constants, 204 ms' under a first call of 261 ms. docs/why.md
    defines the saving against the first call with no cache, measured pair by pair."""
    c = jitmagic.compare(embedded, jnp.ones((8, 2048)), repeat=2, number=1, cache=True,
                         progress=False)
    row = c.second_start.rows["flat"]
    assert len(row.no_cache) == len(row.cold) == len(row.warm) >= 2 and row.read
    assert all(x.hits == x.misses == 0 for x in row.no_cache)  # the cache was off
    assert all(x.misses and not x.hits for x in row.cold)  # it wrote the entry
    second = _by_name(c)["a second start"]
    clock = row.clock()
    none, warm = (median(on(samples(x), "first_call_s", clock)) for x in (row.no_cache, row.warm))
    assert f"{fmt_s(warm)} warm against {fmt_s(none)}" in second.said
    assert "than with no cache" in second.said and "measured pair by pair" in second.said
    assert second.kind != SAVING or second.seconds == none - warm
    first = row.writing_clock()
    cold, none = (median(on(samples(x), "first_call_s", first)) for x in (row.cold, row.no_cache))
    assert "the first start, which also writes the cache, " in second.said
    assert f"({fmt_s(cold)} against {fmt_s(none)}" in second.said
    assert "first start, which also writes the cache" in text(c.second_start)
    savings = [x for x in c.why if x.kind == SAVING]
    assert [x.seconds for x in savings] == sorted((x.seconds for x in savings), reverse=True)
    # the figures by hand, in fresh processes: no cache 0.295 s, first start
    # writing the cache 0.542 s, warm 0.108 s; the table passed as an argument saves 213 ms
    by_hand = CacheRow("flat", _starts([0.540, 0.542, 0.545], False),
                       _starts([0.107, 0.108, 0.109], True), None,
                       _starts([0.294, 0.295, 0.297], False))
    passed = dataclasses.replace(c.constant_arguments["flat"], samples={
        "captured": {"first_call_s": [0.294, 0.295, 0.297]},
        "passed": {"first_call_s": [0.081, 0.082, 0.083]}})
    hand = dataclasses.replace(
        c, second_start=dataclasses.replace(c.second_start, rows={"flat": by_hand}),
        constant_arguments=dataclasses.replace(c.constant_arguments,
                                               variants={"flat": passed}))
    ranked = [x for x in hand.why if x.kind == SAVING]
    assert [x.name for x in ranked][:2] == ["big constants", "a second start"]
    assert ranked[1].seconds == pytest.approx(0.295 - 0.108)
    assert "the first start, which also writes the cache, is 1.84× slower" in ranked[1].said


@pytest.mark.slow  # 3-6 s on 2 cores
def test_a_user_whose_settings_already_cache_the_program_is_not_told_to_set_them(tmp_path):
    settings = {"jax_compilation_cache_dir": str(tmp_path),
                "jax_persistent_cache_min_compile_time_secs": 0.0}
    before = {k: getattr(jax.config, k) for k in settings}
    try:
        for k, v in settings.items():
            jax.config.update(k, v)
        c = jitmagic.compare(stacked, X, W, repeat=2, number=1, cache=True, progress=False)
    finally:
        for k, v in before.items():
            jax.config.update(k, v)
    assert _cache_fix(c.second_start) == ("your settings already cache this program: a "
                                          "second start reads it")


def test_a_stopped_measurement_says_the_stop_not_the_option_already_given():
    c = jitmagic.compare(stacked, X, W, repeat=2, number=1, cache=True, progress=False,
                         timeout=0.001)
    assert c.stopped_anywhere
    second = _by_name(c)["a second start"]
    assert second.kind == NOT_MEASURED and "stopped first" in second.said
    shown = c.report(verbose=True)
    assert "--cache`" not in shown and "Why the first call" in shown
    assert "not measured, since the measurement stopped first (" in shown


def test_why_turns_on_every_part_that_measures_a_cause():
    chosen = jitmagic.Options(why=True)
    assert (chosen.lines, chosen.cache, chosen.xla, chosen.effort) == (True,) * 4
    assert not jitmagic.Options().cache

"""--effort: XLA's lower effort settings against the default, on real JAX.

Each setting reaches the compile (its compiled program differs from the default's, and
one that adds nothing is said to change nothing); one the backend refuses is left out
with a note; the user's JAX config, XLA_FLAGS and their jit's own compiler options are
as before after success, an error and Ctrl-C, and those options are the baseline; a
setting whose outputs differ is never recommended; the break-even follows the rule's
outcomes on crafted records; records round-trip and bad fields are named; user-shaped
code (a grad of a loss, a scan body, a module's method) is measured. No timed assertion.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import signal
import time
from html import escape
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jitmagic
from jitmagic.measure.parts.effort import (
    FEWEST_EFFORT_ROUNDS,
    PART,
    accepted,
    add_effort,
    candidates,
    executable_bytes,
    measure_effort,
)
from jitmagic.measure.pipeline import checkpoint, measure_prepared, run_comparison, variants_of
from jitmagic.measure.sampling.rounds import Rounds
from jitmagic.model.causes.cause import causes as why_causes
from jitmagic.model.causes.effort import (
    CAUSE,
    CHANGES_RESULTS,
    DEFAULT,
    HELPERS_CAUSE,
    NO_EFFECT,
    NO_GAIN,
    OUT_OF_LINE,
    UNCHANGED,
    UNDECIDED,
    USE,
    USE_BELOW,
    Effort,
    EffortRow,
    Setting,
    causes,
)
from jitmagic.model.parts import part_causes
from jitmagic.model.saved.schema import ReportSchemaError
from jitmagic.model.stats.verdicts import BUDGET, DECIDED, MOST_ROUNDS
from jitmagic.options import Options
from jitmagic.options.values import AUTO
from jitmagic.render.bundle import text as bundle_text
from jitmagic.render.causes.effort import FOLDED, TITLE, calls_figure, html, section, text

LEVEL0 = Setting("xla_backend_optimization_level=0", {"xla_backend_optimization_level": 0},
                 'XLA_FLAGS="--xla_backend_optimization_level=0"')
#: Fast math that may drop NaN and infinity handling: it changes this program's results.
FAST_MATH = Setting("fast math", {"xla_cpu_enable_fast_math": True,
                                  "xla_cpu_fast_math_honor_nans": False,
                                  "xla_cpu_fast_math_honor_infs": False,
                                  "xla_cpu_fast_math_honor_division": False,
                                  "xla_cpu_fast_math_honor_functions": False})


def layer(x, w):
    return jnp.tanh(x @ w) + jnp.sin(x)


def model(x, w):
    for _ in range(4):  # a helper reused in a Python loop, as users write it
        x = layer(x, w)
    return x


X, W = jnp.ones((16, 16)), jnp.full((16, 16), 0.01)


def flat_of(fn, *args):
    return variants_of(fn, args, {})["flat"]


def user_state() -> dict:
    """The user's JAX config, XLA_FLAGS and persistent-cache settings, as values."""
    return {"config": dict(jax.config.values), "xla_flags": os.environ.get("XLA_FLAGS")}


@pytest.fixture(scope="module")
def measured() -> Effort:
    """One measurement of every setting this JAX and backend accept, two rounds."""
    return measure_effort(flat_of(model, X, W), rounds=2)


# --- the settings reach the compile ---------------------------------------------------------

def test_every_candidate_this_jax_exposes_is_tried():
    """The CPU's set, as before the sets were per backend (JAX 0.10 has both flags)."""
    assert [s.name for s in candidates()] == [
        "xla_backend_optimization_level=0", "xla_backend_optimization_level=1",
        "exec_time_optimization_effort=-1", "jax_optimization_level=O0"]
    assert candidates()[3].options == {"optimization_level": 9}  # the number XLA takes


def test_each_setting_reaches_the_compile(measured):
    assert set(measured.rows) == {s.name for s in candidates()}
    for row in measured.rows.values():
        assert row.error is None
        assert row.reached is True, row.name  # its compiled program is not the default's
        assert row.outputs in ("exact", "rounding")
        assert len(row.samples["compile_s"]) == len(measured.default["compile_s"]) == 2


def test_the_record_names_its_backend_and_what_each_setting_acts_on(measured):
    assert measured.backend == "cpu"
    assert all(r.setting.acts_on for r in measured.rows.values())
    said = text(measured)
    assert "settings that act on this backend (CPU)" in said
    assert "`xla_backend_optimization_level=0`: LLVM's optimization of the generated code" in said


def test_the_compiled_program_of_a_setting_differs_and_the_defaults_twice_does_not():
    lowered = jax.jit(model).lower(X, W)
    default = executable_bytes(lowered.compile())
    assert default is not None and executable_bytes(jax.jit(model).lower(X, W).compile()) == default
    for s in candidates():
        assert executable_bytes(lowered.compile(compiler_options=s.options)) != default, s.name


def test_a_setting_that_adds_nothing_is_said_to_change_nothing():
    nothing = Setting("nothing", {})
    e = measure_effort(flat_of(model, X, W), rounds=1, settings=[nothing])
    row = e["nothing"]
    assert row.reached is False
    assert e.outcome(row).verdict(row) == UNCHANGED
    assert "changed nothing" in text(e)
    assert e.recommended() == []


def test_a_setting_the_backend_refuses_is_left_out_with_a_note_and_the_rest_stand():
    bogus = Setting("no_such_option=1", {"no_such_xla_option": 1})
    e = measure_effort(flat_of(model, X, W), rounds=1, settings=[bogus, LEVEL0])
    assert list(e.rows) == [LEVEL0.name]
    (note,) = e.left_out
    assert "`no_such_option=1` left out" in note and "no_such_xla_option" in note
    assert note in text(e)


# --- the user's state --------------------------------------------------------------------------

def test_the_users_config_and_flags_are_as_before_after_success(measured):
    before = user_state()
    measure_effort(flat_of(model, X, W), rounds=1, settings=[LEVEL0])
    assert user_state() == before


FAIL = {"now": False}


def fails_when_told(x, w):
    if FAIL["now"]:
        raise ValueError("boom in the effort rows")
    return model(x, w)


def test_the_users_config_is_as_before_when_their_code_raises():
    flat = flat_of(fails_when_told, X, W)
    before = user_state()
    FAIL["now"] = True
    try:
        e = measure_effort(flat, rounds=1, settings=[LEVEL0])
    finally:
        FAIL["now"] = False
    assert user_state() == before
    assert "boom in the effort rows" in e.default_error
    assert "boom in the effort rows" in e[LEVEL0.name].error
    assert e.recommended() == []
    assert "boom" in text(e)


def interrupted_when_told(x, w):
    if FAIL["now"]:
        raise KeyboardInterrupt  # as a second Ctrl-C raises it, wherever it lands
    return model(x, w)


def test_the_users_config_is_as_before_after_a_keyboard_interrupt_in_their_code():
    flat = flat_of(interrupted_when_told, X, W)
    before = user_state()
    FAIL["now"] = True
    try:
        with pytest.raises(KeyboardInterrupt):
            measure_effort(flat, rounds=1, settings=[LEVEL0])
    finally:
        FAIL["now"] = False
    assert user_state() == before


def test_ctrl_c_keeps_the_rounds_that_finished_and_puts_everything_back():
    before, handler = user_state(), signal.getsignal(signal.SIGINT)

    def press(p):
        if p.what == PART and p.round == 2:
            signal.raise_signal(signal.SIGINT)  # a real Ctrl-C, before the second round

    check = checkpoint("model", Options(repeat=1), time.perf_counter())
    check.report.draw = press
    e = measure_effort(flat_of(model, X, W), rounds=3, check=check, settings=[LEVEL0])
    assert e.stopped.startswith("interrupted by the user")
    assert len(e.default["compile_s"]) >= 1  # the first round is kept
    assert f"{e.stopped}" in text(e)
    assert Effort.from_dict(e.to_dict()).stopped == e.stopped
    assert signal.getsignal(signal.SIGINT) is handler
    assert user_state() == before


def test_a_users_own_compiler_options_are_the_baseline_and_left_as_they_were():
    theirs = {"xla_backend_optimization_level": 1}
    jitted = jax.jit(model, compiler_options=theirs)
    kvs = jitted._jit_info.compiler_options_kvs
    flat = flat_of(jitted, X, W)
    assert flat.variant.jit_options["compiler_options"] == theirs
    e = measure_effort(flat, rounds=1)
    assert e.baseline == theirs
    assert "xla_backend_optimization_level=1" not in e.rows  # theirs already
    assert any("`xla_backend_optimization_level=1` left out: your jit already" in n
               for n in e.left_out)
    assert "exec_time_optimization_effort=-1" in e.rows
    assert jitted._jit_info.compiler_options_kvs == kvs
    assert "with your `compiler_options={\"xla_backend_optimization_level\": 1}`" in text(e)


# --- a setting that changes the results ------------------------------------------------------

def overflows(x):
    y = x * 1e30 * 1e30  # infinity, then NaN: fast math without their handling differs
    z = y - y
    return jnp.isnan(z).astype(jnp.float32) + jnp.isinf(y) + x / 3.0 \
        + jnp.exp(x) * jnp.log1p(jnp.abs(x))


def test_a_setting_whose_outputs_differ_is_reported_and_never_recommended():
    e = measure_effort(flat_of(overflows, jnp.linspace(-3, 3, 1000)), rounds=1,
                       settings=[FAST_MATH, LEVEL0])
    row = e["fast math"]
    assert row.outputs == "mismatch" and row.max_abs_diff > 1
    assert e.outcome(row).verdict(row) == CHANGES_RESULTS
    assert row not in e.recommended()
    said = text(e)
    assert "at `fast math` the outputs differ from the default's" in said
    assert "it changes the results, so it is not recommended" in said
    assert e[LEVEL0.name].outputs in ("exact", "rounding")


def test_a_mismatch_is_never_recommended_however_fast_it_compiles():
    row = crafted_row(compile_s=[0.1] * 5, execute_s=[0.01] * 5, outputs="mismatch")
    e = crafted(row)
    assert e.outcome(row).compile.kind == "faster"
    assert e.outcome(row).verdict(row) == CHANGES_RESULTS
    assert e.recommended() == []
    assert "jax.jit(" not in text(e)  # no line to write


# --- the break-even, on crafted records --------------------------------------------------------

DEFAULT_COMPILE = [1.00, 1.01, 0.99, 1.02, 1.00]
DEFAULT_CALL = [0.0100, 0.0101, 0.0099, 0.0100, 0.0102]


def crafted_row(compile_s, execute_s, outputs="exact", name=LEVEL0.name) -> EffortRow:
    setting = LEVEL0 if name == LEVEL0.name else Setting(name, {"x": 1})
    return EffortRow(setting, {"compile_s": tuple(compile_s), "execute_s": tuple(execute_s)},
                     reached=True, outputs=outputs)


def crafted(*rows: EffortRow) -> Effort:
    return Effort("loss", {"compile_s": tuple(DEFAULT_COMPILE), "execute_s": tuple(DEFAULT_CALL)},
                  {r.name: r for r in rows})


def test_faster_compile_and_the_same_call_is_use_it_with_the_line_to_write():
    row = crafted_row([0.33, 0.34, 0.33, 0.35, 0.33], DEFAULT_CALL)
    e = crafted(row)
    o = e.outcome(row)
    assert (o.compile.kind, o.execute.kind) == ("faster", "no measurable difference")
    assert o.break_even is None and o.verdict(row) == USE
    assert o.saved_s == pytest.approx(1.00 - 0.33)
    said = text(e)
    assert "XLA compiles 3.03× faster" in said and "(1 s → 330 ms, wall time)" in said
    assert "a call takes the same time" in said
    assert "use it for interactive work and tests" in said
    assert 'jax.jit(loss, compiler_options={"xla_backend_optimization_level": 0})' in said
    assert 'XLA_FLAGS="--xla_backend_optimization_level=0"' in said
    assert e.recommended() == [row]


def test_faster_compile_and_a_slower_call_gives_the_break_even():
    call = [0.0140, 0.0141, 0.0139, 0.0140, 0.0142]
    row = crafted_row([0.30, 0.31, 0.30, 0.29, 0.30], call)
    e = crafted(row)
    o = e.outcome(row)
    assert (o.compile.kind, o.execute.kind) == ("faster", "slower")
    assert o.break_even == pytest.approx((1.00 - 0.30) / (0.0140 - 0.0100))  # 175 calls
    assert o.verdict(row) == USE_BELOW
    said = text(e)
    assert "a call is 1.40× slower (1.33×–1.47×) (10 ms → 14 ms, wall time)" in said
    assert ("it pays while you make fewer than 170 calls (700 ms of compile saved, 4 ms "
            "lost per call, wall time)") in said
    assert "above that the default wins" in said


def test_an_inconclusive_call_gives_no_break_even():
    call = [0.0080, 0.0150, 0.0100, 0.0200, 0.0090]
    row = crafted_row([0.30, 0.31, 0.30, 0.29, 0.30], call)
    e = crafted(row)
    o = e.outcome(row)
    assert o.execute.kind == "inconclusive"
    assert o.break_even is None and o.verdict(row) == UNDECIDED
    said = text(e)
    assert "whether a call is slower is inconclusive" in said
    assert "no break-even is given" in said and "fewer than" not in said
    assert e.recommended() == []


def test_a_compile_no_faster_is_nothing_to_gain_and_an_inconclusive_one_says_so():
    same = crafted_row(DEFAULT_COMPILE, DEFAULT_CALL, name="same")
    slower = crafted_row([1.50, 1.52, 1.49, 1.51, 1.50], DEFAULT_CALL, name="slower")
    unsure = crafted_row([0.5, 1.5, 0.7, 1.2, 0.9], DEFAULT_CALL, name="unsure")
    e = crafted(same, slower, unsure)
    assert e.outcome(same).verdict(same) == NO_EFFECT
    assert e.outcome(slower).verdict(slower) == NO_GAIN
    assert e.outcome(unsure).verdict(unsure) == UNDECIDED
    said = text(e)
    assert ("at `same` no measurable effect on this backend's compile: XLA's compile "
            "1 s → 1 s (") in said
    assert "at `slower` XLA compiles 1.50× slower" in said and "nothing to gain" in said
    assert "at `unsure` whether XLA compiles faster is inconclusive" in said
    assert e.recommended() == []


def test_a_busy_machine_decides_on_cpu_time_and_names_it():
    busy = {"wait_s": (0.5,) * 5, "first_call_s": (1.0,) * 5, "first_call_cpu_s": (1.0,) * 5}
    default = {"compile_s": tuple(DEFAULT_COMPILE), "compile_cpu_s": tuple(DEFAULT_COMPILE),
               "execute_s": tuple(DEFAULT_CALL), "execute_cpu_s": tuple(DEFAULT_CALL), **busy}
    fast = (0.33, 0.34, 0.33, 0.35, 0.33)
    row = EffortRow(LEVEL0, {"compile_s": (0.9,) * 5, "compile_cpu_s": fast,
                             "execute_s": tuple(DEFAULT_CALL),
                             "execute_cpu_s": tuple(DEFAULT_CALL), **busy},
                    reached=True, outputs="exact")
    e = Effort("loss", default, {row.name: row})
    o = e.outcome(row)
    assert o.clock == "CPU" and o.compile_s[1] == pytest.approx(0.33)
    assert "(1 s → 330 ms, CPU time)" in text(e)


def test_every_row_of_one_record_is_on_one_clock_even_where_one_pair_alone_looks_quiet():
    """A new user saw setting rows in wall time beside an out-of-line row in CPU time in
    one table: the clock was chosen pair by pair. It is the record's, over every row."""
    def samples(wait):
        return {"compile_s": tuple(DEFAULT_COMPILE), "compile_cpu_s": tuple(DEFAULT_COMPILE),
                "execute_s": tuple(DEFAULT_CALL), "execute_cpu_s": tuple(DEFAULT_CALL),
                "wait_s": (wait,) * 5, "first_call_s": (1.0,) * 5,
                "first_call_cpu_s": (1.0,) * 5}

    quiet = EffortRow(LEVEL0, samples(0.0), reached=True, outputs="exact")
    other = Setting("other", {"x": 1})
    busy = EffortRow(other, samples(1.0), reached=True, outputs="exact")
    e = Effort("loss", samples(0.05), {quiet.name: quiet, busy.name: busy})
    assert e.outcome(quiet).clock == e.outcome(busy).clock == "CPU"
    assert "[wall time]" not in text(e)  # no row of the table on the other clock


def test_the_break_even_is_rounded_down_to_two_figures():
    assert [calls_figure(x) for x in (2345.0, 175.0, 99.9, 7.5, 0.5)] == \
        ["2,300", "170", "99", "7", "1"]


def test_the_html_is_escaped():
    row = crafted_row([0.33] * 5, DEFAULT_CALL, name="<b>x</b>")
    e = Effort("<script>", crafted(row).default, {row.name: row})
    page = html(e)
    assert "<script>" not in page and "<b>x</b>" not in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page


# --- the record --------------------------------------------------------------------------------

def test_a_measured_record_round_trips_through_json(measured):
    back = Effort.from_dict(json.loads(json.dumps(measured.to_dict())))
    assert back == measured
    assert text(back) == text(measured)


@pytest.mark.parametrize(("path", "value", "message"), [
    (("rows", LEVEL0.name, "samples", "compile_s", 0), -1.0,
     "effort.rows.xla_backend_optimization_level=0.samples.compile_s[0]: expected seconds"),
    (("rows", LEVEL0.name, "outputs"), "weird",
     "effort.rows.xla_backend_optimization_level=0.outputs: expected 'exact' or"),
    (("rows", LEVEL0.name, "setting", "options"), [1],
     "effort.rows.xla_backend_optimization_level=0.setting.options: expected an object"),
    (("default",), None, "effort.default: expected an object"),
])
def test_a_bad_field_is_named(path, value, message):
    d = json.loads(json.dumps(crafted(crafted_row([0.3] * 5, DEFAULT_CALL)).to_dict()))
    inner = d
    for key in path[:-1]:
        inner = inner[key]
    inner[path[-1]] = value
    with pytest.raises(ReportSchemaError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Effort.from_dict(d)


def test_a_missing_entry_is_named():
    d = crafted(crafted_row([0.3] * 5, DEFAULT_CALL)).to_dict()
    del d["entry"]
    with pytest.raises(ReportSchemaError, match="effort.entry: missing"):
        Effort.from_dict(d)


# --- code shaped as users write it -----------------------------------------------------------

def loss(params, x, y):
    pred = model(x, params["w"]) + params["b"]
    return jnp.mean((pred - y) ** 2)


def scanned(x, w):
    def body(carry, _):
        return layer(carry, w), carry.sum()

    out, sums = jax.lax.scan(body, x, None, length=8)
    return out, sums


class Mlp(eqx.Module):
    w: jax.Array
    b: jax.Array

    def __call__(self, x):
        for _ in range(4):
            x = jnp.tanh(x @ self.w + self.b)
        return x


@pytest.mark.parametrize("case", ["grad of a loss", "scan body", "module's method"])
def test_user_shaped_code_is_measured_at_each_setting(case):
    params = {"w": W, "b": jnp.zeros(16)}
    entry, args = {
        "grad of a loss": (jax.grad(loss), (params, X, jnp.zeros((16, 16)))),
        "scan body": (scanned, (X, W)),
        "module's method": (Mlp(W, jnp.zeros(16)).__call__, (X,)),
    }[case]
    e = measure_effort(flat_of(entry, *args), rounds=1, settings=[LEVEL0])
    row = e[LEVEL0.name]
    assert e.default_error is None and row.error is None
    assert row.reached is True and row.outputs in ("exact", "rounding")
    assert e.default["compile_s"] and row.samples["execute_s"]
    assert f"at `{LEVEL0.name}`" in text(e)


def test_the_default_row_is_the_first_and_every_setting_beside_it(measured):
    assert DEFAULT not in measured.rows
    chosen, notes, reached = accepted(candidates(), {})
    assert [s.name for s in chosen] == list(measured.rows) and notes == []
    assert set(reached.values()) == {True}
    assert np.isfinite(measured.outcome(next(iter(measured.rows.values()))).compile.ratio)


# --- the entry points the table of parts calls ---------------------------------------------

class Holding:
    """A comparison as the causes read it: the record of a part by name."""

    stopped_anywhere = None

    def __init__(self, effort: Effort | None) -> None:
        self.effort = effort

    def part(self, name: str):
        return self.effort if name == "effort" else None


def test_the_effort_cause_is_not_measured_without_the_record():
    (cause,) = causes(Holding(None))
    assert (cause.kind, cause.option, cause.said) == ("not measured", "--effort",
                                                      "not run this time")


def test_the_effort_cause_is_the_setting_that_saves_most_with_its_line():
    good = crafted_row([0.33, 0.34, 0.33, 0.35, 0.33], DEFAULT_CALL)
    changes = crafted_row([0.10] * 5, DEFAULT_CALL, outputs="mismatch", name="fast math")
    (cause,) = causes(Holding(crafted(good, changes)))
    assert cause.kind == "saving" and cause.seconds == pytest.approx(1.00 - 0.33)
    assert "at `xla_backend_optimization_level=0` XLA compiles 3.03× faster" in cause.said
    assert 'jax.jit(loss, compiler_options={"xla_backend_optimization_level": 0})' in cause.fix


def test_the_effort_cause_is_nothing_to_gain_or_inconclusive_as_the_rule_found():
    mismatch = crafted_row([0.10] * 5, DEFAULT_CALL, outputs="mismatch", name="fast math")
    (nothing,) = causes(Holding(crafted(mismatch)))
    assert nothing.kind == "nothing to gain" and "`fast math`: changes the results" in nothing.said
    unsure = crafted_row([0.5, 1.5, 0.7, 1.2, 0.9], DEFAULT_CALL, name="unsure")
    (undecided,) = causes(Holding(crafted(unsure, mismatch)))
    assert undecided.kind == "inconclusive"


def test_add_effort_puts_the_record_in_the_comparison_and_the_section_shows_it():
    prepared = variants_of(model, (X, W), {})
    result = run_comparison("model", prepared, Options(repeat=1, number=1))
    assert section(result) is None
    added = add_effort(result, prepared["flat"], Options())
    e = added.part("effort")
    assert isinstance(e, Effort) and set(e.rows) == {s.name for s in candidates()}
    assert len(e.default["compile_s"]) == FEWEST_EFFORT_ROUNDS  # the rule needs three a side
    assert e.rounds == FEWEST_EFFORT_ROUNDS and e.rounds_ended in (DECIDED, MOST_ROUNDS)
    shown_text, shown_html = section(added, plot=False, verbose=True)
    assert shown_text.startswith(f"{TITLE}\n") and text(e).split("\n", 1)[1] in shown_text
    assert f"<details open><summary>{escape(FOLDED)}</summary>{html(e).split(chr(10), 1)[1]}" \
        in shown_html
    short, folded = section(added, plot=False)
    assert len(short.splitlines()) <= 1 + len(e.rows) + 1 and "(-v shows every setting" in short
    assert "follow" not in short  # the figures are one flag away, not below
    assert "<details><summary>" in folded
    assert "data:image/png" in section(added)[1] and "data:image/png" not in shown_html


# --- wired in: --effort, the report, the causes ------------------------------------------------

@pytest.fixture(scope="module")
def compared():
    """One comparison with effort=True of the loop-helper model."""
    return jitmagic.compare(model, X, W, repeat=1, number=1, effort=True, quiet=True)


def test_effort_is_an_option_of_compare_and_part_of_why(compared):
    e = compared.part("effort")
    assert isinstance(e, Effort)
    assert set(e.rows) == {s.name for s in candidates()} | {OUT_OF_LINE}  # `layer` nested
    assert e.rows[OUT_OF_LINE].kept == {"layer": 4}
    assert Options(why=True).effort and not Options().effort
    assert TITLE in bundle_text(compared)


def test_a_report_with_effort_round_trips_and_one_of_the_previous_schema_loads(compared,
                                                                               tmp_path):
    path = tmp_path / "r.json"
    jitmagic.save(compared, path)
    saved = json.loads(path.read_text())
    assert saved["schema"] == "jitmagic.comparison/6" and "effort" in saved
    back = jitmagic.load(path)
    assert back.part("effort") == compared.part("effort")
    old = {k: v for k, v in saved.items() if k not in ("effort", "why")} | {
        "schema": "jitmagic.comparison/4"}
    path.write_text(json.dumps(old))
    previous = jitmagic.load(path)
    assert previous.part("effort") is None
    (cause,) = [c for c in why_causes(previous, part_causes()) if c.name == CAUSE]
    assert (cause.kind, cause.option) == ("not measured", "--effort")


def test_the_causes_name_the_effort_cause_as_measured_only_where_it_was(compared):
    (cause,) = [c for c in why_causes(compared, part_causes()) if c.name == CAUSE]
    assert cause.measured and cause.kind != "not measured"
    plain = jitmagic.compare(model, X, W, repeat=1, number=1, quiet=True)
    (unmeasured,) = [c for c in why_causes(plain, part_causes()) if c.name == CAUSE]
    assert not unmeasured.measured and unmeasured.option == "--effort"


def test_ctrl_c_in_the_effort_part_of_a_comparison_marks_it_partial_and_nothing_after_runs():
    before, handler = user_state(), signal.getsignal(signal.SIGINT)

    def press(p):
        if p.what == PART and p.round == 2:
            signal.raise_signal(signal.SIGINT)  # a real Ctrl-C, before its second round

    opts = Options(repeat=1, number=1, effort=True, lines=True)
    check = checkpoint("model", opts, time.perf_counter())
    check.report.draw = press
    result = measure_prepared(variants_of(model, (X, W), {}), opts, check=check)
    e = result.part("effort")
    assert result.stopped is None  # the comparison had finished: only this part stopped
    assert e.stopped.startswith("interrupted by the user")
    assert result.stopped_anywhere == e.stopped
    assert result.lines is None  # the part after it did not start
    assert len(e.default["compile_s"]) == 1
    assert signal.getsignal(signal.SIGINT) is handler
    assert user_state() == before


# --- the default row, the chart, the causes' words -------------------------------------------

def table_lines(e: Effort) -> list[str]:
    lines = text(e).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("setting "))
    return lines[start + 1:start + 2 + len(e.rows)]


def test_the_table_shows_the_default_first_with_the_baseline_figures():
    row = crafted_row([0.33, 0.34, 0.33, 0.35, 0.33], DEFAULT_CALL)
    first, second = table_lines(crafted(row))
    assert first.split()[0] == DEFAULT and "1 s [wall time]" in first
    assert "10 ms [wall time]" in first and "the reference" in first
    assert second.startswith(LEVEL0.name)
    assert "<code>default</code>" in html(crafted(row))


def test_the_default_row_of_a_real_record_is_first_and_every_setting_after_it(measured):
    lines = table_lines(measured)
    assert [line.split()[0] for line in lines] == [DEFAULT] + [n.split()[0]
                                                              for n in measured.rows]
    compiled, called = measured.default_s()
    assert np.isfinite(compiled) and np.isfinite(called)


def bar_groups(fig) -> list[list[str]]:
    """Each panel's bar labels (the left panel's y tick labels, read per bar)."""
    left, right = fig.axes
    names = [t.get_text() for t in left.get_yticklabels()]
    assert len(left.patches) == len(right.patches) == len(names)
    return names


def test_the_chart_draws_a_bar_group_per_measured_setting_and_names_the_clock(measured):
    from matplotlib.figure import Figure

    from jitmagic.render.charts.bars import effort_figure

    fig = effort_figure(measured)
    assert isinstance(fig, Figure)
    assert bar_groups(fig) == [DEFAULT, *measured.rows]
    clock = "CPU time" if measured.clock() == "CPU" else "wall time"
    assert all(clock in ax.get_xlabel() for ax in fig.axes)
    assert "XLA compile" in fig.axes[0].get_xlabel() and "a call" in fig.axes[1].get_xlabel()


class State(NamedTuple):
    w: jax.Array
    b: jax.Array

    def step(self, x):
        for _ in range(3):
            x = jnp.tanh(x @ self.w + self.b)
        return x


def test_the_chart_of_a_namedtuple_method_on_a_busy_machine_says_cpu_time():
    from jitmagic.render.charts.bars import effort_figure
    from jitmagic.render.drawing import bars_png as effort_png

    e = measure_effort(flat_of(State(W, jnp.zeros(16)).step, X), rounds=1, settings=[LEVEL0])
    assert bar_groups(effort_figure(e)) == [DEFAULT, LEVEL0.name]
    assert effort_png(e)[:8] == b"\x89PNG\r\n\x1a\n" and effort_png(e, plot=False) is None
    busy = {"wait_s": (0.5,) * 5, "first_call_s": (1.0,) * 5, "first_call_cpu_s": (1.0,) * 5}
    both = {"compile_cpu_s": tuple(DEFAULT_COMPILE), "execute_cpu_s": tuple(DEFAULT_CALL), **busy}
    row = crafted_row([0.3] * 5, DEFAULT_CALL)
    on_cpu = Effort("step", {**crafted().default, **both},
                    {row.name: EffortRow(row.setting, {**row.samples, **both},
                                         reached=True, outputs="exact")})
    assert on_cpu.clock() == "CPU"
    assert all("CPU time" in ax.get_xlabel() for ax in effort_figure(on_cpu).axes)


def test_a_row_that_failed_before_a_sample_has_no_bar():
    from jitmagic.render.charts.bars import effort_figure

    failed = EffortRow(Setting("broken", {"x": 1}), error="Traceback: boom")
    e = crafted(crafted_row([0.3] * 5, DEFAULT_CALL), failed)
    assert bar_groups(effort_figure(e)) == [DEFAULT, LEVEL0.name]


def test_out_of_line_is_worded_apart_from_the_effort_settings():
    same = crafted_row(DEFAULT_COMPILE, DEFAULT_CALL, name="same")
    apart = crafted_row(DEFAULT_COMPILE, DEFAULT_CALL, name=OUT_OF_LINE)
    settings, helpers = causes(Holding(crafted(same, apart)))
    assert (settings.name, helpers.name) == (CAUSE, HELPERS_CAUSE)
    assert settings.said == ("no lower effort setting is worth using here (`same`: no "
                             "measurable effect on this backend's compile)")
    assert helpers.said == "keeping the helpers out of line is not worth it here (nothing to gain)"
    (alone,) = causes(Holding(crafted(apart)))
    assert alone.name == HELPERS_CAUSE


# --- the words a new user found wrong (issue: effort wording) ---------------------------------

NOISY_CALL = [0.0080, 0.0150, 0.0100, 0.0200, 0.0090]
FAST_COMPILE = [0.30, 0.31, 0.30, 0.29, 0.30]


def out_of_line_row(compile_s, execute_s) -> EffortRow:
    """The out-of-line row as the measurement writes it: the line to write is its config."""
    setting = Setting(OUT_OF_LINE, {}, "layer = equinox.internal.noinline(layer)",
                      keyword=False)
    return EffortRow(setting, {"compile_s": tuple(compile_s), "execute_s": tuple(execute_s)},
                     reached=True, outputs="exact", kept={"layer": 12})


def test_out_of_line_that_pays_is_its_own_cause_with_a_fix_that_keeps_the_helper_out():
    """It was ranked "XLA's optimization effort ... what to do: compile less hard"."""
    apart = out_of_line_row(FAST_COMPILE, DEFAULT_CALL)
    same = crafted_row(DEFAULT_COMPILE, DEFAULT_CALL, name="same")
    settings, helpers = causes(Holding(crafted(same, apart)))
    assert (settings.name, settings.kind) == (CAUSE, "nothing to gain")
    assert (helpers.name, helpers.kind) == ("helpers kept out of line", "saving")
    assert helpers.said.startswith("with each helper out of line")
    assert helpers.fix == "keep `layer` out of line: `layer = equinox.internal.noinline(layer)`"
    (level0,) = causes(Holding(crafted(crafted_row(FAST_COMPILE, DEFAULT_CALL))))
    assert level0.name == CAUSE and level0.fix.startswith("compile less hard: `jax.jit(")


def test_a_decided_compile_with_an_inconclusive_call_is_said_as_such_under_inconclusive():
    """It vanished from the causes; and an inconclusive heading held "not worth using"."""
    decided = crafted_row(FAST_COMPILE, NOISY_CALL)
    unsure = crafted_row([0.5, 1.5, 0.7, 1.2, 0.9], DEFAULT_CALL, name="unsure")
    (cause,) = causes(Holding(crafted(decided, unsure)))
    assert cause.kind == "inconclusive" and "not worth" not in cause.said
    assert cause.said == (
        "no lower effort setting was shown to pay here: `xla_backend_optimization_level=0`: "
        "XLA compiles 3.33× faster in wall time (3.19×–3.52×); whether a call is slower is "
        "inconclusive, so no break-even; `unsure`: whether XLA compiles faster is inconclusive")
    apart = out_of_line_row([0.5, 1.5, 0.7, 1.2, 0.9], DEFAULT_CALL)
    (_, helpers) = causes(Holding(crafted(decided, apart)))
    assert helpers.said == ("keeping the helpers out of line was not shown to pay here: "
                            "whether XLA compiles faster is inconclusive")


def test_a_bigger_saving_left_undecided_is_said_beside_the_setting_used():
    used = crafted_row([0.60, 0.61, 0.60, 0.59, 0.60], DEFAULT_CALL, name="used")
    bigger = crafted_row(FAST_COMPILE, NOISY_CALL)
    (cause,) = causes(Holding(crafted(used, bigger)))
    assert cause.kind == "saving" and cause.said.startswith("at `used` XLA compiles")
    assert ("; `xla_backend_optimization_level=0`: XLA compiles 3.33× faster in wall time "
            "(3.19×–3.52×); whether a call is slower is inconclusive, so no break-even"
            ) in cause.said


def test_the_table_marks_ratios_as_the_main_table_does_and_inconclusive_ones_have_no_side():
    unsure = crafted_row([0.5, 1.5, 0.7, 1.2, 0.9], DEFAULT_CALL, name="unsure")
    same = crafted_row(DEFAULT_COMPILE, DEFAULT_CALL, name="same")
    e = crafted(unsure, same)
    said = text(e)
    assert "n.s." not in said and "n.s." not in html(e)
    _, unsure_line, same_line = table_lines(e)
    assert "1.11× inconclusive" in unsure_line
    assert "1.00× no measurable difference" in same_line
    assert ("whether XLA compiles faster is inconclusive: 1.11× in the setting's favour "
            "(0.44×–3.06×)") in said
    slow = crafted_row([1.5, 0.8, 1.9, 1.2, 1.4], DEFAULT_CALL, name="slow")
    assert "1.40× in the default's favour" in text(crafted(slow))


def test_the_section_says_why_its_figures_are_cpu_time_or_wall_time():
    busy = {"wait_s": (0.5,) * 5, "first_call_s": (1.0,) * 5, "first_call_cpu_s": (1.0,) * 5}
    both = {"compile_cpu_s": tuple(DEFAULT_COMPILE), "execute_cpu_s": tuple(DEFAULT_CALL)}
    row = crafted_row(FAST_COMPILE, DEFAULT_CALL)
    on_cpu = Effort("loss", {**crafted().default, **both, **busy},
                    {row.name: EffortRow(row.setting, {**row.samples, **both, **busy},
                                         reached=True, outputs="exact")})
    assert ("every figure is CPU time: the machine was busy while these rows ran (their cold "
            "runs waited for a CPU 33% of the time they were ready to run)") in text(on_cpu)
    quiet = {**busy, "wait_s": (0.01,) * 5}
    on_wall = Effort("loss", {**crafted().default, **both, **quiet},
                     {row.name: EffortRow(row.setting, {**row.samples, **both, **quiet},
                                          reached=True, outputs="exact")})
    assert ("every figure is wall time: the machine was quiet while these rows ran (their "
            "cold runs waited for a CPU 1% of the time") in text(on_wall)
    assert "how long the runs waited for a CPU was not measured" in text(crafted(row))


def test_ratios_decided_on_cpu_time_are_said_in_cpu_time_words_with_the_clock():
    """On a busy machine the rows' ratios are CPU time's, yet they read "XLA compiles
    1.64× faster", wall time's word, and where a call was undecided with no clock beside
    the ratio at all."""
    busy = {"wait_s": (0.5,) * 5, "first_call_s": (1.0,) * 5, "first_call_cpu_s": (1.0,) * 5}
    default = {**crafted().default, "compile_cpu_s": tuple(DEFAULT_COMPILE),
               "execute_cpu_s": tuple(DEFAULT_CALL), **busy}

    def on_cpu(name: str, execute: list[float]) -> EffortRow:
        row = crafted_row(FAST_COMPILE, execute, name=name)  # 3.33× on wall time
        cpu = {"compile_cpu_s": tuple(0.61 * x for x in DEFAULT_COMPILE),
               "execute_cpu_s": tuple(execute)}
        return EffortRow(row.setting, {**row.samples, **cpu, **busy}, reached=True,
                         outputs="exact")

    used, open_ = on_cpu(LEVEL0.name, DEFAULT_CALL), on_cpu("unsure", NOISY_CALL)
    e = Effort("loss", default, {r.name: r for r in (used, open_)})
    assert e.clock() == "CPU" and e.outcome(used).compile.kind == "faster"
    said = text(e)
    assert ("at `xla_backend_optimization_level=0` XLA's compile takes 1.64× less CPU time "
            "(") in said and "(1 s → 610 ms, CPU time)" in said
    assert "a call takes the same time (10 ms → 10 ms, CPU time)" in said
    assert "1.64× faster" not in said and "3.33×" not in said
    (cause,) = causes(Holding(e))
    assert cause.said.startswith("at `xla_backend_optimization_level=0` XLA's compile takes "
                                 "1.64× less CPU time")
    assert "1.64× faster" not in cause.said
    (undecided,) = causes(Holding(Effort("loss", default, {open_.name: open_})))
    assert ("`unsure`: XLA's compile takes 1.64× less CPU time (") in undecided.said
    assert "; whether a call is slower is inconclusive, so no break-even" in undecided.said


def test_a_setting_whose_call_beats_your_own_compiler_options_says_they_cost_run_time():
    level1 = crafted_row([0.5, 1.5, 0.7, 1.2, 0.9], [0.0027, 0.0026, 0.0027, 0.0028, 0.0027],
                         name="xla_backend_optimization_level=1")
    e = dataclasses.replace(crafted(level1), baseline={"xla_backend_optimization_level": 0})
    said = ("at `xla_backend_optimization_level=1` a call is 3.70× faster than with your own "
            '`compiler_options={"xla_backend_optimization_level": 0}` (3.54×–3.92×) '
            "(10 ms → 2.7 ms, wall time): your options cost run time")
    (cause,) = causes(Holding(e))
    assert cause.kind == "inconclusive" and said in cause.said
    assert said in text(e)
    assert "your options cost run time" not in text(crafted(level1))  # JAX's defaults


def test_a_mismatch_of_the_whole_output_is_worded_without_nested_brackets():
    row = dataclasses.replace(crafted_row([0.1] * 5, DEFAULT_CALL, outputs="mismatch"),
                              outputs_found="the whole output (largest difference 0.986)")
    said = text(crafted(row))
    assert ("the outputs differ from the default's beyond rounding: the whole output (largest "
            "difference 0.986); it changes the results, so it is not recommended") in said
    assert "(the whole output (" not in said


# --- the rounds: a row the rule has decided takes no more ---------------------------------

def test_a_row_the_rule_decided_takes_no_more_rounds_and_all_decided_ends_them():
    from jitmagic.measure.parts.effort import settling
    from jitmagic.measure.sampling.runner import Sampler

    runs = Sampler({DEFAULT: None, "clear": None, "unsure": None}, ("compile_s", "execute_s"))
    runs.samples[DEFAULT] = {"compile_s": [1.0, 1.01, 0.99], "execute_s": [0.01, 0.0101, 0.0099]}
    runs.samples["clear"] = {"compile_s": [0.3, 0.31, 0.3], "execute_s": [0.05, 0.051, 0.049]}
    runs.samples["unsure"] = {"compile_s": [0.5, 1.5, 0.9], "execute_s": [0.01, 0.0101, 0.0099]}
    rounds = settling(runs, 5)
    assert rounds.cap == 5 and rounds.another(0) and rounds.another(2)  # three at least
    assert rounds.another(3) and runs.settled == {"clear"}  # "unsure" still undecided
    runs.samples["unsure"] = {"compile_s": [0.51, 0.5, 0.5], "execute_s": [0.02, 0.0201, 0.0199]}
    assert not rounds.another(3) and runs.settled == {"clear", "unsure"}
    assert not settling(runs, 5).another(5) and settling(runs, 2) == 2  # below three: fixed


def test_a_decided_setting_of_a_real_program_still_has_the_fewest_rounds():
    e = measure_effort(flat_of(model, X, W), rounds=4, settings=[LEVEL0])
    runs = len(e[LEVEL0.name].samples["compile_s"])
    assert FEWEST_EFFORT_ROUNDS <= runs <= 4 and len(e.default["compile_s"]) >= runs


def test_the_rounds_past_the_fewest_stop_where_the_budget_would_be_overrun():
    from jitmagic.measure.parts.effort import settling
    from jitmagic.measure.sampling.runner import Sampler

    runs = Sampler({DEFAULT: None, "unsure": None}, ("compile_s", "execute_s"))
    runs.samples[DEFAULT] = {"compile_s": [1.0, 1.01, 0.99], "execute_s": [0.01, 0.0101, 0.0099]}
    runs.samples["unsure"] = {"compile_s": [0.5, 1.5, 0.9], "execute_s": [0.01, 0.0101, 0.0099]}
    spent = settling(runs, Rounds(AUTO, budget_s=0.0, cap=5))
    assert spent.another(2)  # the fewest rounds whatever the budget
    assert not spent.another(3) and spent.ended == BUDGET
    assert settling(runs, 5).another(3)  # no budget: the undecided row takes another


def test_the_rounds_are_the_one_rule_for_parts_with_the_options_budget():
    """--effort's rounds read --budget (as every part's do), up to the comparison's runs."""
    from jitmagic.measure.parts.run import part_rounds

    result = run_comparison("model", variants_of(model, (X, W), {}), Options(repeat=4, number=1))
    rounds = part_rounds(result, Options(budget=7))
    assert (rounds.auto, rounds.cap, rounds.budget_s) == (True, 4, 7)


# --- one lowering for every setting -----------------------------------------------------------

def test_the_program_is_traced_once_for_every_row_and_round():
    traced = []

    def counted(x, w):
        traced.append(1)  # runs once per trace
        return model(x, w)

    flat = flat_of(counted, X, W)
    traced.clear()
    e = measure_effort(flat, rounds=2, settings=[LEVEL0, FAST_MATH])
    assert len(e.default["compile_s"]) == 2 and len(e[LEVEL0.name].samples["compile_s"]) == 2
    assert len(traced) == 1  # 3 rows × 2 rounds of cold compiles from one lowering


@functools.partial(jax.jit, static_argnames="depth")
def deep(x, w, depth):
    for _ in range(depth):
        x = layer(x, w)
    return x


@pytest.mark.parametrize("args, kwargs", [((X, W, 3), {}), ((X, W), {"depth": 3})],
                         ids=["static by position", "static by name"])
def test_a_users_static_argument_is_left_out_of_the_compiled_programs_call(args, kwargs):
    from jitmagic.measure.sampling.stages import lower_once

    made = lower_once(deep, args, kwargs, {"static_argnames": ("depth",)})
    assert made is not None and len(made.args) == 2 and made.kwargs == {}
    e = measure_effort(variants_of(deep, args, kwargs)["flat"], rounds=1, settings=[LEVEL0])
    assert e.default_error is None and e[LEVEL0.name].error is None
    assert e[LEVEL0.name].outputs in ("exact", "rounding")

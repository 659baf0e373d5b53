"""Big captured constants measured passed as arguments, on real JAX programs shaped as
users write them: a global NumPy lookup table read in a helper called in a loop, a
closure over a weight matrix, a method reading ``self.table``.

Each program built is checked by what it holds (its jaxpr's captured constants, its
equations, its StableHLO), never by the code that built it; no test asserts a time.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from support import comparison, variant

import jitmagic
from jitmagic.measure.parts.constants.arguments import (
    PART,
    add_constant_arguments,
    build_forms,
    wanted,
)
from jitmagic.measure.parts.constants.lifting import LIFT_BYTES, Replay, program_constants
from jitmagic.measure.pipeline import variants_of
from jitmagic.measure.sampling.outputs import compare_outputs
from jitmagic.measure.sampling.stops import Checkpoint
from jitmagic.measure.sampling.structure import captured_constants, count_equations
from jitmagic.measure.variants.rows import Staged
from jitmagic.model.causes.constant_arguments import (
    CAPTURED,
    PASSED,
    ConstantArguments,
    ConstantVariant,
    LiftedConstant,
)
from jitmagic.model.comparison import Comparison
from jitmagic.model.saved.schema import ReportSchemaError
from jitmagic.render.causes.constant_arguments import sentence, text

MIB4 = 1 << 20  # float32 elements in 4 MiB

# --- the user's code ----------------------------------------------------------------

TABLE = np.linspace(0.0, 1.0, MIB4, dtype=np.float32)  # a global lookup table, 4 MiB


def lookup(x, idx):
    return x + jnp.take(TABLE, idx)


def decode(x, idx):
    for _ in range(3):
        x = lookup(x, idx) * 0.5
    return x


def make_model():
    weights = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)

    def model(x):
        return jnp.tanh(x @ weights)

    return model


class Embed:
    def __init__(self):
        self.table = jnp.linspace(0.0, 1.0, MIB4, dtype=jnp.float32).reshape(1024, 1024)

    def __call__(self, ids):
        return self.table[ids].sum(axis=0)


SMALL = np.ones(1000, np.float32)  # 4 KB


def small(x):
    return jnp.sin(x * SMALL)


IDX = jnp.arange(8) * 1000
X8 = jnp.ones(8)


def line_of(fn, snippet: str) -> int:
    source, start = inspect.getsourcelines(fn)
    return start + next(i for i, t in enumerate(source) if snippet in t)


def forms_of(fn, *args, variant: str = "flat"):
    """The variant's two forms, built from one trace of it (nothing is timed)."""
    prepared = variants_of(fn, args, {})[variant]
    traced = jax.jit(prepared.variant.fn, **prepared.variant.jit_options).trace(*args)
    notes: list = []
    forms = build_forms(variant, prepared, traced, notes)
    return forms, traced.jaxpr, notes


def run_form(forms, form):
    fn, args = forms.calls[form]
    return jax.block_until_ready(jax.jit(fn)(*args))


# --- what is lifted, named, and built ------------------------------------------------


@pytest.mark.parametrize("variant", ["flat", "nested"])
def test_a_global_table_read_in_a_helper_is_named_with_its_line_and_bytes(variant):
    forms, closed, _ = forms_of(decode, X8, IDX, variant=variant)
    record = forms.record
    (const,) = record.constants
    assert (const.nbytes, const.shape, const.dtype) == (4 * 2**20, (MIB4,), "float32")
    assert const.line_numbers == (line_of(lookup, "jnp.take(TABLE"),)
    assert (const.name, const.matched) == ("TABLE", "same object")
    assert record.captured_constants == captured_constants(closed) == (1, 4 * 2**20)
    assert record.error is None and not record.notes


@pytest.mark.parametrize("variant", ["flat", "nested"])
def test_the_passed_program_takes_the_constant_as_an_argument(variant):
    forms, closed, _ = forms_of(decode, X8, IDX, variant=variant)
    record = forms.record
    # counted in the built program: the lifted constant is gone, the equations are kept
    assert record.constants_left == (0, 0)
    assert record.eqns == {"traced": count_equations(closed), CAPTURED: count_equations(closed),
                           PASSED: count_equations(closed)}
    fn, args = forms.calls[PASSED]
    passed = jax.jit(fn).trace(*args)
    assert captured_constants(passed.jaxpr) == (0, 0)
    assert passed.jaxpr.in_avals[0].shape == (MIB4,)  # the table is the first parameter
    assert len(passed.lower().as_text()) < 100_000  # no 4 MiB literal in the module
    fn, args = forms.calls[CAPTURED]
    assert len(jax.jit(fn).trace(*args).lower().as_text()) > 4 * 2**20


def test_the_nested_variant_keeps_its_jit_calls_with_the_table_passed_down():
    forms, closed, _ = forms_of(decode, X8, IDX, variant="nested")
    assert closed.consts == []  # JAX keeps the table in the helper's own jaxpr
    fn, args = forms.calls[PASSED]
    jaxpr = jax.jit(fn).trace(*args).jaxpr
    calls = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "jit"]
    assert len(calls) == 3 and {e.params["name"] for e in calls} == {"lookup"}
    assert all(e.invars[0] is jaxpr.jaxpr.invars[0] for e in calls)  # the table, passed
    assert len({id(e.params["jaxpr"]) for e in calls}) == 1  # one body, as before


@pytest.mark.parametrize("variant", ["flat", "nested"])
def test_both_forms_compute_the_same_outputs(variant):
    forms, _, _ = forms_of(decode, X8, IDX, variant=variant)
    expected = decode(X8, IDX)
    for form in (CAPTURED, PASSED):
        (out,) = run_form(forms, form)
        assert compare_outputs(expected, out).kind == "exact"


def test_a_closure_over_weights_is_named_by_its_cell():
    model = make_model()
    forms, _, _ = forms_of(model, jnp.ones((4, 1024)))
    (const,) = forms.record.constants
    assert (const.name, const.nbytes, const.shape) == ("weights", 4 * 2**20, (1024, 1024))
    assert const.line_numbers == (line_of(model, "x @ weights"),)
    (a,), (b,) = (run_form(forms, f) for f in (CAPTURED, PASSED))
    assert compare_outputs(a, b).match


def test_a_method_reading_self_table_is_named_self_table():
    embed = Embed()
    forms, closed, _ = forms_of(embed, jnp.arange(4))
    (const,) = forms.record.constants
    assert closed.consts[0] is embed.table  # a jax Array global is held as it is
    assert (const.name, const.matched) == ("self.table", "same object")
    assert const.line_numbers == (line_of(Embed.__call__, "self.table[ids]"),)
    assert forms.record.constants_left == (0, 0)


def test_a_float64_table_converted_to_float32_is_named_by_its_shape():
    wide = np.linspace(0.0, 1.0, MIB4 // 2)  # float64: JAX holds a float32 copy

    def scaled(x):
        return x * wide[:8].sum() + jnp.cumsum(wide)[-1]

    forms, closed, _ = forms_of(scaled, X8)
    (const,) = forms.record.constants
    assert closed.consts[0].dtype == np.float32 and not np.may_share_memory(closed.consts[0],
                                                                            wide)
    assert (const.name, const.matched, const.dtype) == ("wide", "same shape", "float32")


def test_constants_are_found_and_lifted_as_literals_too():
    before = jax.config.jax_use_simplified_jaxpr_constants
    jax.config.update("jax_use_simplified_jaxpr_constants", True)
    try:
        forms, closed, _ = forms_of(decode, X8, IDX, variant="nested")
        (out,) = run_form(forms, PASSED)
    finally:
        jax.config.update("jax_use_simplified_jaxpr_constants", before)
    assert forms.record.constants[0].name == "TABLE"
    assert forms.record.constants_left == (0, 0)
    assert compare_outputs(decode(X8, IDX), out).kind == "exact"


def test_a_constant_inside_a_loop_bodys_jit_is_left_captured_with_a_note():
    inner = jax.jit(lookup)

    def looped(x, idx):
        return jax.lax.fori_loop(0, 3, lambda i, c: inner(c, idx), x)

    forms, _, _ = forms_of(looped, X8, IDX)
    assert forms.record.constants == () and not forms.calls
    assert any("read inside a `scan`" in n for n in forms.record.notes)
    assert "no constant was passed as an argument" in sentence(forms.record)


# --- bad input --------------------------------------------------------------------------


def test_captured_values_that_are_not_arrays_are_noted_and_skipped():
    closed = jax.jit(lambda x: x * SMALL[:8] + TABLE[:8]).trace(X8).jaxpr
    objects = [object(), np.array([None, 1], dtype=object)]
    for value in objects:
        odd = jax.extend.core.ClosedJaxpr(closed.jaxpr, [value, *closed.consts[1:]])
        found = program_constants(odd)
        assert [c.value is value for c in found.constants] == [False] * len(found.constants)
        (note,) = map(str, found.notes)
        assert "not an array of numbers" in note and "left captured" in note


def test_a_leaked_tracer_among_the_constants_is_noted_not_raised():
    closed = jax.jit(lambda x: x * TABLE[:8]).trace(X8).jaxpr
    seen = []

    def inside(y):
        seen.append(program_constants(jax.extend.core.ClosedJaxpr(closed.jaxpr, [y])))
        return y

    jax.jit(inside).trace(TABLE[:8])
    (found,) = seen
    assert found.constants == [] and "a tracer" in str(found.notes[0])


def test_a_big_constant_beside_an_object_is_lifted_alone():
    def both(x):
        return x * TABLE[:8] + jnp.sin(TABLE).sum()

    closed = jax.jit(both).trace(X8).jaxpr
    big = max(closed.consts, key=lambda c: c.nbytes)
    odd = jax.extend.core.ClosedJaxpr(closed.jaxpr, [c if c is big else object()
                                                     for c in closed.consts])
    found = program_constants(odd)
    assert [c.value for c in found.lifted()] == [big] and len(found.notes) == 1
    prepared = variants_of(both, (X8,), {})["flat"]
    notes: list[str] = []
    forms = build_forms("flat", prepared, odd, notes)  # the replay fails: said, not raised
    assert notes == found.notes and forms.record.error and not forms.calls


def test_only_constants_of_64_kib_or_more_are_lifted():
    mid = np.ones(LIFT_BYTES // 4, np.float32)
    below = np.ones(LIFT_BYTES // 4 - 1, np.float32)
    closed = jax.jit(lambda x: x + jnp.sum(mid) * jnp.sum(below) + jnp.sum(TABLE)).trace(X8).jaxpr
    lifted = program_constants(closed).lifted()
    assert sorted(c.nbytes for c in lifted) == [LIFT_BYTES, 4 * 2**20]
    replay = Replay(closed, [c.value for c in lifted])
    left = jax.jit(replay.passed("f")).trace(tuple(c.value for c in lifted), X8).jaxpr
    assert captured_constants(left) == (1, below.nbytes)


# --- the record -------------------------------------------------------------------------


def a_record() -> ConstantArguments:
    const = LiftedConstant(4 * 2**20, (MIB4,), "float32", (("/u/model.py", 12),), "BIG",
                           "same object")
    samples = {CAPTURED: {"first_call_s": [2.1, 2.0, 2.3], "compile_s": [1.9, 1.8, 2.1]},
               PASSED: {"first_call_s": [0.55, 0.6, 0.5], "compile_s": [0.4, 0.45, 0.42]}}
    v = ConstantVariant("flat", (const,), samples, (1, 4 * 2**20), (0, 0),
                        {"traced": 6, CAPTURED: 6, PASSED: 6}, "rounding", 4.8e-7)
    return ConstantArguments("model", {"flat": v}, ("a note",), None, 14.0)


def test_the_record_derives_the_saving_by_the_one_rule():
    v = a_record()["flat"]
    d = v.difference
    assert d.kind == "faster" and d.ratio == pytest.approx(2.1 / 0.55)
    assert v.saved_s == pytest.approx(2.1 - 0.55)
    low, high = v.saved_interval
    assert low == pytest.approx(2.1 * (1 - 1 / d.low)) and low < v.saved_s < high
    assert high < 2.1  # never more than the whole captured first call
    said = sentence(v)
    assert said.startswith("flat: line 12 captures `BIG` (4.0 MiB): passed as an argument, "
                           "the cold first call takes 1.6 s less (")
    close = [0.5, 0.501, 0.502, 0.5, 0.501]  # the whole interval within 0.91–1.1
    same = dataclasses.replace(v, samples={CAPTURED: {"first_call_s": close},
                                           PASSED: {"first_call_s": close[::-1]}})
    assert same.difference.kind == "no measurable difference"
    assert sentence(same).endswith("no measurable difference in the cold first call")
    # a wide gap the rule leaves undecided is inconclusive here too, never "no difference"
    wide = dataclasses.replace(v, samples={CAPTURED: {"first_call_s": [0.5, 0.6, 0.55]},
                                           PASSED: {"first_call_s": [0.55, 0.5, 0.6]}})
    assert wide.difference.kind == "inconclusive"
    assert "no measurable difference" not in sentence(wide)
    assert re.search(r"passed as an argument, inconclusive, the cold first call is [\d.]+×"
                     r"( faster| slower)? \([\d.]+×–[\d.]+×\)$", sentence(wide))


def test_a_report_round_trips_and_an_old_one_loads(tmp_path):
    report = comparison(every=0.1, constant_arguments=a_record())
    d = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert Comparison.from_dict(d).to_dict() == d
    path = tmp_path / "r.json"
    jitmagic.save(report, path)
    loaded = jitmagic.load(path)
    assert loaded.constant_arguments == report.constant_arguments
    assert "Big constants" in str(loaded) and "`BIG`" in str(loaded)
    del d["constant_arguments"]
    assert Comparison.from_dict(d).constant_arguments is None
    assert "Big constants" not in str(Comparison.from_dict(d))
    d["constant_arguments"] = {**a_record().to_dict(), "variants": {"flat": {"variant": "f"}}}
    with pytest.raises(ReportSchemaError, match="captured_constants: missing"):
        Comparison.from_dict(d)


# --- the part, in a comparison ------------------------------------------------------------


def test_small_constants_are_not_measured():
    c = jitmagic.compare(small, jnp.ones(1000), repeat=1, number=1, progress=False)
    assert c.flat.constant_bytes == 4000 and not wanted(c)
    assert c.constant_arguments is None and "Big constants" not in str(c)


def a_big_comparison():
    """A measured-looking comparison whose flat variant captured 4 MiB, and the real
    prepared variant and trace behind it."""
    prepared = variants_of(make_model(), (jnp.ones((4, 1024)),), {})
    flat = prepared["flat"]
    traced = jax.jit(flat.variant.fn).trace(*flat.args)
    result = comparison(variant("flat", constant_bytes=4 * 2**20), variant("nested"),
                        every=0.1)
    return result, {"flat": flat}, {"flat": Staged(traced)}


def test_a_timeout_stops_the_part_after_one_run_and_says_so():
    result, prepared, built = a_big_comparison()
    got = add_constant_arguments(result, prepared, built, check=Checkpoint(deadline=0.0))
    record = got.constant_arguments
    assert record.stopped.startswith("stopped by --timeout after the flat captured form's run 1")
    assert got.stopped_anywhere == record.stopped
    assert not record["flat"].measured and "not measured" in sentence(record["flat"])
    assert "PARTIAL" in text(record).upper()


def test_a_stop_due_before_the_part_leaves_it_untimed_not_raised():
    result, prepared, built = a_big_comparison()
    check = Checkpoint()
    check("the comparison")  # the comparison finished; then the deadline passes
    check.deadline = 0.0
    record = add_constant_arguments(result, prepared, built, check=check).constant_arguments
    assert record.stopped == "stopped by --timeout after the comparison"
    assert record.variants == {} and "Big constants" in text(record)


def test_a_comparison_measures_its_big_constants_passed_as_arguments(tmp_path):
    parts = []
    c = jitmagic.compare(decode, X8, IDX, repeat=1, number=1, progress=parts.append)
    record = c.constant_arguments
    assert set(record.variants) == {"flat", "nested"}
    for v in record.variants.values():
        assert v.constants[0].name == "TABLE" and v.constants_left == (0, 0)
        assert all(len(v.samples[f]["first_call_s"]) >= 3 for f in (CAPTURED, PASSED))
        assert v.outputs_kind == "exact"
    assert any(p.what == PART for p in parts)
    shown = str(c)
    assert "Big constants" in shown and "captures `TABLE` (4.0 MiB)" in shown
    path = tmp_path / "r.json"
    jitmagic.save(c, path)
    assert jitmagic.load(path).constant_arguments == record


LABELS = np.array(["a", "b"] * 131072, dtype=object)  # only its length is used
COEFFICIENTS = [0.5] * 262144  # a Python list: a float32[262144] constant once converted


def labelled(x):
    scale = len(LABELS) / 262144.0
    return (x * jnp.sin(jnp.asarray(COEFFICIENTS)) * scale).sum()


def test_an_object_array_of_the_same_shape_is_never_named_for_a_number_constant():
    c = jitmagic.compare(labelled, jnp.ones(262144), repeat=1, number=1, progress=False)
    names = [k.name for v in c.constant_arguments.variants.values() for k in v.constants]
    assert names and "LABELS" not in names


def test_on_a_busy_machine_the_section_names_each_clock():
    """The sentence decides on CPU time and says so; the table's seconds are wall time,
    said in its header and under it (a wall 1.3 s against 402 ms sat beside a CPU saving)."""
    v = a_record()["flat"]
    busy = {form: {**s, "first_call_cpu_s": [x / 3 for x in s["first_call_s"]],
                   "wait_s": [x * 2 for x in s["first_call_s"]]}
            for form, s in v.samples.items()}
    record = dataclasses.replace(a_record(), variants={"flat": dataclasses.replace(
        v, samples=busy)})
    shown = text(record)
    assert record["flat"].clock == "CPU" and "CPU time" in sentence(record["flat"])
    assert "cold first call (wall)" in shown
    assert ("The machine was busy: the sentence above (flat) compares the process's CPU "
            "time, saving included; the table's seconds are wall time.") in shown
    assert "The machine was busy" not in text(a_record())


def test_a_high_ratio_never_gives_a_saving_bigger_than_the_call():
    """A new user read '99 ms less CPU time (33–300 ms)' of a captured first call of
    199, 129 and 129 ms: the interval was scaled from the passed median."""
    v = a_record()["flat"]
    wide = dataclasses.replace(v, samples={
        CAPTURED: {"first_call_s": [0.1996, 0.129, 0.129]},
        PASSED: {"first_call_s": [0.0301, 0.021, 0.045]}})
    low, high = wide.saved_interval
    assert wide.difference.high > 5 and high < 0.129 and low <= wide.saved_s <= high

"""vmap/jit orderings: real measurements on a small batch, the report format, bad input."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import pytest
from hypothesis import given
from hypothesis import strategies as st
from IPython.core.error import UsageError
from support import FAST, VMAP_CELL

import jitmagic
from jitmagic.errors import InputError
from jitmagic.measure.parts.orderings import compare_orderings
from jitmagic.measure.sampling.structure import normalized_hlo
from jitmagic.model.orderings import ORDERINGS, Orderings
from jitmagic.options.values import parse_in_axes


def small(x):
    for _ in range(2):
        x = jnp.tanh(x @ x.T) + x
    return x.sum()


@pytest.fixture(scope="module")
def compared() -> jitmagic.Comparison:
    """``jitmagic.compare`` with ``batch``: the engine's comparison plus the orderings."""
    return jitmagic.compare(small, jnp.ones((8, 8)), batch=8, repeat=1, number=2)


@pytest.fixture(scope="module")
def measured(compared) -> Orderings:
    return compared.orderings


def test_four_orderings_measured(measured):
    assert tuple(measured.rows) == ORDERINGS
    assert measured.batch == 8 and measured.built_batch and measured.in_axes == 0
    for row in measured.rows.values():
        assert row.error is None
        assert row.first_call_s > 0 and row.execute_s > 0 and row.execute_loops == 2
        assert len(row.samples["first_call_s"]) == 1 and len(row.samples["execute_s"]) == 1
        assert row.compile_events >= 1 and row.jaxpr_eqns >= 1 and row.jaxpr_text
    assert measured.outputs_match is True and measured.max_abs_diff == 0


def test_programs_compared_after_xla(measured):
    rows = measured.rows
    # The same XLA program, whichever way round the jit goes ...
    assert rows["jit(vmap(jit(f)))"].same_program is True
    assert rows["vmap(jit(f))"].same_program is True
    # ... but the jaxprs differ: jit(vmap(f)) is flat, the others hold one jit call.
    assert rows["jit(vmap(f))"].nested_calls == 0 and rows["vmap(jit(f))"].nested_calls == 1
    # No jit at all: op-by-op dispatch, one compile per primitive, no single program.
    assert rows["vmap(f)"].same_program is None and rows["vmap(f)"].stablehlo_bytes is None
    assert rows["vmap(f)"].compile_events > rows["jit(vmap(f))"].compile_events
    assert all(rows[n].stablehlo_bytes > 0 for n in ORDERINGS if n != "vmap(f)")


def test_a_different_function_is_a_different_program():
    xb = jnp.ones((4, 8, 8))
    a = jax.jit(jax.vmap(small)).trace(xb).lower().compile().as_text()
    b = jax.jit(jax.vmap(lambda x: jnp.sin(x).sum())).trace(xb).lower().compile().as_text()
    assert normalized_hlo(a) != normalized_hlo(b)
    assert not any("metadata=" in line for line in normalized_hlo(a))


def test_report_format_round_trips(measured):
    d = json.loads(json.dumps(measured.to_dict()))
    assert d["batch"] == 8 and d["in_axes"] == 0
    assert list(d["rows"]) == ["jit(vmap(f))", "vmap(jit(f))", "vmap(f)", "jit(vmap(jit(f)))"]
    row = d["rows"]["vmap(jit(f))"]
    for key in ("first_call_s", "execute_s", "samples", "jaxpr_eqns", "stablehlo_bytes",
                "same_program", "compile_events"):
        assert key in row
    assert row["first_call_s"] == row["samples"]["first_call_s"][0]
    assert Orderings.from_dict(d).to_dict() == d


def test_users_batch_with_in_axes():
    def affine(x, w, scale):
        return (x @ w) * scale

    xs, w = jnp.ones((5, 3)), jnp.ones((3, 2))
    o = compare_orderings(affine, xs, w, 2.0, in_axes=(0, None, None), repeat=1, number=1)
    assert o.batch == 5 and not o.built_batch and o.in_axes == (0, None, None)
    assert o.outputs_match is True
    assert o["jit(vmap(jit(f)))"].same_program is True


def test_compare_puts_orderings_into_the_comparison(compared):
    assert compared.flat.ok and compared.nested.ok  # the engine's comparison still runs
    assert compared.to_dict()["orderings"]["batch"] == 8
    again = jitmagic.Comparison.from_dict(json.loads(json.dumps(compared.to_dict())))
    assert again.orderings.to_dict() == json.loads(json.dumps(compared.to_dict()))["orderings"]


@pytest.mark.parametrize(("spec", "axes"), [("0", 0), ("0,None", (0, None)), ("1, -", (1, None)),
                                            ("0,", (0,))])
def test_in_axes_spec(spec, axes):
    assert parse_in_axes(spec) == axes


@given(st.lists(st.one_of(st.none(), st.integers(-5, 5)), min_size=2, max_size=6))
def test_in_axes_spec_round_trips(axes):
    assert parse_in_axes(",".join("None" if a is None else str(a) for a in axes)) == tuple(axes)


def test_magic_with_the_users_batch(run_magic):
    cell = ("import jax.numpy as jnp\ndef g(x, w, scale):\n    return jnp.tanh(x @ w) * scale\n"
            "g(jnp.ones((6, 4)), jnp.ones((4, 3)), 2)\n")
    result, _ = run_magic(f"-o {FAST} --no-plot --in-axes 0,None,None", cell)
    o = result.orderings
    assert o.batch == 6 and o.in_axes == (0, None, None) and not o.built_batch
    assert o.outputs_match is True and o["vmap(jit(f))"].same_program is True


@pytest.mark.parametrize(("spec", "message"), [("x", "'x' is not an axis"),
                                               ("None", "maps no argument"),
                                               ("0;1", "is not an axis")])
def test_bad_in_axes_spec(spec, message):
    with pytest.raises(InputError, match=message):
        parse_in_axes(spec)


@pytest.mark.parametrize(
    ("line", "cell", "message"),
    [
        ("--batch 0", VMAP_CELL, "--batch must be at least 1, not 0"),
        ("--batch -3", VMAP_CELL, "--batch must be at least 1"),
        ("--in-axes 0,None", VMAP_CELL, "gives 2 axes but the call has 1"),
        ("--in-axes 2", VMAP_CELL, r"shape \(8, 8\)\) along axis 2, which it does not have"),
        ("--in-axes zero", VMAP_CELL, "'zero' is not an axis"),
        ("--in-axes None", VMAP_CELL, "maps no argument"),
        ("--batch 4 --in-axes 0", VMAP_CELL, "Use one of them"),
        ("--vmap", "def f(n):\n    return n * 2\nf(3)\n", "needs an array argument"),
        ("--in-axes 0,0", "import jax.numpy as jnp\ndef f(x, y):\n    return x + y\n"
         "f(jnp.ones(3), jnp.ones(4))\n", r"different lengths: .* 3; .* 4"),
        ("--in-axes 0,1", "import jax.numpy as jnp\ndef f(x, n):\n    return x * n\n"
         "f(jnp.ones(3), 2)\n", "argument 2 .*holds no array: write None"),
        # a NamedTuple state whose step is a scalar: the leaf named, and what to write
        ("--in-axes 0,0", "import jax.numpy as jnp\nfrom typing import NamedTuple\n"
         "class State(NamedTuple):\n    w: jnp.ndarray\n    step: jnp.ndarray\n"
         "def f(s, x):\n    return s.w * x + s.step\n"
         "f(State(jnp.ones(3), jnp.array(0)), jnp.ones(3))\n",
         r"maps argument 1, \.step \(an array of shape \(\)\) along axis 0, which it does not "
         r"have: a scalar has no axis to map: give it None"),
        ("--vmap", "import jax, numpy as np, jax.numpy as jnp\ndef f(x):\n"
         "    return jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)\n"
         "f(jnp.ones(3))\n", "cannot be batched as asked"),
    ],
)
def test_bad_vmap_input_gets_a_clear_message(run_magic, line, cell, message):
    with pytest.raises(UsageError, match=message):
        run_magic(f"{FAST} {line}", cell)


def test_every_ordering_run_has_its_cpu_seconds_and_its_wait(measured):
    for row in measured.rows.values():
        s = row.samples
        assert len(s["first_call_cpu_s"]) == len(s["first_call_s"]) == 1
        assert len(s["execute_cpu_s"]) == len(s["execute_s"]) == 1
        assert s["first_call_cpu_s"][0] > 0
        if "wait_s" in s:  # where /proc gives it
            assert s["wait_s"][0] >= 0


def _orderings_on(chosen: dict, other: dict) -> Orderings:
    """Crafted orderings: the toggled two with these samples, the others unmeasured."""
    rows = {name: {"name": name, "samples": {}} for name in ORDERINGS}
    rows["jit(vmap(f))"]["samples"] = chosen
    rows["vmap(jit(f))"]["samples"] = other
    return Orderings.from_dict({"entry": "f", "batch": 8, "in_axes": 0, "built_batch": True,
                                "rows": rows})


#: Steady calls under load: wall times scattered, CPU times tight, the cold runs waiting.
BUSY_JIT_VMAP = {"first_call_s": [0.5] * 5, "first_call_cpu_s": [0.25] * 5,
                 "wait_s": [0.25] * 5, "execute_s": [1e-4, 3e-4, 1.2e-4, 2.5e-4, 1e-4],
                 "execute_cpu_s": [1.00e-4, 1.01e-4, 0.99e-4, 1.00e-4, 1.02e-4]}
BUSY_VMAP_JIT = {"first_call_s": [0.5] * 5, "first_call_cpu_s": [0.25] * 5,
                 "wait_s": [0.25] * 5, "execute_s": [3e-4, 1.5e-4, 4e-4, 1.4e-4, 3e-4],
                 "execute_cpu_s": [2.00e-4, 2.02e-4, 1.98e-4, 2.01e-4, 2.00e-4]}


def test_on_a_busy_machine_the_orderings_decide_on_cpu_time():
    busy = _orderings_on(BUSY_JIT_VMAP, BUSY_VMAP_JIT)
    assert busy.clock() == "CPU"
    v = busy.verdict()
    assert v.kind == "faster"
    assert v.headline.startswith("jit(vmap(f)) against vmap(jit(f)): 2.00× less CPU time "
                                 "per call (")
    assert "jit(vmap(f)) takes 2.00× less CPU time per call than vmap(jit(f))" in v.text
    assert "; 100 µs against 200 µs CPU time, 5 runs)" in v.text  # the medians decided on
    quiet = {k: v for k, v in BUSY_JIT_VMAP.items() if k != "wait_s"}
    quiet_other = {k: v for k, v in BUSY_VMAP_JIT.items() if k != "wait_s"}
    on_wall = _orderings_on(quiet, quiet_other)
    assert on_wall.clock() == "wall" and on_wall.verdict().kind == "inconclusive"


def test_on_a_busy_machine_the_table_shows_the_cpu_time_the_verdict_is_on():
    from jitmagic.render.orderings import panel_numbers, text_table

    busy = _orderings_on(BUSY_JIT_VMAP, BUSY_VMAP_JIT)
    table = text_table(busy)
    assert "per call, CPU time" in table and "per call / jit(vmap(f)), CPU time" in table
    assert "200 µs" in table  # vmap(jit(f))'s CPU median, the verdict's figure
    assert ("per call / jit(vmap(f)) CPU time", "2.00×") in panel_numbers(busy, "vmap(jit(f))")
    quiet = _orderings_on({k: v for k, v in BUSY_JIT_VMAP.items() if k != "wait_s"},
                          {k: v for k, v in BUSY_VMAP_JIT.items() if k != "wait_s"})
    assert "CPU time" not in text_table(quiet)
    # every figure on its clock: the seconds of no marked clock are wall time, said
    assert "runs [min–max], wall time where a column does not say CPU time" in table
    assert "runs [min–max], wall time:\n" in text_table(quiet)


def _per_call_rows(same: bool) -> Orderings:
    """Quiet orderings whose steady calls alone differ: jit(vmap(jit(f))) 1.3× the
    reference's, tight (the rule alone decides it), vmap(jit(f)) 2×, vmap(f) scattered."""
    tight = [1.00e-4, 1.01e-4, 0.99e-4, 1.00e-4, 1.02e-4]
    rows = {name: {"name": name, "samples": {"first_call_s": [0.5] * 5}}
            for name in ORDERINGS}
    for name, scale in (("jit(vmap(f))", 1.0), ("jit(vmap(jit(f)))", 1.3),
                        ("vmap(jit(f))", 2.0)):
        rows[name]["samples"]["execute_s"] = [x * scale for x in tight]
    rows["vmap(f)"]["samples"]["execute_s"] = [1e-4, 3e-4, 0.6e-4, 2.5e-4, 1.4e-4]
    for name in ("vmap(jit(f))", "jit(vmap(jit(f)))"):
        rows[name]["same_program"] = same
    return Orderings.from_dict({"entry": "f", "batch": 8, "in_axes": 0, "built_batch": True,
                                "rows": rows})


def test_a_per_call_gap_between_one_programs_two_jits_is_not_judged():
    """A new user read '1.33×' beside 'same program: yes' for jit(vmap(jit(f))) as a
    measured slowdown; the comparison's table says such a gap is not judged, and the
    orderings' table now marks its ratios as every table does."""
    from jitmagic.render.orderings import panel_numbers, row_cells

    same = _per_call_rows(same=True)
    ratio = {n: row_cells(same, n)[3].text for n in ORDERINGS}
    assert same.withheld("jit(vmap(jit(f)))") and same.against_reference(
        "jit(vmap(jit(f)))").kind == "inconclusive"
    assert ratio["jit(vmap(jit(f)))"] == "1.30× not judged: same compiled program"
    # vmap(jit(f)) is the same program, but batched in Python on every call: judged
    assert not same.withheld("vmap(jit(f))") and ratio["vmap(jit(f))"] == "2.00×"
    assert ratio["vmap(f)"].endswith(" inconclusive") and ratio["jit(vmap(f))"] == "1.00×"
    assert ("per call / jit(vmap(f))", "1.30× not judged: same compiled program") in \
        panel_numbers(same, "jit(vmap(jit(f)))")
    different = _per_call_rows(same=False)
    assert not different.withheld("jit(vmap(jit(f)))")
    assert row_cells(different, "jit(vmap(jit(f)))")[3].text == "1.30×"


def test_the_charts_per_call_panel_is_on_the_verdicts_clock_and_each_axis_names_its_own():
    """A new user saw bars of 401 µs and 1.48 ms (wall) beside a verdict of '164 µs against
    646 µs CPU time', the axis naming no clock."""
    from jitmagic.render.charts.bars import orderings_figure

    busy = _orderings_on(BUSY_JIT_VMAP, BUSY_VMAP_JIT)
    first, per_call = orderings_figure(busy).axes
    assert first.get_xlabel().endswith(", wall time")
    assert per_call.get_xlabel().endswith("per call (steady state), CPU time")
    labels = [t.get_text().strip() for t in per_call.texts]
    assert "100 µs" in labels and "200 µs" in labels  # the CPU medians the verdict names
    toggled = orderings_figure(busy, highlight="vmap(jit(f))")
    assert toggled._suptitle.get_text().endswith("per call 200 µs CPU time")
    quiet = _orderings_on({k: v for k, v in BUSY_JIT_VMAP.items() if k != "wait_s"},
                          {k: v for k, v in BUSY_VMAP_JIT.items() if k != "wait_s"})
    assert orderings_figure(quiet).axes[1].get_xlabel().endswith(", wall time")


def test_the_section_answers_first_and_folds_the_four_orderings():
    """Which ordering is faster per call, by how much and on which clock, in a few
    lines; the table, chart and jaxprs behind -v (text) or a click (HTML, offline)."""
    import dataclasses

    from support import comparison
    from test_answer_first import orderings

    from jitmagic.render.orderings import FOLDED, section

    o = orderings()
    one = dataclasses.replace(o["vmap(jit(f))"], jaxpr_eqns=1,
                              jaxpr_text="{ lambda ; a. let  in (a,) }")
    o = dataclasses.replace(o, rows={**o.rows, "vmap(jit(f))": one})
    c = comparison(every=0.01, orderings=o)
    text, page = section(c, plot=False)
    v = o.verdict()
    assert text.splitlines() == [
        "vmap/jit orderings of f: batch 8 (one example stacked), per call on wall time",
        v.text, f"(-v shows {FOLDED})"]  # the ratio said once, not headline then text
    assert "per call" in v.text and "2." in v.text  # how much, from the samples
    assert text.count(v.headline.split(": ", 1)[1].split(" (")[0]) == 1
    answer, folded = page.split("<details>", 1)
    assert "jitcompare-verdict" in answer and "<table" not in answer
    assert '<table class="jitcompare-orderings">' in folded and "(1 equation)" in folded
    full, _ = section(c, plot=False, verbose=True)
    assert full.startswith(text.rsplit("\n", 1)[0]) and "jit(vmap(f))  " in full
    assert "-v shows" not in full

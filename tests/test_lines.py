"""``jitmagic.lines``: program size by source line, on small real JAX programs.

Each count is checked against something measured independently (``jax.make_jaxpr``
of a helper, a loop's trip count), never against the counting code itself. Hits and
time need a line hook: ``sys.monitoring`` where Python has it (3.12+); the tests of
those columns ask for the ``sys.settrace`` hook, which every Python has.
"""

from __future__ import annotations

import inspect
import json
import linecache
import sys
import textwrap
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import realworld_layers as L

import jitmagic
from jitmagic.measure.lines.hook import make_hook
from jitmagic.measure.lines.tables import SOURCE_UNAVAILABLE, add_lines, lines_of
from jitmagic.measure.pipeline import variants_of
from jitmagic.measure.variants.rows import Staged
from jitmagic.model.lines import LineRow, Lines, LineTable
from jitmagic.render.lines import MAX_ROWS

MONITORING = hasattr(sys, "monitoring")


def hooked(fn, *args):
    """``jitmagic.lines`` with hits and time measured on any Python (``sys.settrace``)."""
    return lines_of(fn, args, {}, hook="settrace")

X = jnp.linspace(0.0, 1.0, 4)
TERMS, CALLS, STEPS = 12, 3, 40


def line_of(fn, snippet: str) -> tuple[str, int]:
    """(file, line) of the first line of ``fn``'s source that contains ``snippet``."""
    source, start = inspect.getsourcelines(fn)
    offset = next(i for i, text in enumerate(source) if snippet in text)
    return inspect.getsourcefile(fn), start + offset


def ripple(x):
    return sum(k * jnp.cos(x) for k in range(TERMS))


def stack_ripples(x):
    for _ in range(CALLS):
        x = ripple(x)
    return x


def unrolled(x):
    for _ in range(STEPS):
        x = x * 0.5 + jnp.sin(x)
    return x


def rolled(x):
    return jax.lax.fori_loop(0, STEPS, lambda i, y: y * 0.5 + jnp.sin(y), x)


@pytest.fixture(scope="module")
def ripples() -> Lines:
    return jitmagic.lines(stack_ripples, X)


@pytest.fixture(scope="module")
def hooked_ripples() -> Lines:
    return hooked(stack_ripples, X)


def test_the_unrolled_generator_line_owns_most_equations(ripples, hooked_ripples):
    for table in (ripples.flat, hooked_ripples.flat):
        row = table.row(*line_of(ripple, "jnp.cos"))
        assert row.eqns_own > 0.9 * table.total_eqns and row.hlo_ops > 0
    assert hooked_ripples.flat.row(*line_of(ripple, "jnp.cos")).trace_s > 0
    counts = [[(r.key, r.eqns_own, r.eqns_inclusive, r.hlo_ops) for r in t.rows]
              for t in (ripples.flat, hooked_ripples.flat)]
    assert counts[0] == counts[1]  # the hook changes no count


@pytest.mark.skipif(MONITORING, reason="Python 3.12+ measures hits with sys.monitoring")
def test_without_a_cheap_hook_hits_and_time_are_absent_with_a_note(ripples):
    table = ripples.flat
    assert all(r.hits is None and r.trace_s is None for r in table.rows)
    assert not table.has_hits and not table.has_time
    assert any("not measured" in n and "sys.monitoring" in n for n in table.notes)
    shown = str(ripples)
    head = next(ln for ln in shown.splitlines() if "incl." in ln)
    assert "hits" not in head and "time" not in head  # absent, not zeros
    assert "Note: hits, calls and time per line not measured" in shown
    saved = Lines.from_dict(ripples.to_dict())
    assert saved.flat.rows[0].hits is None and saved.flat.notes == table.notes


@pytest.mark.skipif(not MONITORING, reason="sys.monitoring is Python 3.12+")
def test_with_sys_monitoring_hits_and_time_are_measured(ripples):
    assert ripples.flat.has_hits and ripples.flat.has_time and not ripples.flat.notes


def test_a_call_line_carries_its_callee_times_its_calls(ripples):
    callee = len(jax.make_jaxpr(ripple)(X).eqns)
    call = ripples.flat.row(*line_of(stack_ripples, "x = ripple(x)"))
    assert call.eqns_inclusive == CALLS * callee
    assert ripples.flat.row(*line_of(ripple, "jnp.cos")).eqns_own == CALLS * callee


def test_the_nested_table_holds_the_helper_once(ripples):
    callee = len(jax.make_jaxpr(ripple)(X).eqns)
    assert ripples.nested.row(*line_of(ripple, "jnp.cos")).eqns_own == callee
    call = ripples.nested.row(*line_of(stack_ripples, "x = ripple(x)"))
    assert call.eqns_own == CALLS  # the jit equations themselves
    assert call.eqns_inclusive == CALLS + callee  # ... and the one body they call
    assert ripples.nested.total_hlo_ops < ripples.flat.total_hlo_ops


def test_hits_of_a_loop_line_equal_its_trip_count(hooked_ripples):
    assert hooked_ripples.flat.row(*line_of(stack_ripples, "x = ripple(x)")).hits == CALLS
    table = hooked(unrolled, X).flat
    assert table.row(*line_of(unrolled, "jnp.sin")).hits == STEPS


def test_the_hint_fires_on_an_unrolled_loop_not_on_fori_loop():
    file, line = line_of(unrolled, "jnp.sin")
    hints = hooked(unrolled, X).hints()
    assert any(f"line {line} ran {STEPS} times" in h and "fori_loop" in h for h in hints)
    assert not any("unrolls" in h for h in hooked(rolled, X).hints())


def test_without_hits_the_loop_hint_comes_from_the_source_and_shows_no_count():
    file, line = line_of(unrolled, "jnp.sin")
    table = jitmagic.lines(unrolled, X).flat
    assert table.row(file, line).eqns_own == 3 * STEPS  # mul, sin, add per step
    if table.has_hits:
        pytest.skip("hits measured here: the count-based hint applies")
    hints = table.hints()
    _, for_line = line_of(unrolled, "for _ in range")
    assert any(h.startswith(f"line {line} built 100% of the program and runs inside the "
                            f"Python loop at line {for_line}: ") for h in hints)
    assert not any(" ran " in h for h in hints)  # no count that was not measured
    assert not any("unrolls" in h for h in jitmagic.lines(rolled, X).hints())


def terms(x):
    return sum(i * x for i in range(32))


def repeated_terms(x):
    return sum(terms(x) for _ in range(4))


def test_the_loop_hint_names_the_line_that_builds_the_program_not_its_caller():
    # The discussion's shape, smaller: the caller's generator also runs several times and
    # includes everything, but the generator inside the helper owns the equations.
    _, inner = line_of(terms, "range(32)")
    for found in (hooked(repeated_terms, X), jitmagic.lines(repeated_terms, X)):
        assert any(h.startswith(f"line {inner} ") and "unrolls" in h for h in found.hints())


def test_a_helper_traced_per_call_points_to_nesting(ripples, hooked_ripples):
    # the nested program's jit calls (the copies the flat program inlines), or the hook
    for found, said in ((ripples, "is inlined 3 times (its jit calls in the nested program)"),
                        (hooked_ripples, "was traced 3 times")):
        assert any(f"`ripple` {said} and its lines built" in h and "--nest ripple" in h
                   for h in found.hints())
        assert not any("--nest" in h for h in found.nested.hints())  # traced once there


def test_beside_a_comparison_that_nested_the_helper_the_hint_points_at_its_measurement():
    """Under a comparison that nested `ripple` and found nesting inconclusive, the hint
    told the user to run `--nest ripple`, as if that were untried and would pay."""
    from jitmagic.render.lines import section

    c = jitmagic.compare(stack_ripples, X, repeat=2, number=1, lines=True, progress=False)
    assert c.nested.helper_calls == {"ripple": CALLS}
    text, html = section(c)
    (hint,) = [h for h in text.split("\n\n") if "`ripple` is inlined 3 times" in h]
    assert hint.endswith("of the program; the nested variant traces it once, and the "
                         "comparison above says what that changed")
    assert "--nest" not in text and "--nest" not in html
    assert any("--nest ripple" in h for h in c.lines.hints())  # on its own, as before


def test_a_function_built_with_exec_shows_no_source():
    namespace = {"jnp": jnp}
    exec("def made(x):\n    return jnp.tanh(x) * 3\n", namespace)
    table = jitmagic.lines(namespace["made"], X).flat
    row = table.row("<string>", 2)
    assert row.text == SOURCE_UNAVAILABLE and row.eqns_own == 2
    assert SOURCE_UNAVAILABLE in str(jitmagic.lines(namespace["made"], X))


def test_cell_code_under_a_fake_file_name_is_found_through_linecache():
    name = "<cell-lines-test>"
    source = "def cell_fn(x):\n    return jnp.exp(x) + 1\n"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    namespace = {"jnp": jnp}
    exec(compile(source, name, "exec"), namespace)
    row = jitmagic.lines(namespace["cell_fn"], X).flat.row(name, 2)
    assert row.text == "    return jnp.exp(x) + 1" and row.eqns_own == 2


class Dense(NamedTuple):
    w: jax.Array
    b: jax.Array

    def apply(self, x):
        return jnp.tanh(x @ self.w + self.b)


def loss(layers, x):
    for layer in layers:
        x = layer.apply(x)
    return jnp.mean(x ** 2)


def train_step(layers, x):
    grads = jax.grad(loss)(layers, x)
    return [Dense(p.w - 0.1 * g.w, p.b - 0.1 * g.b) for p, g in zip(layers, grads, strict=True)]


def test_grad_of_a_loss_over_namedtuple_layers_counts_every_equation():
    layers = [Dense(jnp.eye(4), jnp.zeros(4)) for _ in range(3)]
    table = jitmagic.lines(train_step, layers, X).flat
    assert table.total_eqns == len(jax.make_jaxpr(train_step)(layers, X).eqns)
    method = table.row(*line_of(Dense.apply, "jnp.tanh"))
    assert method.eqns_own >= 3 * 3  # dot, add, tanh per layer
    grad_line = table.row(*line_of(train_step, "jax.grad"))
    assert grad_line.eqns_inclusive > method.eqns_own  # the backward pass is on the call
    assert hooked(train_step, layers, X).flat.row(*line_of(Dense.apply, "jnp.tanh")).hits == 3


def squash(x):
    return jnp.tanh(jnp.sin(x) * x)


def checkpointed_loss(x):
    y = jax.checkpoint(squash)(x)
    return (y ** 2).sum()


def checkpointed_step(x):
    return jax.grad(checkpointed_loss)(x)


def test_a_checkpointed_block_under_grad_counts_for_its_callers_too():
    # JAX traces a checkpointed function under a traceback of its own (cut at the
    # function): its forward equations still count for the lines that called it
    table = jitmagic.lines(checkpointed_step, X).flat
    block = table.row(*line_of(squash, "jnp.tanh"))
    caller = table.row(*line_of(checkpointed_loss, "jax.checkpoint"))
    entry = table.row(*line_of(checkpointed_step, "jax.grad"))
    assert block.eqns_own == block.eqns_inclusive >= 6  # forward, and again in the backward
    assert caller.eqns_inclusive >= block.eqns_inclusive + caller.eqns_own
    assert entry.eqns_inclusive == table.total_eqns


def test_rows_round_trip_and_render_escaped(ripples):
    d = ripples.to_dict()
    assert d["schema"] == "jitmagic.lines/2"
    assert set(d["flat"][0]) == {"file", "line", "text", "hits", "eqns_own",
                                 "eqns_inclusive", "hlo_ops", "trace_s", "consts",
                                 "const_bytes", "const_bytes_own", "eqns_in_loops"}
    again = Lines.from_dict(d)
    assert again.flat.rows == ripples.flat.rows and again.hints() == ripples.hints()
    bundle = ripples._repr_mimebundle_()
    assert "range(TERMS)" in bundle["text/plain"]
    assert "k * jnp.cos(x) for k in range(TERMS)" in bundle["text/html"]
    assert "<script" not in bundle["text/html"]


def escaping(x):
    return jnp.where(x < 0.5, -x, x)


def test_html_escapes_source_text():
    html = jitmagic.lines(escaping, X)._repr_mimebundle_()["text/html"]
    assert "jnp.where(x &lt; 0.5, -x, x)" in html


def test_cells_run_in_ipython_show_their_source(ip):
    ip.run_cell("import jax.numpy as jnp\nimport jitmagic\n"
                "def cell_square(x):\n    return jnp.square(x) * 2\n")
    ip.run_cell("lines_result = jitmagic.lines(cell_square, jnp.ones(3))")
    rows = ip.user_ns.pop("lines_result").flat.rows
    ip.user_ns.pop("cell_square")
    assert any(r.text == "    return jnp.square(x) * 2" and r.eqns_own == 2 for r in rows)


def test_compare_with_lines_carries_and_shows_the_table():
    result = jitmagic.compare(stack_ripples, X, repeat=1, number=1, lines=True)
    saved = jitmagic.Comparison.from_dict(result.to_dict())
    table = saved.lines
    callee = len(jax.make_jaxpr(ripple)(X).eqns)
    assert table.nested.row(*line_of(ripple, "jnp.cos")).eqns_own == callee
    shown = str(saved)
    assert shown.index("Program size by source line") > shown.index("execute")
    with pytest.raises(jitmagic.InputError, match="--lines"):
        jitmagic.compare(stack_ripples, X, repeat=1, lines="yes")


#: Where a saved comparison's per-line tables hold a count, and how the refusal names it.
HUGE_COUNTS = [(("flat", 0, "eqns_own"), r"lines\.flat\[0\]\.eqns_own"),
               (("nested", 1, "const_bytes"), r"lines\.nested\[1\]\.const_bytes"),
               (("functions", "flat", 0, "first_line"), r"lines\.functions\.flat\[0\]\.first_line"),
               (("constants", "flat", 1), r"lines\.constants\.flat\[1\]"),
               (("loops", "flat", 0, 2), r"lines\.loops\.flat\[0\]\[2\]")]


def test_a_saved_comparison_whose_lines_hold_a_401_digit_count_is_refused_when_loaded(tmp_path):
    """A report whose `lines` part held a 401-digit count passed `jitmagic.load`; then
    `str()`, the HTML page and the bundle raised OverflowError. Its counts are bounded at
    load now, like every other part's, and the refusal names the field."""
    from jitmagic.render.bundle import html_document

    result = jitmagic.compare(stack_ripples, X, repeat=1, number=1, lines=True, progress=False)
    saved = json.loads(json.dumps(result.to_dict()))
    path = tmp_path / "hostile.json"
    for keys, where in HUGE_COUNTS:
        hostile = json.loads(json.dumps(saved))
        *parents, last = ("lines", *keys)
        target = hostile
        for key in parents:
            target = target[key]
        target[last] = 10**400
        path.write_text(json.dumps(hostile))
        with pytest.raises(jitmagic.ReportSchemaError,
                           match=f"{where}: expected a count .* about 400 digits"):
            jitmagic.load(path)
    path.write_text(json.dumps(saved))
    loaded = jitmagic.load(path)  # the report as saved still loads, and shows as it did
    assert str(loaded) == str(result) and "Program size by source line" in str(loaded)
    assert "range(TERMS)" in html_document(loaded, plot=False)


def test_the_magic_takes_lines_and_finds_the_cell_source(ip):
    cell = ("import jax.numpy as jnp\n"
            "def twice(x):\n"
            "    return sum(jnp.sin(x) * i for i in range(6))\n"
            "twice(jnp.ones(3))\n")
    result = ip.run_cell_magic("jitcompare", "-o -r 1 -n 1 --no-plot --lines", cell)
    rows = result.lines.flat.rows
    hot = max(rows, key=lambda r: r.eqns_own)
    assert hot.text == "    return sum(jnp.sin(x) * i for i in range(6))"
    ip.user_ns.pop("twice", None)


# --- the line hooks: filtered per code object, chained to the tracer set before ----

def _library_and_user(n):
    """User code calling the standard library (which calls more of itself)."""
    total = 0
    for i in range(n):
        total += len(textwrap.dedent(f"  {i}"))
    return total


def _is_user_counting(asked):
    def is_user(code, namespace):
        asked.append(code)
        return code.co_filename == __file__
    return is_user


@pytest.mark.parametrize("kind", ["settrace", "monitoring"])
def test_a_hook_counts_user_lines_only_and_asks_once_per_code_object(kind):
    if kind == "monitoring" and not MONITORING:
        pytest.skip("sys.monitoring is Python 3.12+")
    asked, previous = [], sys.gettrace()
    hook = make_hook(_is_user_counting(asked), kind)
    assert type(hook).__name__ == {"settrace": "SettraceHook", "monitoring": "MonitoringHook"}[kind]
    hook.run(lambda: _library_and_user(50))
    files = {file for file, _ in hook.tally.hits}
    assert files == {__file__}  # nothing of textwrap's, re's ...
    line = line_of(_library_and_user, "textwrap.dedent")[1]
    assert hook.tally.hits[(__file__, line)] == 50
    if kind == "monitoring":  # the library is switched off after its first call
        assert len(asked) <= len(set(asked)) + 50 + 1
    assert sys.gettrace() is previous


def test_without_sys_monitoring_the_default_is_no_hook():
    hook = make_hook(_is_user_counting([]), "auto")
    assert (hook is None) != MONITORING


def test_the_settrace_hook_chains_to_the_tracer_set_before():
    """A debugger's or coverage's tracer keeps seeing the user's frames and lines while
    the hook runs, and is put back after."""
    seen = []

    def previous(frame, event, arg):
        if frame.f_code is _library_and_user.__code__:
            seen.append(event)
            return previous
        return None

    old = sys.gettrace()
    sys.settrace(previous)
    try:
        hook = make_hook(_is_user_counting([]), "settrace")
        hook.run(lambda: _library_and_user(3))
        assert sys.gettrace() is previous
    finally:
        sys.settrace(old)
    assert seen.count("call") == 1 and seen.count("line") >= 3 * 2 and "return" in seen
    assert hook.tally.hits  # and the hook counted too


def test_lines_by_default_leaves_a_tracer_alone():
    # a trace hook already set is still the one set after, and kept receiving events
    events = []

    def watcher(frame, event, arg):
        events.append(event)
        return None

    previous = sys.gettrace()
    sys.settrace(watcher)
    try:
        jitmagic.lines(escaping, X)
        assert sys.gettrace() is watcher
    finally:
        sys.settrace(previous)
    assert events  # it kept receiving calls throughout


# --- code shaped like real JAX users' ----------------------------------------------

def scanned(x):
    def step(carry, _):
        carry = jnp.tanh(carry) * 0.9
        return carry, carry.sum()
    final, sums = jax.lax.scan(step, x, None, length=5)
    return final.sum() + sums.sum()


def test_a_scan_body_is_counted_once_on_its_own_lines():
    table = jitmagic.lines(scanned, X).flat
    body = table.row(*line_of(scanned, "jnp.tanh(carry)"))
    assert body.eqns_own == 2  # tanh, mul: the body is traced once, whatever the length
    scan_line = table.row(*line_of(scanned, "jax.lax.scan"))
    assert scan_line.eqns_inclusive >= scan_line.eqns_own + body.eqns_own
    assert table.total_eqns == len(jax.make_jaxpr(scanned)(X).eqns) + sum(
        len(e.params["jaxpr"].jaxpr.eqns) for e in jax.make_jaxpr(scanned)(X).eqns
        if e.primitive.name == "scan")
    assert not any("unrolls" in h for h in table.hints())


class Mlp:
    """A model class whose method loops over its layers: not a pytree, held static."""

    def __init__(self, depth):
        self.depth = depth

    def __call__(self, w, x):
        for _ in range(self.depth):
            x = L.dense(w, x)
        return x.sum()


def test_a_method_calling_a_helper_module_in_a_loop():
    model, w = Mlp(9), jnp.eye(4) * 0.5
    lines = jitmagic.lines(model, w, X)
    dense = jax.make_jaxpr(L.dense)(w, X)
    call = lines.flat.row(*line_of(Mlp.__call__, "L.dense(w, x)"))
    assert call.eqns_inclusive == 9 * len(dense.eqns)
    helper_line = lines.flat.row(*line_of(L.dense, "jnp.tanh"))
    assert helper_line.eqns_own == 9 * len(dense.eqns)
    assert helper_line.file.endswith("realworld_layers.py")
    assert any("`realworld_layers.dense` is inlined 9 times" in h for h in lines.hints())
    assert lines.nested.row(*line_of(L.dense, "jnp.tanh")).eqns_own == len(dense.eqns)


# --- showing and saving ------------------------------------------------------------

def test_html_keeps_indentation_and_marks_hot_lines_without_emoji(ripples):
    page = ripples._repr_mimebundle_()["text/html"]
    assert "white-space:pre;text-align:left" in page
    assert "    return sum(k * jnp.cos(x) for k in range(TERMS))" in page
    assert all(ord(ch) < 0x2000 for ch in page), "no emoji or symbol a font may lack"
    assert "<td style=\"text-align:right;padding:0 .5em\">*" in page
    assert "* hot:" in page and "* hot:" in str(ripples)


def test_a_lines_record_round_trips_through_save_and_load(ripples, hooked_ripples, tmp_path):
    for i, lines in enumerate((ripples, hooked_ripples)):
        path = tmp_path / f"lines{i}.json"
        jitmagic.save(lines, path)
        again = jitmagic.load(path)
        assert isinstance(again, Lines) and again.to_dict() == lines.to_dict()
        assert again.flat.rows == lines.flat.rows and again.hints() == lines.hints()
        assert str(again) == str(lines)
    spoiled = json.loads(path.read_text()) | {"schema": "jitmagic.lines/99"}
    path.write_text(json.dumps(spoiled))
    with pytest.raises(jitmagic.ReportSchemaError,
                       match="cannot read a per-line table with schema 'jitmagic.lines/99'"):
        jitmagic.load(path)


def test_a_table_of_100000_rows_is_clipped_to_its_heaviest_lines():
    rows = tuple(LineRow("big.py", n, f"x = f{n}(x)", None, n % 7, n % 1000, 1, None)
                 for n in range(1, 100_001))
    lines = Lines("big", {"flat": LineTable("flat", rows, noted=("hits not measured",))})
    page, text = lines._repr_mimebundle_()["text/html"], str(lines)
    assert len(page) < 1_000_000 and len(text) < 100_000
    assert f"{100_000 - MAX_ROWS:,} of 100,000 lines left out" in text
    assert f"{100_000 - MAX_ROWS:,} of 100,000 lines left out" in page
    assert "x = f999(x)" in text and "x = f1000(x)" not in text  # 999 equations, 0 equations


# --- with a comparison: what it already traced and lowered is reused ---------------

def test_add_lines_counts_what_the_comparison_staged_without_tracing_again(
        ripples, monkeypatch):
    result = jitmagic.compare(stack_ripples, X, repeat=1, number=1)
    prepared = variants_of(stack_ripples, (X,), {})
    staged = {}
    for name, p in prepared.items():
        jax.clear_caches()
        traced = jax.jit(p.variant.fn, **p.variant.jit_options).trace(X)
        lowered = traced.lower()
        staged[name] = Staged(traced.jaxpr, lowered.as_text(debug_info=True) if name == "flat"
                              else lowered)  # its text, or the Lowered itself
    traces = []
    if not MONITORING:  # no hook to run: no trace at all
        monkeypatch.setattr(jax, "clear_caches", lambda: traces.append("cleared"))
    with_lines = add_lines(result, prepared, staged)
    assert traces == []
    for name in ("flat", "nested"):
        counts = [[(r.key, r.eqns_own, r.eqns_inclusive, r.hlo_ops) for r in t.rows]
                  for t in (with_lines.lines.tables[name], ripples.tables[name])]
        assert counts[0] == counts[1]
    assert with_lines.lines.hints() == ripples.hints()


# A model that closes over NumPy arrays, as code that loads weights into globals does:
# JAX makes each a constant of the program, which XLA then compiles in.
EMBEDDING = np.ones((1024, 1024), np.float32)  # 4 MiB
SCALES = np.ones((10, 1024), np.float32)  # 40 KiB


def scaled(y):
    return y * SCALES


def embedded(x):
    y = x @ EMBEDDING
    return (scaled(y) + scaled(y)).sum() * 2.0


@pytest.fixture(scope="module")
def constants():
    return jitmagic.lines(embedded, jnp.ones(1024))


def test_each_line_names_the_bytes_of_the_constants_it_reads(constants):
    for table in (constants.flat, constants.nested):
        big = table.row(*line_of(embedded, "@ EMBEDDING"))
        small = table.row(*line_of(scaled, "* SCALES"))
        caller = table.row(*line_of(embedded, "scaled(y) + scaled(y)"))
        assert (big.consts, big.const_bytes) == (1, 4 * 2**20)
        assert (small.consts, small.const_bytes) == (1, 40 * 2**10)
        # inclusive: the calls read what their callee reads; the scalar 2.0 is no array
        assert (caller.consts, caller.const_bytes) == (1, 40 * 2**10)
        assert table.constants == (2, 4 * 2**20 + 40 * 2**10)
        assert (big.const_bytes_own, caller.const_bytes_own) == (4 * 2**20, 0)
    text = str(constants)
    assert "2 array constants (4.0 MiB)" in text and "40 KiB" in text
    # the line that reads 4 MiB itself is pointed at; the 40 KiB one is too small
    (hint,) = [h for h in constants.hints() if "array constants" in h]
    assert hint.startswith(f"line {big.line} reads 4.0 MiB of array constants")


def test_constants_are_found_as_literals_too():
    # jax_use_simplified_jaxpr_constants puts the arrays into the equations as literals
    before = jax.config.jax_use_simplified_jaxpr_constants
    jax.config.update("jax_use_simplified_jaxpr_constants", True)
    try:
        table = jitmagic.lines(embedded, jnp.ones(1024)).flat
    finally:
        jax.config.update("jax_use_simplified_jaxpr_constants", before)
    assert table.row(*line_of(embedded, "@ EMBEDDING")).const_bytes == 4 * 2**20
    assert table.constants == (2, 4 * 2**20 + 40 * 2**10)


def test_a_table_saved_before_constants_were_counted_shows_none():
    d = jitmagic.lines(scaled, jnp.ones(1024)).to_dict()
    for row in d["flat"] + d["nested"]:
        del row["consts"], row["const_bytes"], row["const_bytes_own"], row["eqns_in_loops"]
    del d["constants"]
    old = Lines.from_dict(d)
    assert {(r.consts, r.const_bytes) for r in old.flat.rows} == {(None, None)}
    assert old.flat.constants is None and "consts" not in str(old)
    assert "array constant" not in str(old)  # not "0 array constants": not counted


def _projected(weights):
    def model(x):
        return jnp.tanh(x @ weights).sum()
    return model


def test_the_report_counts_each_variants_captured_constants_and_a_diff_sees_them_grow():
    one = jitmagic.compare(embedded, jnp.ones(1024), repeat=1, number=1, progress=False)
    for variant in (one.flat, one.nested):
        assert (variant.constants, variant.constant_bytes) == (2, 4 * 2**20 + 40 * 2**10)
        assert variant.compiled_temp_bytes is not None
    full = one.report(verbose=True)
    assert "constant bytes (captured)" in full and "4,235,264" in full
    again = jitmagic.Comparison.from_dict(one.to_dict())
    assert again.flat.constant_bytes == one.flat.constant_bytes
    small = jitmagic.compare(_projected(np.ones((64, 8), np.float32)), jnp.ones(64),
                             repeat=1, number=1, progress=False)
    large = jitmagic.compare(_projected(np.ones((64, 16), np.float32)), jnp.ones(64),
                             repeat=1, number=1, progress=False)
    grown = jitmagic.diff(small, large)
    assert grown.figure("flat", "constant_bytes").new_over_old == 2.0
    assert "constant_bytes" in {f.figure for f in grown.larger(1.3)}


def test_a_report_saved_before_constants_were_counted_reads_them_as_not_counted():
    d = jitmagic.compare(_projected(np.ones((8, 4), np.float32)), jnp.ones(8), repeat=1,
                         number=1, progress=False).to_dict()
    for key in ("constants", "constant_bytes", "compiled_temp_bytes"):
        del d["variants"]["flat"][key]  # nested: no helper, measured once, none written
    old = jitmagic.Comparison.from_dict(d)
    assert old.flat.constants is None and "constant bytes" not in old.report(verbose=True)


def test_the_report_carries_xlas_peak_bytes_as_the_compiled_program_reports_them():
    x = jnp.ones(1024)
    one = jitmagic.compare(embedded, x, repeat=1, number=1, progress=False)
    memory = jax.jit(embedded).lower(x).compile().memory_analysis()
    assert one.flat.compiled_peak_bytes == memory.peak_memory_in_bytes > 0
    full = one.report(verbose=True)
    assert f"{memory.peak_memory_in_bytes:,}" in full and "peak bytes" in full
    # XLA inlines the nested calls: one program, and the report says so in a line
    assert one.same_compiled and one.nested.compiled_peak_bytes == one.flat.compiled_peak_bytes
    assert "XLA compiled both variants to the same program" in full
    assert jitmagic.Comparison.from_dict(one.to_dict()).flat.compiled_peak_bytes == \
        memory.peak_memory_in_bytes


def _cell(w, x):
    return jnp.tanh(x @ w) + jnp.sin(x) * 0.1 + jnp.cos(x) * 0.1


def _block(w, x):
    return _cell(w, _cell(w, _cell(w, x)))


def _checkpointed_loss(w, x):
    return jax.checkpoint(_block)(w, x).sum()


def test_a_helper_under_checkpoint_and_grad_is_said_inlined_not_traced_that_often():
    """A new user's hint said a helper 'was traced 7 times' where Python traced it 3: its
    jit calls, which jax.checkpoint and grad repeat, were read as traces."""
    traced = []
    counted = jax.jit(jax.grad(lambda w, x: jax.checkpoint(
        lambda w, x: _block(w, x) if not traced.append(1) else None)(w, x).sum()))
    counted.trace(jnp.eye(8), jnp.ones((2, 8)))
    c = jitmagic.compare(jax.grad(_checkpointed_loss), jnp.eye(8), jnp.ones((2, 8)),
                         lines=True, repeat=1, number=1, progress=False)
    calls = c.nested.helper_calls["_cell"]
    assert calls > 3 * len(traced)  # more jit calls than Python traced it
    (hint,) = [h for h in c.lines.hints() if h.startswith("`_cell` ")]
    assert hint.startswith(f"`_cell` is inlined {calls} times (its jit calls in the nested "
                           "program) and its lines built ")
    assert "traced" not in hint.split(";")[0]
    saved = Lines.from_dict(c.lines.to_dict())
    assert saved.hints() == c.lines.hints()  # its source is kept

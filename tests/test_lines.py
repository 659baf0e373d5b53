"""``jitmagic.lines``: program size by source line, on small real JAX programs.

Each count is checked against something measured independently (``jax.make_jaxpr``
of a helper, a loop's trip count), never against the counting code itself.
"""

from __future__ import annotations

import inspect
import linecache
import sys
from typing import NamedTuple

import jax
import jax.numpy as jnp
import pytest

import jitmagic
from jitmagic.model.lines import SOURCE_UNAVAILABLE, Lines

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


def test_the_unrolled_generator_line_owns_most_equations(ripples):
    row = ripples.flat.row(*line_of(ripple, "jnp.cos"))
    assert row.eqns_own > 0.9 * ripples.flat.total_eqns
    assert row.hlo_ops > 0 and row.trace_s > 0


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


def test_hits_of_a_loop_line_equal_its_trip_count(ripples):
    assert ripples.flat.row(*line_of(stack_ripples, "x = ripple(x)")).hits == CALLS
    table = jitmagic.lines(unrolled, X).flat
    assert table.row(*line_of(unrolled, "jnp.sin")).hits == STEPS


def test_the_hint_fires_on_an_unrolled_loop_not_on_fori_loop():
    file, line = line_of(unrolled, "jnp.sin")
    hints = jitmagic.lines(unrolled, X).hints()
    assert any(f"line {line} ran {STEPS} times" in h and "fori_loop" in h for h in hints)
    assert not any("unrolls" in h for h in jitmagic.lines(rolled, X).hints())


def terms(x):
    return sum(i * x for i in range(32))


def repeated_terms(x):
    return sum(terms(x) for _ in range(4))


def test_the_loop_hint_names_the_line_that_builds_the_program_not_its_caller():
    # The discussion's shape, smaller: the caller's generator also runs several times and
    # includes everything, but the generator inside the helper owns the equations.
    _, inner = line_of(terms, "range(32)")
    hints = jitmagic.lines(repeated_terms, X).hints()
    assert any(h.startswith(f"line {inner} ran ") and "unrolls" in h for h in hints)


def test_a_helper_traced_per_call_points_to_nesting(ripples):
    assert any("`ripple` was traced 3 times" in h and "--nest ripple" in h
               for h in ripples.hints())
    assert not any("--nest" in h for h in ripples.nested.hints())  # traced once there


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
    assert method.hits == 3 and method.eqns_own >= 3 * 3  # dot, add, tanh per layer
    grad_line = table.row(*line_of(train_step, "jax.grad"))
    assert grad_line.eqns_inclusive > method.eqns_own  # the backward pass is on the call


def test_rows_round_trip_and_render_escaped(ripples):
    d = ripples.to_dict()
    assert set(d["flat"][0]) == {"file", "line", "text", "hits", "eqns_own",
                                 "eqns_inclusive", "hlo_ops", "trace_s"}
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


def test_a_trace_hook_already_set_is_put_back():
    previous = sys.gettrace()

    def watcher(frame, event, arg):
        return None

    sys.settrace(watcher)
    try:
        jitmagic.lines(escaping, X)
        assert sys.gettrace() is watcher
    finally:
        sys.settrace(previous)


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

"""Outputs compared by value, --vmap on pytree arguments, equation counts that go inside."""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest
from IPython.core.error import UsageError

import jitmagic
from jitmagic.errors import InputError
from jitmagic.measure.parts import batches, orderings
from jitmagic.measure.sampling.outputs import OutputDiff, compare_outputs
from jitmagic.measure.sampling.structure import count_equations

ONCE = {"repeat": 1, "number": 1}

TRAIN_CELL = """\
from typing import NamedTuple
import jax.numpy as jnp

class State(NamedTuple):
    weights: jnp.ndarray
    momentum: jnp.ndarray

def update(state, grad):
    momentum = 0.9 * state.momentum + grad
    return State(state.weights - 0.1 * momentum, momentum)

def train(state, grad):
    for _ in range(3):
        state = update(state, grad)
    return state

train(State(jnp.ones(4), jnp.zeros(4)), jnp.full(4, 0.5))
"""


def test_a_namedtuple_defined_in_the_cell_matches_across_variants(run_magic):
    result, cap = run_magic("-o -r 1 -n 1 --no-plot", TRAIN_CELL)
    assert result.nested.helpers == ("update",)
    assert result.outputs_match is True and result.max_abs_diff == 0
    assert "outputs: flat and nested match" in cap.outputs[0].data["text/plain"].replace(
        "\n    ", " ")  # the glance's line, wrapped to the terminal


def _point_class():
    """A fresh class per call, as each variant's run of a cell defines its own."""
    class Point(NamedTuple):
        x: jax.Array
        y: jax.Array
    return Point


def test_structures_compare_by_shape_not_class_identity():
    first, second = _point_class(), _point_class()
    assert first is not second
    same = compare_outputs(first(jnp.ones(2), jnp.zeros(2)), second(jnp.ones(2), jnp.zeros(2)))
    assert same.match and same.max_abs_diff == 0 and same.describe() is None


def test_a_mismatch_names_the_leaf_path_and_the_largest_difference():
    @jax.jit
    def layers(scale):
        return {"params": [(jnp.ones(3), jnp.zeros(2)), (jnp.ones(2), scale * jnp.arange(2.0))]}

    check = OutputDiff(expected=2)
    check.add("flat", layers(1.0))
    check.add("nested", layers(1.25))
    assert check.result() == (False, 0.25)
    (problem,) = map(str, check.problems)
    assert "flat and nested" in problem and "`params[1][1]`" in problem
    assert "largest difference 0.25" in problem


def test_only_the_first_output_is_held_and_dropped_once_all_arrived():
    check = OutputDiff(expected=3)
    for name in ("a", "b", "a", "c"):
        check.add(name, jnp.ones(2))
        assert (check._output is None) == (name == "c")
    assert check.result() == (True, 0.0)


class Linear(eqx.Module):
    weight: jax.Array
    width: int = eqx.field(static=True)

    def __call__(self, x):
        return self.weight[: self.width] * x


def test_an_equinox_static_field_that_differs_is_a_mismatch():
    diff = compare_outputs(Linear(jnp.ones(4), 3), Linear(jnp.ones(4), 4))
    assert not diff.match and diff.max_abs_diff is None
    said = str(diff.describe())
    assert "Linear" in said and "3" in said and "4" in said
    assert compare_outputs(Linear(jnp.ones(4), 3), Linear(jnp.ones(4), 3)).match


def test_a_shape_mismatch_names_its_leaf():
    diff = compare_outputs({"loss": jnp.zeros(()), "grads": jnp.ones(3)},
                           {"loss": jnp.zeros(()), "grads": jnp.ones(4)})
    assert not diff.match and str(diff.describe()) == "`grads`: shape (3,) vs (4,)"


def test_the_mismatch_reaches_the_report_as_a_warning(run_magic):
    # An impure entry: each trace scales by how often it has been traced.
    cell = ("import jax.numpy as jnp\ntraces = [0]\ndef half(x):\n    return x / 2\n"
            "def stats(x):\n    traces[0] += 1\n"
            "    return {'mean': half(x).mean() * traces[0], 'raw': half(x) * traces[0]}\n"
            "stats(jnp.linspace(1.0, 2.0, 5))\n")
    result, _ = run_magic("-o -r 1 -n 1 --no-plot", cell)
    assert result.outputs_match is False
    (warning,) = [w for w in result.warnings if "outputs of flat and nested" in w]
    assert "differ at `mean` (largest difference" in warning
    assert warning.endswith("; 1 other leaf differs")


def affine(params, x):
    return jnp.tanh(x @ params["w"] + params["b"])


def mlp(layers, x):
    for w, b in layers:
        x = jnp.tanh(x @ w + b)
    return x


def test_vmap_batches_a_dict_argument():
    params = {"w": jnp.ones((3, 2)), "b": jnp.zeros(2)}
    o = orderings.compare_orderings(affine, params, jnp.ones(3), batch=2, **ONCE)
    assert o.batch == 2 and o.built_batch and o.outputs_match is True
    assert o.rows["vmap(jit(f))"].same_program is True
    assert all(row.error is None for row in o.rows.values())


def test_vmap_maps_a_list_of_weight_tuples_with_a_prefix_in_axes():
    layers = [(jnp.ones((3, 3)), jnp.zeros(3)), (jnp.ones((3, 2)), jnp.zeros(2))]
    result = jitmagic.compare(mlp, layers, jnp.ones((4, 3)), vmap=True, in_axes=(None, 0), **ONCE)
    measured = result.orderings
    assert measured.batch == 4 and measured.outputs_match is True


def test_in_axes_as_a_tree_prefix_per_argument():
    params = {"w": jnp.ones((5, 3, 2)), "b": jnp.zeros(2)}
    b = batches.prepare_batch(affine, (params, jnp.ones(3)), {},
                                in_axes=({"w": 0, "b": None}, None))
    assert b.batch == 5 and not b.built


def test_a_bad_in_axes_is_refused_before_anything_is_measured(monkeypatch):
    def no_measuring(*args, **kwargs):
        raise AssertionError("measured despite a bad --in-axes")

    monkeypatch.setattr(jitmagic.measure.pipeline, "run_comparison", no_measuring)
    params = {"w": jnp.ones((3, 2)), "b": jnp.zeros(2)}
    with pytest.raises(InputError, match=r"argument 1 is \{'kernel': 0\}.*PyTreeDef"):
        jitmagic.compare(affine, params, jnp.ones((4, 3)), in_axes=({"kernel": 0}, 0))
    with pytest.raises(InputError, match=r"argument 2 \(an array of shape \(4, 3\)\) along axis 2"):
        jitmagic.compare(affine, params, jnp.ones((4, 3)), in_axes=(None, 2))


def test_a_bad_in_axes_in_the_magic_is_a_usage_error(run_magic):
    cell = ("import jax.numpy as jnp\ndef affine(p, x):\n    return x @ p['w']\n"
            "affine({'w': jnp.ones((3, 2))}, jnp.ones((4, 3)))\n")
    with pytest.raises(UsageError, match="argument 1"):
        run_magic("-r 1 -n 1 --in-axes 1,0", cell)


def test_a_vmap_that_would_not_fit_in_memory_names_a_batch_that_does(monkeypatch):
    x = jnp.ones(1000, jnp.float32)  # 4 kB an example, 4 kB an output
    monkeypatch.setattr(batches, "available_memory", lambda: 200_000)
    with pytest.raises(InputError, match=r"--batch (\d+) or smaller") as refused:
        batches.prepare_batch(jnp.sin, (x,), {}, batch=64)
    fits = int(refused.value.args[0].split("--batch ")[1].split()[0])
    assert 1 <= fits < 64
    assert "of the 195 KiB of memory available" in str(refused.value)  # one byte unit
    assert batches.prepare_batch(jnp.sin, (x,), {}, batch=fits).args[0].shape == (fits, 1000)
    with pytest.raises(InputError):
        batches.prepare_batch(jnp.sin, (x,), {}, batch=fits + 1)


def test_an_array_passed_by_keyword_is_refused_and_a_number_by_keyword_is_bound():
    with pytest.raises(InputError, match=r"^--vmap maps positional arguments only, but y is "
                       r"passed by keyword with an array: pass it positionally\.$"):
        batches.prepare_batch(lambda x, y: x + y, (jnp.ones(3),), {"y": jnp.ones(3)})
    b = batches.prepare_batch(lambda x, k: x * k, (jnp.ones(3),), {"k": 3}, batch=2)
    assert jax.vmap(b.fn, in_axes=b.in_axes)(*b.args).tolist() == [[3.0] * 3] * 2

def _discussion_functions():
    def f(x):
        return sum(i * x for i in range(256))

    def g(x):
        return sum(f(x) for _ in range(16))

    jitted_f = jax.jit(f)

    def g_nested(x):
        return sum(jitted_f(x) for _ in range(16))

    return g, g_nested


def test_the_discussions_example_counts_8208_flat_and_544_nested():
    g, g_nested = _discussion_functions()
    x = jnp.float32(3.14)
    flat, nested = jax.make_jaxpr(g)(x), jax.make_jaxpr(g_nested)(x)
    assert count_equations(flat) == len(flat.eqns) == 8208
    assert count_equations(nested) == 544 and len(nested.eqns) == 32


def clip_step(x):
    return jnp.clip(x * 1.01, -1.0, 1.0)


def shift(x):
    return x - jnp.mean(x)


def run_steps(x):
    return jax.lax.fori_loop(0, 5, lambda i, y: shift(clip_step(y)), x)


def test_a_loop_body_is_counted_inside():
    result = jitmagic.compare(run_steps, jnp.linspace(-1.0, 1.0, 8), **ONCE)
    flat = result.flat
    assert flat.jaxpr_eqns_top is not None and flat.jaxpr_eqns > flat.jaxpr_eqns_top
    assert flat.jaxpr_eqns > 1
    saved = flat.to_dict()
    assert saved["jaxpr_eqns"] == flat.jaxpr_eqns
    assert type(flat).from_dict("flat", saved).jaxpr_eqns_top == flat.jaxpr_eqns_top
    assert "jaxpr equations (top level)" in result.report(verbose=True)


def test_a_structure_mismatch_holds_the_nodes_as_facts():
    """The nodes are held as facts (type, dtype, shape, static data) and spelled in
    render/, as before; a saved note reads back the same."""
    from jitmagic.model.notes import read_noted, saved_note

    found = compare_outputs({"a": jnp.ones(3, jnp.float32)}, {"a": (jnp.ones(3),)}).describe()
    assert found is not None and found.structure == "node"
    assert found.nodes == ("", "tuple") and found.dtypes == ("float32", "")
    assert found.shapes == ((3,), ()) and found.statics == ("", "")
    assert str(found) == "`a`: a leaf float32[3] vs tuple"
    shape = compare_outputs(jnp.ones((2, 3)), jnp.ones(3)).describe()
    assert shape is not None and shape.shapes == ((2, 3), (3,))
    assert str(shape) == "the whole output: shape (2, 3) vs (3,)"
    for note in (found, shape):
        assert read_noted(saved_note(note), "note") == note

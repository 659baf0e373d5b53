"""A new user's trial of the watch (its second round): what it counts as a compile, what
its gates enforce, which stale values it names, and how it reads a nested jit, an NNX
mode switch and an Equinox static field. Real JAX runs; no timing is asserted."""

from __future__ import annotations

import functools
import io
import sys

import jax
import jax.numpy as jnp
import pytest

import jitmagic
from jitmagic.model import ledger as L
from jitmagic.model.ledger import compiles as K
from jitmagic.model.ledger import rows as R

pytest_plugins = ["pytester"]

BACKEND = "/jax/core/compile/backend_compile_duration"


class _XlaCompiles:
    """The XLA compiles JAX fired events for meanwhile: the count by hand."""

    def __init__(self) -> None:
        self.count = 0

    def _heard(self, event: str, secs: float, **kw: object) -> None:
        self.count += event == BACKEND

    def __enter__(self) -> _XlaCompiles:
        jax.monitoring.register_event_duration_secs_listener(self._heard)
        return self

    def __exit__(self, *exc: object) -> None:
        from jitmagic.measure.sampling.monitor import unregister

        unregister(jax.monitoring.unregister_event_duration_listener, self._heard)


def rows(ledger: L.Ledger) -> dict[str, R.FunctionRow]:
    return {r.function: r for r in ledger.functions()}


# -- 1. a trace that reaches no XLA compile is no compile ---------------------------------


def test_a_flax_init_holds_a_gate_of_one_and_counts_only_what_xla_compiled():
    """Flax's init traces its own `jax.eval_shape(lambda s: ...)` four times: each was
    counted as a compile of `<lambda>`, "compiles again, JAX gave no reason" x3, and the
    gate of one compile per function failed on a plain `Dense(4).init`."""
    nn = pytest.importorskip("flax.linen")
    with _XlaCompiles() as hand, jitmagic.watch(fail_after_warmup=1, live=False) as w:
        nn.Dense(4).init(jax.random.PRNGKey(7), jnp.ones((1, 5)))
    assert len(w.ledger.compiles) == hand.count
    assert "<lambda>" not in rows(w.ledger)


def test_eval_shape_and_make_jaxpr_of_the_users_functions_are_not_compiles():
    def shape_of(n):
        return jax.eval_shape(lambda x: x * 2, jnp.zeros(n))  # a new lambda each call

    with pytest.raises(jitmagic.RecompiledError), \
            jitmagic.watch(fail_after_warmup=1, live=False) as failed:
        for n in (3, 4, 5):
            jax.jit(lambda x: x + 1)(jnp.zeros(n))
    with _XlaCompiles() as hand, jitmagic.watch(fail_after_warmup=1, live=False) as w:
        for n in (3, 4, 5):
            shape_of(n)
            jax.make_jaxpr(lambda x: x - 1)(jnp.zeros(n))
    assert len(w.ledger.compiles) == hand.count
    assert not [c for c in w.ledger.compiles if not c.eager]
    assert rows(failed.ledger)["<lambda>"].compiles == 3  # what did compile still counts


# -- 5. a nested jit's first compile of its own is its warm-up ----------------------------


@functools.partial(jax.jit, static_argnames="train")
def _nested_loss(w, x, train):
    return jnp.mean((x @ w) ** 2) * (1.0 if train else 0.5)


@jax.jit
def _nested_update(w, x):
    return w - 0.1 * jax.grad(_nested_loss)(w, x, train=True)


def test_a_jit_traced_inside_another_then_called_alone_compiles_once_not_again(monkeypatch):
    """`jit(loss)` traced inside `update` (inlined: no XLA compile of its own), then
    called alone with `train=False`: XLA compiled it once, and the watch said "compiles
    1, again 1", a live "recompile" line, and the gate held."""
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    w0, x = jnp.ones(3) * 0.5, jnp.ones((4, 3)) * 0.25
    with _XlaCompiles() as hand, jitmagic.watch(fail_after_warmup=1) as w:
        for _ in range(3):
            w0 = _nested_update(w0, x)
            float(_nested_loss(w0, x, train=False))
    loss = rows(w.ledger)["_nested_loss"]
    assert (loss.compiles, loss.again) == (1, 0)
    assert "compiles again" not in stderr.getvalue()
    assert len(w.ledger.compiles) == hand.count
    with jitmagic.watch(live=False) as later:
        _nested_loss(jnp.ones(5), jnp.ones((4, 5)), train=False)  # a real recompile
    assert [c.reason.kind for c in later.ledger.compiles
            if c.function == "_nested_loss"] == [K.SHAPE]


# -- 2. a gate is only what was asked, at every front door -------------------------------

THREE_SHAPES = '''\
import jax, jax.numpy as jnp
XS = [jnp.zeros(n) for n in (1, 2, 3)]  # made before any watch: no eager op in it
def run():  # a jit of its own on each run
    f = jax.jit(lambda x: x * 2)
    for x in XS:
        f(x)
'''

MARKED = THREE_SHAPES + '''
import pytest
@pytest.mark.jitwatch(max_compiles=5)
def test_only_max():
    run()
@pytest.mark.jitwatch(max_compiles=2)
def test_over_max():
    run()
@pytest.mark.jitwatch
def test_no_gate_given():
    run()
'''


def test_max_compiles_alone_limits_the_total_only_in_the_marker_block_and_command(
        pytester, monkeypatch, tmp_path, capsys):
    """The marker with only `max_compiles=5` also enforced `fail_after_warmup=1` (and
    failed on 3 compiles of `f`), where the block and the command did not."""
    from jitmagic.frontends.watch import command

    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_gate=MARKED)
    result = pytester.runpytest_inprocess("-p", "jitmagic.frontends.watch.pytest_plugin",
                                          "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert "FAILED test_gate.py::test_over_max" in out
    assert "FAILED test_gate.py::test_no_gate_given" in out  # no gate given: a warm-up of 1
    scope: dict[str, object] = {}
    exec(compile(THREE_SHAPES, "three.py", "exec"), scope)
    run = scope["run"]
    assert callable(run)
    with jitmagic.watch(max_compiles=5, live=False):
        run()
    script = tmp_path / "three.py"
    script.write_text(THREE_SHAPES + "run()\n")
    assert command.main(["--max-compiles", "5", str(script)]) == 0, capsys.readouterr().out


# -- 3., 4. stale values: every cached program, while its function is alive ---------------


def _stale_after_a_short_batch() -> tuple[jax.Array, tuple[L.Stale, ...]]:
    scope: dict[str, object] = {}
    exec(compile('''\
import jax, jax.numpy as jnp
LR = 0.1
@jax.jit
def train_step(w, x):
    return w - LR * jnp.mean(x, axis=0)
def train():
    global LR
    w = jnp.zeros(3)
    for epoch in range(3):
        for _ in range(2):
            w = train_step(w, jnp.ones((4, 3)))  # runs with LR=0.1 in every epoch
        LR = LR * 0.5
    return train_step(w, jnp.ones((2, 3)))  # a short batch, traced at the new LR
''', "stale_short.py", "exec"), scope)
    train = scope["train"]
    assert callable(train)
    with jitmagic.watch(live=False) as w:
        out = train()
    return out, w.ledger.stale


def test_a_stale_global_is_named_though_a_short_batch_traced_again_at_the_new_value():
    """The full batch's program, traced at LR=0.1, ran all three epochs; the short batch
    traced at 0.0125 was the function's last trace, the only one compared: not named."""
    out, stale = _stale_after_a_short_batch()
    assert float(out[0]) == pytest.approx(-(0.1 * 6 + 0.0125))  # 0.1 kept in every epoch
    assert [(v.function, v.name, v.traced, v.now) for v in stale] == [
        ("train_step", "LR", "0.1", "0.0125")]


def test_jits_made_anew_each_step_and_discarded_are_not_named_one_kept_alive_is():
    """`jax.jit(lambda w, g: w - lr * g)` made on every step: each program read that
    step's `lr` and was never called again, its function dropped; each was named stale."""
    def train(kept: list[object]) -> jax.Array:
        w = jnp.ones(4)
        for step in range(4):
            lr = 0.1 / (step + 1)
            upd = jax.jit(lambda w, g: w - lr * g)  # noqa: B023 (the user's own bug)
            if step == 0:
                kept.append(upd)  # a program traced at 0.1 that could still be called
            w = upd(w, jnp.full(4, 0.5))
        return w

    with jitmagic.watch(live=False) as dropped:
        train([])
    assert dropped.ledger.stale == ()
    kept: list[object] = []
    with jitmagic.watch(live=False) as alive:
        train(kept)
    assert [(v.name, v.traced, v.now) for v in alive.ledger.stale] == [("lr", "0.1", "0.025")]


# -- 6. an NNX mode switch on one jitted function: the pytree reason, and its fix ---------


def test_an_nnx_train_eval_switch_reads_as_the_graph_attribute_and_its_fix_compiles_once():
    """`model.train()`/`model.eval()` around one `nnx.jit` function read "other", with
    JAX's text clipped before the part that differs; the fix printed, one jitted function
    per mode, compiles each once and gives the same results."""
    nnx = pytest.importorskip("flax.nnx")
    from jitmagic.render.ledger.fixes import GRAPH_FIX

    def run(fixed: bool) -> list[float]:
        model = nnx.Sequential(nnx.Linear(4, 8, rngs=nnx.Rngs(0)),
                               nnx.Dropout(0.5, rngs=nnx.Rngs(1)))

        @nnx.jit
        def train_step(model, x):
            return model(x).sum()

        @nnx.jit
        def eval_step(model, x):  # the fix: its own def, called only in eval mode
            return model(x).sum()

        eval_step = eval_step if fixed else train_step
        x, out = jnp.ones((2, 4)), []
        for _ in range(2):
            model.train()
            out.append(float(train_step(model, x)))
            model.eval()
            out.append(float(eval_step(model, x)))
        return out

    with jitmagic.watch(live=False) as written:
        before = run(fixed=False)
    (again,) = [c for c in written.ledger.watched if c.function == "train_step"
                and c.reason.kind != K.FIRST]
    assert again.reason.kind == K.PYTREE
    assert (again.reason.before, again.reason.after) == (
        "Dropout.deterministic=False", "Dropout.deterministic=True")
    assert f"fix: {GRAPH_FIX}" in str(written)
    with jitmagic.watch(fail_after_warmup=1, live=False) as fixed:
        after = run(fixed=True)
    assert {r.function: r.compiles for r in fixed.ledger.functions()
            if not r.eager} == {"train_step": 1, "eval_step": 1}
    assert after == before


# -- 7. an Equinox static field in the ledger as in the live line; one more function ------

CURRICULUM = '''\
import jax, jax.numpy as jnp, equinox as eqx

class Model(eqx.Module):
    layer: eqx.nn.Linear
    n_repeat: int = eqx.field(static=True)

    def __call__(self, x):
        for _ in range(self.n_repeat):
            x = jnp.tanh(self.layer(x))
        return x

@eqx.filter_jit
def step(model, x):
    return jnp.mean(jax.vmap(model)(x))

x = jnp.ones((8, 4))
layer = eqx.nn.Linear(4, 4, key=jax.random.PRNGKey(0))
for depth in (1, 2):  # a curriculum: deeper each stage
    step(Model(layer, depth), x)
'''


def test_the_command_names_an_equinox_static_field_in_the_ledger_as_in_the_live_line(
        tmp_path, capsys):
    """The live line said `Model.n_repeat`; the ledger, made once the script's `__main__`
    was gone, wrote the module's node clipped (`…ode(Model[(Missing, 1)], …`)."""
    pytest.importorskip("equinox")
    from jitmagic.frontends.watch import command

    script = tmp_path / "curriculum.py"
    script.write_text(CURRICULUM)
    assert command.main([str(script)]) == 0
    said = capsys.readouterr()
    assert "static value of `Model.n_repeat`: 1 → 2" in said.err  # the live line
    assert "  - static value of `Model.n_repeat`: 1 → 2: 1×" in said.out  # the ledger


def test_one_function_past_the_table_is_one_more_function():
    compiles = tuple(K.Compile(f"f{i}", K.Reason(K.FIRST), trace_s=0.01, lower_s=0.01,
                               compile_s=0.1 - i / 1000) for i in range(13))
    shown = str(L.Ledger(compiles, wall_s=2.0, source="the block"))
    assert "… and 1 more function: 1 compile, " in shown


def test_a_ledger_diff_leaves_eager_ops_out_of_what_got_worse_as_the_gate_does():
    """``jitmagic diff --fail-on-larger`` failed on an eager ``multiply`` that compiled
    again more often in NEW, though the watch's gate never counts eager ops."""
    @jax.jit
    def step(x):
        return x * 2

    with jitmagic.watch() as old:
        step(jnp.ones(3))
    with jitmagic.watch() as new:
        for n in (3, 5, 7):
            step(jnp.ones(3))
            jnp.ones(n) * jnp.ones(n)  # eager, a new shape each time
    d = jitmagic.diff(old.ledger, new.ledger)
    assert any(r.eager and r.new_again > r.old_again for r in d.rows)
    assert d.more_again == ()
    with jitmagic.watch() as worse:
        for n in (3, 4):
            step(jnp.ones(n))
    assert [r.function for r in jitmagic.diff(old.ledger, worse.ledger).more_again] == ["step"]


def test_the_ledger_jitwatch_o_returns_names_cells_as_its_output_does(ip):
    """``-o``'s ledger showed ``<ipython-input-4-...>:1`` where the magic's own output
    read ``Cell In[4]:1``."""
    from IPython.utils.capture import capture_output

    with capture_output():
        defined = ip.run_cell("import jax, jax.numpy as jnp\n"
                              "celled2 = jax.jit(lambda x: x * 2)\n", store_history=True)
        ledger = ip.run_cell_magic("jitwatch", "--no-plot -o",
                                   "for n in (2, 3):\n    celled2(jnp.ones(n))\n")
    said = str(ledger)
    assert f"Cell In[{defined.execution_count}]:2" in said
    assert "<ipython-input-" not in said


def test_a_static_configs_values_are_shown_from_a_word_not_mid_word():
    """A static dataclass read '…g(n_layers=2, scale=1.0, …)', its name cut mid-word."""
    from jitmagic.render.ledger.values import values_said as _values

    said = _values(("Config(n_layers=2, scale=1.0, act='tanh')",
                    "Config(n_layers=2, scale=0.9, act='tanh')"))
    assert said == ("Config(n_layers=2, scale=1.0, act='tanh') → "
                    "Config(n_layers=2, scale=0.9, act='tanh')")
    long = "x" * 80 + ", Model(depth=2, width=64, act='relu', norm=True, dropout=0.1)"
    shown = _values((long, long.replace("depth=2", "depth=3")))
    assert "…Model(depth=2, width=64" in shown and "…Model(depth=3" in shown


def test_an_eager_stage_is_named_by_the_users_jnp_asarray_and_said_what_it_is():
    """A new user read ``stage  eager op`` in the ledger, a name they never wrote: JAX
    0.10's ``jnp.asarray`` and ``jnp.array`` of a NumPy array or a Python number bind its
    primitive ``stage``. It is shown as the call on their line, and said what it is."""
    import numpy as np

    rng = np.random.default_rng(0)
    with jitmagic.watch() as w:
        for n in (3, 5):  # batches loaded with NumPy, moved over as users do
            batch = jnp.asarray(rng.normal(size=(n, 2)).astype(np.float32))
    assert batch.shape == (5, 2)
    found = {r.function: r for r in w.ledger.functions()}
    assert found["stage"].eager and found["stage"].again == 1  # JAX's own name, in the record
    said = str(w)
    (table,) = [ln for ln in said.splitlines() if " eager op " in ln]
    assert table.startswith("jnp.asarray (stage)  "), table
    assert "`jnp.asarray (stage)`: 1×" in said
    assert ("note: `stage` is JAX's own op behind `jnp.array` and `jnp.asarray` of a Python "
            "number or a NumPy array") in said

"""``%%jitwatch`` and ``jitmagic.watch``: every compile of code run as written, with JAX's
reason, the user's line and the seconds (real JAX, a real IPython shell).

No test here asserts a time: the seconds are JAX's own events, checked only to be there
(positive) where a stage ran.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import threading

import jax
import jax.numpy as jnp
import pytest
import watch_layers
from IPython.utils.capture import capture_output
from jax._src import monitoring

import jitmagic
from jitmagic._compat import CACHE_MISS_LOGGER
from jitmagic.measure.watch import recorder as recorder_module
from jitmagic.measure.watch.recorder import Recorder
from jitmagic.model import ledger as L
from jitmagic.model.ledger import compiles as K
from jitmagic.render.ledger import text


def watched(ip, cell: str, line: str = "--no-plot -o"):
    """Run ``%%jitwatch`` on ``cell``; (the ledger, the captured output)."""
    with capture_output() as cap:
        ledger = ip.run_cell_magic("jitwatch", line, cell)
    return ledger, cap


def shown(cap) -> str:
    """What a captured run printed and displayed, as text."""
    return cap.stdout + "".join(o.data.get("text/plain", "") for o in cap.outputs)


def again(ledger, function: str) -> list[K.Compile]:
    return [c for c in ledger.watched if c.function == function and c.reason.kind != K.FIRST]


def logging_state():
    logger = logging.getLogger(CACHE_MISS_LOGGER)
    return (jax.config.jax_explain_cache_misses, jax.config.jax_log_compiles, logger.level,
            logger.disabled, list(logger.filters), list(logger.handlers),
            logging.getLogger("jax").level, list(logging.getLogger("jax").handlers),
            list(monitoring._event_duration_secs_listeners),
            list(monitoring._event_listeners))


def test_a_weak_scalar_that_becomes_an_array_is_named_with_both_types_and_its_line(ip):
    ledger, cap = watched(ip, """\
import jax, jax.numpy as jnp
@jax.jit
def sgd(w, g, lr):
    return w - lr * g
w, lr = jnp.ones(4), 0.1
for step in range(4):
    w = sgd(w, w, lr)
    lr = lr * jnp.float32(0.9)
""")
    (weak,) = again(ledger, "sgd")
    assert weak.reason.kind == K.WEAK_TYPE and weak.reason.argument == "lr"
    assert (weak.reason.before, weak.reason.after) == ("f32[] (weak)", "f32[]")
    assert weak.call_site.endswith(":8") and weak.call_text == "w = sgd(w, w, lr)"
    assert weak.compile_s > 0 and weak.trace_s > 0
    text = shown(cap)
    assert "weak type of `lr`: f32[] (weak) → f32[]" in text
    assert "at line 8  w = sgd(w, w, lr)" in text  # as the notebook numbers it
    assert "%jitcompare sgd(w, w, lr)" in text
    assert ip.user_ns["w"].shape == (4,)  # the cell ran in the user's namespace


def test_a_short_last_batch_is_a_shape_and_a_dtype_change_a_dtype(ip):
    ledger, _ = watched(ip, """\
import numpy as np
import jax, jax.numpy as jnp
data = np.ones((50, 3), np.float32)
@jax.jit
def predict(x):
    return jnp.tanh(x).sum()
for i in range(0, 50, 16):
    predict(data[i:i + 16])
predict(data[:16].astype(np.float16))
""")
    shape, dtype = again(ledger, "predict")
    assert shape.reason.kind == K.SHAPE and shape.reason.argument == "x"
    assert (shape.reason.before, shape.reason.after) == ("f32[16,3]", "f32[2,3]")
    assert dtype.reason.kind == K.DTYPE and dtype.reason.after == "f16[16,3]"
    (row,) = [r for r in ledger.functions() if r.function == "predict"]
    assert (row.compiles, row.again) == (3, 2)


def test_a_static_value_that_changes_is_named_by_its_parameter(ip):
    ledger, _ = watched(ip, """\
import functools
import jax, jax.numpy as jnp
@functools.partial(jax.jit, static_argnums=1)
def power(x, n):
    return x ** n
for n in (2, 3, 3, 4):
    power(jnp.ones(3), n)
""")
    changes = again(ledger, "power")
    assert [c.reason.kind for c in changes] == [K.STATIC, K.STATIC]
    assert {c.reason.argument for c in changes} == {"n"}
    (row,) = [r for r in ledger.functions() if r.function == "power"]
    (static,) = [r for r in row.reasons if r.kind == K.STATIC]
    assert static.values == ("2", "3", "4") and static.count == 2
    # `n` steers Python here: a new user who passed it as an array, as the fix said, got
    # a TracerIntegerConversionError; the fix says when each way applies
    assert "where it steers Python (a loop count, an `if`" in str(ledger)


def test_a_short_batch_after_a_static_flag_flipped_is_named_as_the_shape(ip):
    """JAX compares a miss with the earlier key it ranks closest by the kind of difference
    first (the pytree, where static values are, before the types): the short last batch
    read 'static value of `train`: True → False' again, though `train=False` had
    compiled already and only the shape differed from that compile."""
    ledger, cap = watched(ip, """\
import functools
import jax, jax.numpy as jnp
@functools.partial(jax.jit, static_argnames="train")
def step(w, x, train=True):
    return w - 0.1 * jnp.sum(x @ w) * (1.0 if train else 0.5)
w, data = jnp.ones((4, 2)), jnp.ones((10, 4))
for i in range(0, 10, 4):
    w = step(w, data[i:i + 4], train=i == 0)
""")
    flipped, short = again(ledger, "step")
    assert flipped.reason.kind == K.STATIC and flipped.reason.argument == "train"
    assert short.reason.kind == K.SHAPE and short.reason.argument == "x"
    assert (short.reason.before, short.reason.after) == ("f32[4,4]", "f32[2,4]")
    text = shown(cap)
    assert "static value of `train`: True → False: 1×" in text
    assert "shape of `x`: f32[4,4] → f32[2,4]: 1×" in text


def test_a_jit_made_in_a_loop_is_a_new_function_each_pass(ip):
    ledger, cap = watched(ip, """\
import jax, jax.numpy as jnp
x = jnp.ones(3)
for i in range(4):
    y = jax.jit(lambda v: v * 2)(x)
""")
    made = again(ledger, "<lambda>")
    assert len(made) == 3 and {c.reason.kind for c in made} == {K.NEW_FUNCTION}
    assert "hoist the `jax.jit(...)`" in str(ledger)


def test_a_pytree_that_gains_a_key_names_the_argument_and_both_structures(ip):
    ledger, _ = watched(ip, """\
import jax, jax.numpy as jnp
@jax.jit
def total(batch):
    return sum(v.sum() for v in batch.values())
total({"x": jnp.ones(2)})
total({"x": jnp.ones(2), "mask": jnp.ones(2)})
""")
    (tree,) = again(ledger, "total")
    assert tree.reason.kind == K.PYTREE and tree.reason.argument == "batch"
    assert tree.reason.before == "dict with 1 child"
    assert tree.reason.after == "dict with 2 children (keys {'mask'} differ)"


def test_a_compile_jax_logs_no_reason_for_is_said_so_never_guessed(ip):
    ledger, _ = watched(ip, """\
import jax, jax.numpy as jnp
@jax.jit
def quiet(x):
    return x + 1
quiet(jnp.ones(2))
jax.config.update("jax_explain_cache_misses", False)  # JAX says nothing of the next miss
quiet(jnp.ones(3))
""")
    (silent,) = again(ledger, "quiet")
    assert silent.reason.kind == K.UNEXPLAINED and silent.compile_s > 0
    assert "recompiled; JAX gave no reason" in str(ledger)
    assert jax.config.jax_explain_cache_misses is False  # the user's own setting, kept


def test_a_loop_that_never_recompiles_says_so(ip):
    ledger, _ = watched(ip, """\
import jax, jax.numpy as jnp
@jax.jit
def step(x):
    return x * 0.5
x = jnp.ones(8)
for _ in range(200):
    x = step(x)
""")
    assert ledger.again == 0 and ledger.count >= 1
    assert "none compiled again: each function compiled once" in str(ledger)
    assert "Why each compiled again" not in str(ledger)


def test_a_cell_that_compiles_nothing_says_so(ip):
    ledger, _ = watched(ip, "total = sum(range(10))\n")
    assert ledger.count == 0 and str(ledger).startswith("jitwatch: No compiles in the cell")


def test_framework_code_in_a_module_of_its_own_gets_the_users_lines(ip):
    ip.user_ns["layers"] = watch_layers
    ledger, _ = watched(ip, """\
import jax, jax.numpy as jnp
state = layers.State(jnp.zeros((3, 3)), 0.1, 0)
x = jnp.ones((4, 3))
for step in range(3):
    state, loss = layers.train_step(state, x)
m = layers.MLP(jnp.eye(3), depth=2)
layers.model_step(m, x)
layers.model_step(layers.MLP(jnp.eye(3), depth=3), x)
""")
    steps = again(ledger, "train_step")
    assert steps and steps[0].reason.kind == K.WEAK_TYPE
    assert steps[0].reason.argument.startswith("state")
    assert all(c.call_site.endswith(":6") for c in steps)  # the cell's line, not JAX's
    (row,) = [r for r in ledger.functions() if r.function == "train_step"]
    assert row.defined_at.startswith(watch_layers.__file__)
    (depth,) = again(ledger, "model_step")
    assert depth.reason.kind == K.STATIC  # equinox's static field: a static value
    assert depth.call_site.endswith(":9")  # not equinox's own _jit.py
    assert depth.reason.argument == "MLP.depth"  # the field, by its class and name
    assert "static value of `MLP.depth`: 2 → 3" in str(ledger)


def test_scan_and_methods_compile_once_and_are_not_called_recompiles(ip):
    ledger, _ = watched(ip, """\
import jax, jax.numpy as jnp
class Model:
    def __init__(self, w):
        self.w = w
    def run(self, xs):
        return jax.lax.scan(lambda c, x: (c + x @ self.w, None), jnp.zeros(2), xs)[0]
model = Model(jnp.eye(2))
run = jax.jit(model.run)
for _ in range(3):
    run(jnp.ones((5, 2)))
""")
    for name in ("Model", "model", "run"):  # the shell is the session's: test_magic's cells
        ip.user_ns.pop(name, None)          # check that theirs leave no `model` behind
    assert [r.again for r in ledger.functions() if r.function == "run"] == [0]


def test_threads_the_run_starts_count_and_threads_running_before_are_shown_apart():
    go, done = threading.Event(), threading.Event()

    def loader():  # started before the watch: a data loader of the notebook's
        go.wait(60)
        jax.jit(lambda v: v - 3)(jnp.ones(5))
        done.set()

    def worker(n):
        f = jax.jit(lambda v: v * 2)
        for k in (n, n + 1):
            f(jnp.ones(k))

    background = threading.Thread(target=loader, name="loader")
    background.start()
    with jitmagic.watch(fail_after_warmup=9) as w:
        go.set()
        done.wait(60)
        started = threading.Thread(target=worker, args=(7,), name="worker")
        started.start()
        started.join()
    background.join()
    ledger = w.ledger
    assert {c.thread for c in ledger.other_threads} == {"loader"}
    assert "worker" in {c.thread for c in ledger.watched}  # the run's own thread
    (shape,) = [c for c in ledger.watched if c.reason.kind == K.SHAPE]
    assert shape.thread == "worker"
    text = str(w)
    assert "(on worker)" in text and "on threads that ran before it" in text
    assert "`<lambda>` on loader" in text


def test_the_gate_fails_on_a_recompile_after_warm_up_and_passes_without():
    @jax.jit
    def step(x):
        return x * 2

    with jitmagic.watch(fail_after_warmup=1) as w:
        for _ in range(5):
            step(jnp.ones(3))
    assert w.ledger.over_gate() == []
    recompiled = (r"`step` compiled 2 times here, 1 after its warm-up of 1: the first of "
                  r"them for a shape of `x` at .*test_watch")
    with pytest.raises(jitmagic.RecompiledError, match=recompiled), \
            jitmagic.watch(fail_after_warmup=1):
        step(jnp.ones(4))
        step(jnp.ones(5))
    with pytest.raises(jitmagic.RecompiledError, match="more than the 0 allowed"), \
            jitmagic.watch(max_compiles=0):
        step(jnp.ones(6))
    with pytest.raises(jitmagic.InputError, match="fail_after_warmup=1"), \
            jitmagic.watch(fail_after_warmup=-1):
        pass


def test_jnp_calls_that_jax_jits_itself_are_eager_ops_said_once_by_their_line(ip):
    """`x.mean(0)` and `x - y` compile JAX's own jits (`_mean`, `subtract`), not its eager
    dispatch: a new user's gate failed on them, though it says eager ops do not count,
    and the one line got four bullets with four copies of the fix."""
    ledger, cap = watched(ip, """\
import numpy as np
import jax, jax.numpy as jnp
@jax.jit
def step(w, xb):
    return w - 0.1 * jnp.mean(xb, 0)
w, data = jnp.zeros(8), np.ones((300, 8), np.float32)
for i in range(0, 300, 128):
    xb = jnp.asarray(data[i:i + 128])
    xb = xb - xb.mean(0)
    w = step(w, xb[:40])
""", line="--no-plot -o --fail-after-warmup 1")
    rows = {r.function: r for r in ledger.functions()}
    assert rows["step"].compiles == 1 and not rows["step"].eager
    for name in ("_mean", "subtract"):
        assert rows[name].eager and rows[name].again == 1
        assert {c.reason.kind for c in again(ledger, name)} == {K.EAGER}
    assert ledger.over_gate() == []
    text = shown(cap)
    assert "Gate held" in text and "Gate FAILED" not in text
    assert text.startswith("jitwatch: eager ops (jnp calls outside any jit) compiled again "
                           "4 times (")
    (line,) = [x for x in ledger.eager_again() if x.call_text == "xb = xb - xb.mean(0)"]
    assert set(line.functions) == {"_mean", "subtract"} and line.count == 2
    assert text.count("note: an op outside any jit compiles once per new shape") == 1
    assert "move it inside the jitted function" not in text  # shown not to help
    assert "`_mean`, `subtract`: 2×, " in text or "`subtract`, `_mean`: 2×, " in text


def test_the_compile_count_gate_names_every_function_that_compiled(ip):
    """It named the one that compiled most: '2 compiles, more than the 1 allowed: `iota`
    1 of them', the other left out."""
    with pytest.raises(jitmagic.RecompiledError) as failed:
        watched(ip, "import jax.numpy as jnp\nx = jnp.arange(5.0) * 2\n",
                line="--no-plot --max-compiles 1")
    assert str(failed.value).startswith("jitwatch gate failed: 2 compiles, more than the 1 "
                                        "allowed (max_compiles=1): ")
    assert "`iota` 1" in str(failed.value) and "`multiply` 1" in str(failed.value)


def test_the_magics_gate_fails_the_cell_after_showing_the_ledger(ip):
    cell = ("import jax, jax.numpy as jnp\nf = jax.jit(lambda x: x + 1)\n"
            "for n in (2, 3):\n    f(jnp.ones(n))\n")
    with capture_output() as cap:
        result = ip.run_cell("%%jitwatch --no-plot --fail-after-warmup 1\n" + cell)
    assert isinstance(result.error_in_exec, jitmagic.RecompiledError)
    assert type(result.error_in_exec).__name__ == "RecompiledError"  # a notebook's ename
    out = shown(cap)
    assert "Gate FAILED" in out and "RecompiledError: jitwatch gate failed" in out
    assert "for a shape of `x` at line 5" in out
    with capture_output():
        fine = ip.run_cell("%%jitwatch --no-plot --fail-after-warmup 2\n" + cell)
    assert fine.error_in_exec is None


def test_a_cell_that_raises_shows_the_ledger_then_its_own_error(ip):
    with capture_output() as cap:
        result = ip.run_cell("""%%jitwatch --no-plot
import jax, jax.numpy as jnp
made_before = jax.jit(lambda x: x * 3)(jnp.ones(2))
1 / 0
""")
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    out = shown(cap)
    assert "jitwatch:" in out  # displayed before the error is raised (two streams here)
    assert "The run raised ZeroDivisionError: division by zero" in out
    assert "----> 4 1 / 0" in out and "jitwatch.py" not in out.split("ZeroDivisionError")[1]
    assert "made_before" in ip.user_ns  # what ran before the error stays


def test_a_trace_that_raises_is_no_compile_and_the_gate_is_not_checked_after_it(ip):
    """A new user's cell raised while tracing `fwd`: the ledger listed `fwd` as compiled
    once (its lowering and compile '0 ns', never measured), said 'Gate held', and a shape
    bug that failed to trace was 'compiled again' with the advice to pad."""
    with capture_output() as cap:
        result = ip.run_cell("""%%jitwatch --no-plot --fail-after-warmup 1
import jax, jax.numpy as jnp
@jax.jit
def fwd(x, depth):
    for _ in range(depth):
        x = jnp.tanh(x)
    return x
@jax.jit
def mm(a, b):
    return a @ b
mm(jnp.ones((2, 3)), jnp.ones((3, 4)))
try:
    mm(jnp.ones((2, 3)), jnp.ones((5, 4)))  # fails to trace: a shape bug, not a recompile
except TypeError:
    pass
fwd(jnp.ones(3), 2)
""")
    assert type(result.error_in_exec).__name__ == "TracerIntegerConversionError"
    out = shown(cap)
    (table,) = [b for b in out.split("\n\n") if b.startswith("function ")]
    assert "\nfwd " not in table and "0 ns" not in out
    assert re.search(r"\nmm +line 8 +1 +0 ", table)  # its one compile; the failed trace not
    assert "`mm`" not in out and "shape of `b`" not in out  # no reason, no fix for it
    assert "Gate not checked: the run raised before its end" in out and "Gate held" not in out


def test_a_cell_that_does_not_parse_shows_its_syntax_error_and_no_ledger(ip):
    with capture_output() as cap:
        result = ip.run_cell("%%jitwatch --no-plot\nbefore = 1\ndef broken(:\n    pass\n")
    assert isinstance(result.error_in_exec, SyntaxError)
    assert result.error_in_exec.lineno == 3  # the notebook's line: %%jitwatch is line 1
    assert "jitwatch:" not in shown(cap) and "the ledger holds" not in shown(cap)
    assert "before" not in ip.user_ns  # nothing ran


def test_an_error_message_ending_in_a_full_stop_reads_as_one_sentence():
    ledger = L.Ledger((), 0.01, error="TypeError: shapes got (3,) and (5,).")
    assert "The run raised TypeError: shapes got (3,) and (5,): the ledger holds" in str(ledger)


def test_a_stage_jax_fired_no_event_for_is_a_dash_not_zero():
    ledger = L.Ledger((K.Compile("traced_only", K.Reason(K.FIRST), trace_s=0.002),), 0.01)
    (row,) = ledger.functions()
    assert "lower_s" not in row.stage_seconds and row.stage_seconds["trace_s"] == 0.002
    line = next(x for x in str(ledger).splitlines() if x.startswith("traced_only"))
    assert line.split()[-6:] == ["2", "ms", "—", "—", "2", "ms"]  # trace, lower, compile, total
    assert "0 ns" not in line


@pytest.mark.parametrize("ending", ["pass", "1 / 0", "raise KeyboardInterrupt"])
def test_the_users_logging_config_and_listeners_are_put_back(ip, ending):
    seen: list[str] = []

    class Mine(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    mine = Mine()
    jax_logger = logging.getLogger("jax")
    jax_logger.addHandler(mine)
    try:
        before = logging_state()
        with capture_output():
            ip.run_cell("%%jitwatch --no-plot\nimport jax, jax.numpy as jnp\n"
                        f"jax.jit(lambda x: x - 7)(jnp.ones(2))\n{ending}\n")
        assert logging_state() == before
        assert not [m for m in seen if "TRACING CACHE MISS" in m]  # never shown unasked
        jax.config.update("jax_explain_cache_misses", True)  # the user's own explanations
        try:
            with jitmagic.watch() as w:
                jax.jit(lambda x: x - 8)(jnp.ones(2))
        finally:
            jax.config.update("jax_explain_cache_misses", False)
        assert any("TRACING CACHE MISS" in m for m in seen)  # still reach their handler
        assert w.ledger.count >= 1
    finally:
        jax_logger.removeHandler(mine)


def test_many_compiles_keep_a_bounded_ledger_and_count_the_rest():
    recorder = Recorder(max_kept=5)
    with recorder:
        for n in range(1, 13):
            jax.jit(lambda x: x + 1)(jnp.ones(n))
    ledger = recorder.ledger()
    assert len(ledger.compiles) == 5
    assert ledger.count == 5 + sum(o.count for o in ledger.omitted) >= 12
    assert re.search(r"`<lambda>`: \d+ more compiles \(.*\) are counted in the table",
                     str(ledger))
    (row,) = [r for r in ledger.functions() if r.function == "<lambda>"]
    assert row.compiles == 12 and row.again == 11


def test_explanations_stop_after_many_misses_and_later_compiles_are_still_counted(
        monkeypatch):
    monkeypatch.setattr(recorder_module, "MAX_EXPLAINED", 3)  # 300 here: its cost grows

    @jax.jit
    def grow(x):
        return x.sum()

    with jitmagic.watch() as w:
        for n in range(1, 7):
            grow(jnp.ones(n))
    again_ = again(w.ledger, "grow")
    assert len(again_) == 5 and w.ledger.explained_until_s is not None
    assert [c.reason.kind for c in again_][:2] == [K.SHAPE, K.SHAPE]
    assert {c.reason.kind for c in again_[2:]} == {K.UNEXPLAINED}
    assert "JAX's explanations were turned off" in str(w)
    assert jax.config.jax_explain_cache_misses is False


def test_a_function_compiled_only_past_the_kept_ones_has_its_row():
    ledger = L.Ledger((K.Compile("f", K.Reason(K.FIRST), trace_s=0.1),), wall_s=1.0,
                      omitted=(K.Omitted("g", 3, 0.5, 2, 0.3),))
    (g,) = [r for r in ledger.functions() if r.function == "g"]
    assert (g.compiles, g.again, g.seconds) == (3, 2, 0.5)
    row = next(line for line in str(ledger).splitlines() if line.startswith("g "))
    assert row.split()[1:] == ["—", "3", "2", "—", "—", "—", "500", "ms"]
    assert ledger.again_seconds == pytest.approx(0.3)


def test_a_reason_of_megabytes_is_clipped():
    @functools.partial(jax.jit, static_argnums=1)
    def scaled(x, table):
        return x * len(table)

    with jitmagic.watch() as w:
        scaled(jnp.ones(2), tuple(range(300_000)))
        scaled(jnp.ones(2), tuple(range(300_001)))
    (static,) = again(w.ledger, "scaled")
    assert static.reason.kind == K.STATIC
    assert max(len(static.reason.before), len(static.reason.after), len(static.reason.text)) \
        <= K.MAX_TEXT
    assert len(str(w)) < 5_000


def test_a_saved_ledger_loads_shows_the_same_and_diffs(ip, tmp_path):
    cell = ("import jax, jax.numpy as jnp\ng = jax.jit(lambda x: x.sum())\n"
            "for n in {ns}:\n    g(jnp.ones(n))\n")
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    watched(ip, cell.format(ns="(3, 3)"), f"--no-plot --save {old}")
    watched(ip, cell.format(ns="(3, 4, 5)"), f"--no-plot --save {new} --html {tmp_path / 'n.html'}")
    data = json.loads(new.read_text())
    assert data["schema"] == "jitmagic.ledger/1"
    loaded = jitmagic.load(new)
    assert isinstance(loaded, jitmagic.Ledger) and loaded.to_dict() == data
    assert [r.again for r in loaded.functions() if r.function == "<lambda>"] == [2]
    d = jitmagic.diff(old, new)
    assert isinstance(d, jitmagic.LedgerDiff)
    # (eager ops may compile again too: jnp.ones on a shape no earlier test made)
    assert ("<lambda>", 0, 2) in [(r.function, r.old_again, r.new_again) for r in d.more_again]
    assert re.search(r"NEW compiles again more often in \d+ functions?: .*`<lambda>`", str(d))
    page = (tmp_path / "n.html").read_text()
    assert "data:image/png;base64," in page and "http" not in page.split("<body>")[1].split(
        "JAX:")[0]


def test_a_hostile_report_is_refused_and_its_names_escaped(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "jitmagic.ledger/1", "compiles": "nope",
                               "wall_s": 1}))
    with pytest.raises(jitmagic.ReportSchemaError, match="compiles: expected a list"):
        jitmagic.load(bad)
    hostile = L.Ledger((K.Compile("\x1b]0;pwned\x07step", K.Reason(K.SHAPE, "x\x1b[31m",
                                                                     "f32[1]", "f32[2]")),
                        K.Compile("\x1b]0;pwned\x07step", K.Reason(K.FIRST))), wall_s=1.0)
    path = tmp_path / "hostile.json"
    jitmagic.save(hostile, path)
    shown = str(jitmagic.load(path))
    assert "\x1b" not in shown and "\x07" not in shown and "\\x1b" in shown


def test_a_ledger_from_a_newer_jitmagic_says_so_and_an_early_one_still_loads(tmp_path):
    """A ledger a newer jitmagic wrote got a bare schema failure ("schema: expected
    'jitmagic.ledger/1'"); one written before the ledger held threads, a gate, stale
    values or a reason's other differences still loads, each at its default."""
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({"schema": "jitmagic.ledger/2", "compiles": []}))
    with pytest.raises(jitmagic.ReportSchemaError,
                       match=r"written by a newer jitmagic \(schema 'jitmagic.ledger/2'\)"
                             r".*upgrade jitmagic"):
        jitmagic.load(newer)
    early = tmp_path / "early.json"
    reasons = ({"kind": "first"}, {"kind": "shape", "argument": "x", "before": "f32[3]",
                                   "after": "f32[4]"})
    early.write_text(json.dumps({"schema": "jitmagic.ledger/1", "wall_s": 0.5,
                                 "compiles": [{"function": "step", "reason": r,
                                               "trace_s": 0.01} for r in reasons]}))
    loaded = jitmagic.load(early)
    assert loaded.again == 1 and loaded.gate == L.Gate() and loaded.stale == ()
    assert loaded.source == "the cell" and loaded.compiles[1].thread == "MainThread"
    assert "shape of `x`: f32[3] → f32[4]" in str(loaded)


def test_what_the_watch_knows_is_saved_as_a_fact_and_worded_by_the_renderer(tmp_path):
    """A recompile JAX gave no reason for, of a function object JAX had never seen, held
    the watch's sentence in its reason's text, so a saved ledger stored the sentence; now
    it holds the fact (``noted``), the renderer words it, and a ledger that stored the
    sentence still shows it."""
    first = K.Compile("f", K.Reason(K.FIRST), defined_at="m.py:1", trace_s=0.1)
    fact = K.Compile("f", K.Reason(K.UNEXPLAINED, noted=K.Noted.CLEARED_OR_NEW),
                     defined_at="m.py:1", trace_s=0.1)
    ledger = L.Ledger((first, fact), wall_s=1.0)
    path = tmp_path / "l.json"
    jitmagic.save(ledger, path)
    saved = json.loads(path.read_text())["compiles"][1]["reason"]
    assert saved["noted"] == "cleared or new" and saved["text"] == ""
    said = "JAX had never seen this function object, though a function of this name"
    assert said in str(jitmagic.load(path)) and said in str(ledger)
    saved.pop("noted")
    saved["text"] = said + " defined there compiled before (as an earlier jitmagic saved it)"
    data = json.loads(path.read_text())
    data["compiles"][1]["reason"] = saved
    path.write_text(json.dumps(data))
    assert "(as an earlier jitmagic saved it)" in str(jitmagic.load(path))


def test_a_jit_of_a_librarys_function_is_the_users_not_an_eager_op():
    import flax.linen as nn

    model = nn.Dense(3)
    params = model.init(jax.random.key(0), jnp.ones((4, 2)))
    apply = jax.jit(model.apply)  # JAX explains no miss of flax's own function
    with pytest.raises(jitmagic.RecompiledError) as failed, \
            jitmagic.watch(fail_after_warmup=1) as w:
        for rows in (16, 16, 2):  # the short last batch compiles again
            apply(params, jnp.ones((rows, 2)))
    first, late = [c for c in w.ledger.watched if c.function == "apply"]
    assert (first.reason.kind, late.reason.kind) == (K.FIRST, K.UNEXPLAINED)
    assert not late.eager
    message = str(failed.value)
    assert ("`apply` compiled 2 times here, 1 after its warm-up of 1: the first of them "
            "with no reason from JAX") in message
    assert "recompiled; JAX gave no reason: 1×" in message  # the ledger, in the message
    assert failed.value.sentences.startswith("jitwatch gate failed: `apply`")


def test_a_watched_cells_functions_carry_the_number_the_notebook_shows(ip):
    """IPython counts a stored cell before running it: a function defined in watched
    cell 4 read 'defined at Cell In[5]:2', and its tracebacks 'Cell In[5]'."""
    with capture_output() as cap:
        result = ip.run_cell("%%jitwatch --no-plot\nimport jax, jax.numpy as jnp\n"
                             "numbered = jax.jit(lambda x: x * 3)\nnumbered(jnp.ones(2))\n"
                             "numbered(jnp.ones(3))\n", store_history=True)
    assert result.success
    number = result.execution_count
    fn = ip.user_ns["numbered"].__wrapped__
    assert fn.__code__.co_filename.startswith(f"<ipython-input-{number}-")
    with capture_output() as cap:
        failed = ip.run_cell("%%jitwatch --no-plot\nx = 1\n1 / 0\n", store_history=True)
    assert isinstance(failed.error_in_exec, ZeroDivisionError)
    assert f"In[{failed.execution_count}], line 3" in re.sub(r"\x1b\[[0-9;]*m", "", cap.stdout)


LIBRARY_JITS = '''\
import equinox as eqx, flax.linen as nn, jax, jax.numpy as jnp

class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(3)(x)

model = MLP()
params = model.init(jax.random.key(0), jnp.ones((2, 4)))
apply = jax.jit(model.apply)       # the user's jit of a bound method of flax's
solve = jax.jit(jnp.linalg.solve)  # and of a JAX function

@eqx.filter_jit
def predict(params, x):
    return model.apply(params, x)

for n in (2, 3):
    apply(params, jnp.ones((n, 4)))
    solve(jnp.eye(n), jnp.ones(n))
    predict(params, jnp.ones((n, 4)))
'''


def test_a_jit_of_a_library_function_or_a_bound_method_says_where_it_was_defined(ip):
    """The user's jit of flax's ``model.apply`` and of ``jnp.linalg.solve`` (JAX explains
    no miss of its own files) name the library's file; an ``eqx.filter_jit`` step (JAX
    names Equinox's wrapper) its own line; none reads "—"."""
    with capture_output():
        ledger = ip.run_cell_magic("jitwatch", "--no-plot -o", LIBRARY_JITS)
    said = text(ledger, verbose=True)
    rows = {r.function: r for r in ledger.functions()}
    assert rows["apply"].defined_at.rpartition(":")[0].endswith("flax/linen/module.py")
    assert rows["solve"].defined_at.rpartition(":")[0].endswith("jax/_src/numpy/linalg.py")
    table = said[said.index("function  "):].splitlines()
    places = dict(re.split(r"\s{2,}", line)[:2] for line in table[1:] if line.strip())
    assert places["apply"].startswith("flax/linen/module.py:")
    assert places["solve"].startswith("jax/_src/numpy/linalg.py:")
    assert places["predict"] == "line 14"  # @eqx.filter_jit (%%jitwatch being line 1)
    assert "`predict` (defined at line 14): compiled again" in said


def test_the_diff_names_eager_rows_as_eager_ops(ip):
    """``jitmagic diff``'s "defined at" says ``eager op`` for jnp calls outside any jit,
    as the ledger's table does, not "—"."""
    jax.clear_caches()  # the sums compile here, whatever ran before
    with capture_output():
        old = ip.run_cell_magic("jitwatch", "--no-plot -o", "import jax.numpy as jnp\n"
                                "[jnp.ones(n).sum() for n in (1, 2)]")
        new = ip.run_cell_magic("jitwatch", "--no-plot -o", "import jax.numpy as jnp\n"
                                "[jnp.ones(n).sum() for n in (3, 4, 5)]")
    text = str(jitmagic.diff(old, new))
    table = text[text.index("function  "):].splitlines()[1:]
    assert any("reduce_sum" in line for line in table), text
    assert all(re.split(r"\s{2,}", line)[1] == "eager op" for line in table), text


def test_control_characters_in_a_function_name_are_escaped_in_the_chart():
    """A name with a bell, a terminal colour and a tab (a generated or decorated name)
    reached matplotlib as it was, which warned that no font has their glyphs."""
    import warnings

    from jitmagic.render.ledger import bundle

    def scaled(x):
        return x * 2

    scaled.__name__ = scaled.__qualname__ = "step\x07\x1b[31m\tred"
    jitted = jax.jit(scaled)
    with jitmagic.watch(live=False) as w:
        jitted(jnp.ones(2))
        jitted(jnp.ones(3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        drawn = bundle(w.ledger, plot=True)
    assert "data:image/png;base64," in drawn["text/html"]  # the chart drawn
    assert [str(c.message) for c in caught] == []

"""Every fix the ledger prints, applied as printed to a loop shaped as users write them:
the fixed loop compiles once and gives the same result (issue 51 item 7: "move it inside
the jitted function" still compiled at every length of a growing list, and a hoisted scan
body kept its first value). Where no fix was shown, a note says why it compiles, and no
"fix:" is printed. Real JAX runs; no timing is asserted."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

import jitmagic
from jitmagic.model.ledger import compiles as K
from jitmagic.render.ledger.fixes import FIXES, NOTES


def compiles(w: jitmagic.Watch, function: str) -> int:
    return sum(r.compiles for r in w.ledger.functions() if r.function == function)


def kinds(w: jitmagic.Watch, function: str) -> set[str]:
    return {c.reason.kind for c in w.ledger.watched if c.function == function}


def printed(w: jitmagic.Watch, kind: str) -> bool:
    return f"fix: {FIXES[kind].split('{arg}')[0]}" in str(w)


def test_the_weak_type_fix_compiles_once_and_keeps_the_weights():
    def train(lr):
        def sgd(w, g, lr):  # one per run: the second run's compiles are its own
            return w - lr * g

        step, w = jax.jit(sgd), jnp.ones(4)
        for _ in range(4):
            w = step(w, w * 0.5, lr)
            lr = lr * jnp.float32(0.9)  # a decayed schedule: an array from step 2
        return w

    with jitmagic.watch() as written:
        before = train(0.1)
    with jitmagic.watch() as fixed:
        after = train(jnp.float32(0.1))  # the fix: `jnp.float32(0.1)` rather than `0.1`
    assert K.WEAK_TYPE in kinds(written, "sgd") and printed(written, K.WEAK_TYPE)
    assert compiles(fixed, "sgd") == 1 and np.array_equal(before, after)


def test_the_shape_fix_pads_and_masks_a_short_batch_and_keeps_every_loss():
    data = np.arange(50 * 3, dtype=np.float32).reshape(50, 3) / 100

    @jax.jit
    def loss(x):
        return jnp.mean(jnp.tanh(x) ** 2)

    @jax.jit
    def masked_loss(x, mask):  # the fix: the padded rows are kept out of the mean
        err = jnp.tanh(x) ** 2
        return jnp.sum(jnp.where(mask[:, None], err, 0)) / (jnp.sum(mask) * x.shape[1])

    with jitmagic.watch() as written:
        losses = [float(loss(data[i:i + 16])) for i in range(0, 50, 16)]
    with jitmagic.watch() as fixed:
        kept = []
        for i in range(0, 50, 16):
            batch = data[i:i + 16]
            mask = np.arange(16) < len(batch)
            padded = np.pad(batch, ((0, 16 - len(batch)), (0, 0)))
            kept.append(float(masked_loss(padded, mask)))
    assert K.SHAPE in kinds(written, "loss") and printed(written, K.SHAPE)
    assert compiles(fixed, "masked_loss") == 1
    np.testing.assert_allclose(kept, losses, rtol=1e-6)


def test_the_dtype_fix_casts_before_the_call_and_keeps_the_result():
    @jax.jit
    def predict(x):
        return jnp.tanh(x).sum()

    batches = [np.ones((4, 3), np.float32), np.ones((4, 3), np.float16) / 2]
    with jitmagic.watch() as written:
        [predict(b) for b in batches]
    with jitmagic.watch() as fixed:
        kept = [float(predict(b.astype(np.float32))) for b in batches]  # the fix
    assert K.DTYPE in kinds(written, "predict") and printed(written, K.DTYPE)
    assert compiles(fixed, "predict") <= 1  # f32 (4, 3) compiled already: maybe 0
    assert kept == [float(predict(b.astype(np.float32))) for b in batches]


def test_the_dtype_fix_for_a_python_number_is_float_and_keeps_the_result():
    """A schedule that starts at the int `0` and goes on with floats: `.astype` is no
    Python number's, `float(...)` is the fix."""
    @jax.jit
    def sgd(w, lr):
        return w - lr * w

    def schedule(step):
        return 0 if step == 0 else 0.1 / step  # a warm-up from zero, as written by hand

    with jitmagic.watch() as written:
        before = [sgd(jnp.ones(4), schedule(s)) for s in range(3)]
    with jitmagic.watch() as fixed:
        after = [sgd(jnp.ones(4), float(schedule(s))) for s in range(3)]  # the fix
    assert K.DTYPE in kinds(written, "sgd") and printed(written, K.DTYPE)
    assert "`float(...)`" in str(written)
    assert compiles(fixed, "sgd") <= 1  # f32 compiled already: maybe 0
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))


def test_the_static_fixes_an_array_for_arithmetic_and_cond_for_a_branch():
    @functools.partial(jax.jit, static_argnames=("scale", "train"))
    def step(x, scale, train):
        y = x * scale
        if train:
            y = y + 1.0
        return y.sum()

    def cond_step(x, scale, train):  # the fix: an array, and jax.lax.cond for the `if`
        y = x * scale
        return jax.lax.cond(train, lambda v: v + 1.0, lambda v: v, y).sum()

    cond_step = jax.jit(cond_step)
    settings = [(1.0, True), (0.5, True), (0.5, False)]
    x = jnp.arange(6.0)
    with jitmagic.watch() as written:
        before = [float(step(x, scale=s, train=t)) for s, t in settings]
    with jitmagic.watch() as fixed:
        after = [float(cond_step(x, jnp.float32(s), jnp.bool_(t))) for s, t in settings]
    assert kinds(written, "step") == {K.FIRST, K.STATIC} and printed(written, K.STATIC)
    assert compiles(fixed, "cond_step") == 1 and after == before


def test_the_new_function_fix_hoists_the_jit_and_passes_the_loop_value():
    x = jnp.arange(4.0)
    with jitmagic.watch() as written:
        before = [float(jax.jit(lambda v: (v * k).sum())(x))  # noqa: B023 (as written)
                  for k in range(1, 4)]
    with jitmagic.watch() as fixed:
        scaled = jax.jit(lambda v, k: (v * k).sum())  # hoisted; `k` an argument
        after = [float(scaled(x, k)) for k in range(1, 4)]
    assert K.NEW_FUNCTION in kinds(written, "<lambda>") and printed(written, K.NEW_FUNCTION)
    assert [r.compiles for r in fixed.ledger.functions() if r.function == "<lambda>"] == [1]
    assert after == before


def test_the_pytree_fix_passes_the_same_keys_every_time():
    @jax.jit
    def masked_sum(batch):
        x = batch["x"]
        return jnp.sum(x * batch["mask"]) if "mask" in batch else jnp.sum(x)

    batches = [{"x": jnp.ones(5)}, {"x": jnp.ones(5), "mask": jnp.array([1, 1, 0, 1, 0.0])}]
    with jitmagic.watch() as written:
        before = [float(masked_sum(b)) for b in batches]
    with jitmagic.watch() as fixed:  # the fix: an all-ones mask rather than no mask
        after = [float(masked_sum({"mask": jnp.ones(5), **b})) for b in batches]
    assert K.PYTREE in kinds(written, "masked_sum") and printed(written, K.PYTREE)
    assert compiles(fixed, "masked_sum") <= 1 and after == before


def test_the_keyword_fix_passes_the_flag_on_every_call():
    """A `train` flag passed by keyword in training and left out in evaluation: named as
    the keyword (not "dict with 0 child") with its own fix; passed always, one program
    serves both, with the same results."""
    def jitted():  # one per run: the second run's compiles are its own
        def forward(w, x, train=False):
            h = x @ w
            return jnp.where(train, h * 0.9, h).sum()
        return jax.jit(forward)

    w, x = jnp.ones((4, 2)), jnp.arange(8.0).reshape(2, 4)
    with jitmagic.watch() as written:
        step = jitted()
        before = [float(step(w, x, train=True)), float(step(w, x))]
    with jitmagic.watch() as fixed:  # the fix: `train=False` written out
        step = jitted()
        after = [float(step(w, x, train=True)), float(step(w, x, train=False))]
    (again,) = [c.reason for c in written.ledger.watched if c.reason.kind != K.FIRST]
    assert (again.kind, again.argument, again.before, again.after) == (
        K.KEYWORD, "train", "passed", "left out")
    assert "keyword argument `train`: passed → left out" in str(written)
    assert printed(written, K.KEYWORD) and "dict with" not in str(written)
    assert compiles(fixed, "forward") == 1 and after == before


def test_an_eager_op_on_a_growing_list_gets_a_note_not_a_fix_that_does_not_help():
    """"move it inside the jitted function": a mean over a growing list compiles at every
    length inside a jit as well."""
    history: list[float] = []
    with jitmagic.watch() as eager:
        for loss in (0.9, 0.7, 0.6, 0.55):
            history.append(loss)
            float(jnp.mean(jnp.asarray(history)))
    jitted_mean = jax.jit(jnp.mean)
    with jitmagic.watch() as inside:
        for n in range(1, 5):
            jitted_mean(jnp.asarray(history[:n]))
    assert any(r.eager and r.again for r in eager.ledger.functions())
    assert f"note: {NOTES[K.EAGER]}" in str(eager)
    assert "move it inside the jitted function" not in str(eager)
    assert compiles(inside, "mean") == 4  # inside a jit: once per length all the same


def test_a_context_change_gets_a_note_and_no_fix():
    @jax.jit
    def matmul(a, b):
        return a @ b

    a = jnp.ones((3, 3))
    with jitmagic.watch() as w:
        matmul(a, a)
        with jax.default_matmul_precision("highest"):
            matmul(a, a)
    assert K.CONTEXT in kinds(w, "matmul")
    assert f"note: {NOTES[K.CONTEXT]}" in str(w)
    assert "set it once, before the loop" not in str(w)

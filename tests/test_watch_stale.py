"""The values jit hides: a jitted step that read a module-level learning rate, or one it
closed over, that the loop then changed while the compiled program was reused is named
(the name, the value traced, the value now, the line), as is an earlier program traced
at the old value and still cached; one whose values never change is not."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from IPython.utils.capture import capture_output

import jitmagic
from jitmagic.model import ledger as L
from jitmagic.model.ledger import compiles as K
from jitmagic.render.ledger import text

CELL = '''\
import jax, jax.numpy as jnp
LR = 0.1           # a module-level learning rate the loop halves
MOMENTUM = 0.9     # one it never changes

@jax.jit
def train_step(w, x):
    g = jax.grad(lambda w: jnp.mean((x @ w) ** 2))(w)
    return w - LR * g

@jax.jit
def smooth(avg, w):
    return MOMENTUM * avg + (1 - MOMENTUM) * w

w, avg, x = jnp.ones(4), jnp.ones(4), jnp.ones((8, 4))
for epoch in range(3):
    for _ in range(4):
        w = train_step(w, x)
        avg = smooth(avg, w)
    LR = LR / 2
'''


def test_a_module_level_learning_rate_the_loop_changes_is_named_with_its_line(ip):
    with capture_output() as cap:
        ledger = ip.run_cell_magic("jitwatch", "--no-plot -o", CELL)
    (lr,) = ledger.stale  # MOMENTUM never changed: not named
    assert (lr.function, lr.name, lr.scope) == ("train_step", "LR", "global")
    assert (lr.traced, lr.now) == ("0.1", "0.0125")
    assert lr.line.endswith(":9")  # `return w - LR * g`, %%jitwatch being line 1
    said = cap.stdout + "".join(o.data.get("text/plain", "") for o in cap.outputs)
    assert "`train_step` (defined at line 6) read the global `LR` at line 9: 0.1 when " \
           "traced, 0.0125 now" in said
    assert L.Ledger.from_dict(ledger.to_dict()).stale == ledger.stale  # saved, loaded


#: A rate changed as the last, short batch comes: that batch traces again at 0.05 while
#: the full batch's program, traced at 0.1, stays JAX's for its shape.
SHORT_LAST_BATCH = """\
import jax, jax.numpy as jnp
LR = 0.1

@jax.jit
def train_step(w, x):
    return w - LR * x.mean(0)

w = jnp.ones(4)
for LR, batch in ((0.1, 8), (0.05, 3)):
    w = train_step(w, jnp.ones((batch, 4)))
"""


def test_a_value_the_step_closed_over_and_the_loop_rebinds_is_named():
    def train(steps):
        lr = 0.5

        @jax.jit
        def step(w):
            return w - lr * w

        w = jnp.ones(3)
        for i in range(steps):
            w = step(w)
            if i == 1:
                lr = 0.05  # a schedule's drop, after warm-up
        return w

    with jitmagic.watch() as w:
        out = train(4)
    assert float(out[0]) == 0.5 ** 4  # the program kept 0.5: what the user did not ask for
    (kept,) = w.ledger.stale
    assert (kept.name, kept.scope, kept.traced, kept.now) == ("lr", "closure", "0.5", "0.05")


def test_a_step_traced_again_after_the_change_still_holds_the_old_program_and_is_named(ip):
    """The short batch traced at 0.05; the full batch's program, traced at 0.1, is still
    JAX's for that shape: a call of it after the change computes with 0.1 (a short last
    batch each epoch hides a stale rate so), named once."""
    ledger = ip.run_cell_magic("jitwatch", "--no-plot -o", SHORT_LAST_BATCH)
    assert [c.reason.kind for c in ledger.watched if c.function == "train_step"] == [
        K.FIRST, K.SHAPE]
    assert [(v.name, v.traced, v.now) for v in ledger.stale] == [("LR", "0.1", "0.05")]


EQX_CELL = '''\
import equinox as eqx, jax, jax.numpy as jnp
LR = 0.1  # the module-level learning rate the loop halves

class Linear(eqx.Module):
    w: jax.Array
    def __call__(self, x):
        return x @ self.w

@eqx.filter_jit
def train_step(model, x):
    grads = eqx.filter_grad(lambda m: jnp.mean(m(x) ** 2))(model)
    return jax.tree_util.tree_map(lambda p, g: p - LR * g, model, grads)

model, x = Linear(jnp.ones((4, 2))), jnp.ones((8, 4))
for epoch in range(3):
    for _ in range(2):
        model = train_step(model, x)
    LR = LR / 2
'''


def test_an_equinox_filter_jit_step_that_keeps_an_old_learning_rate_is_named(ip):
    """Equinox jits a wrapper of its own and passes the user's step as an argument: the
    step's reads are the ones checked, and it is said to be defined at its own line."""
    ledger = ip.run_cell_magic("jitwatch", "--no-plot -o", EQX_CELL)
    (lr,) = ledger.stale
    assert (lr.function, lr.name, lr.traced, lr.now) == ("train_step", "LR", "0.1", "0.0125")
    assert lr.line.endswith(":13")  # the lambda's `p - LR * g`, inside the step
    (row,) = [c for c in ledger.watched if c.function == "train_step"]
    assert row.defined_at.endswith(":10") and lr.defined_at == row.defined_at  # @eqx.filter_jit


def test_a_nan_read_again_from_the_config_is_not_called_stale(ip):
    """A config re-read each epoch sets the fill value to a new NaN object: the same
    value, not a stale one; a rate that did change is still named."""
    ledger = ip.run_cell_magic("jitwatch", "--no-plot -o", """\
import jax, jax.numpy as jnp
config = {"fill": "nan", "lr": "0.1"}

@jax.jit
def step(w, x):
    return w - LR * jnp.where(jnp.isfinite(x), x, FILL).mean(0)

w = jnp.ones(4)
for epoch in range(3):
    FILL, LR = float(config["fill"]), float(config["lr"]) / (epoch + 1)
    w = step(w, jnp.ones((8, 4)))
""")
    assert [(v.name, v.traced, v.now) for v in ledger.stale] == [
        ("LR", "0.1", "0.03333333333333333")]


def test_a_long_string_changed_at_its_end_shows_where_it_differs(ip):
    ledger = ip.run_cell_magic("jitwatch", "--no-plot -o", """\
import jax, jax.numpy as jnp
LAYERS = "dense-relu," * 300 + "dense-relu"  # the architecture string the step reads

@jax.jit
def step(w, x):
    act = jax.nn.gelu if LAYERS.endswith("gelu") else jax.nn.relu
    return w - 0.1 * act(x).mean(0)

w = jnp.ones(4)
for last in ("relu", "gelu"):
    LAYERS = "dense-relu," * 300 + "dense-" + last
    w = step(w, jnp.ones((8, 4)))
""")
    (v,) = ledger.stale
    said = text(ledger)
    assert "`LAYERS` at line 7: …dense-relu,dense-relu,dense-relu' when traced, " \
           "…dense-relu,dense-relu,dense-gelu' now" in said
    # 3,300 characters: each kept from near where they differ, the change in both
    assert v.traced.endswith("dense-relu'") and v.now.endswith("dense-gelu'")
    assert v.traced.startswith("…") and len(v.traced) <= K.MAX_TEXT


def test_a_read_inside_a_helper_names_the_helper_and_its_line(ip):
    ledger = ip.run_cell_magic("jitwatch", "--no-plot -o", """\
import jax, jax.numpy as jnp
BASE_LR = 0.1

def lr_at(step):
    return BASE_LR * 0.5 ** (step // 100)

@jax.jit
def train_step(w, x, step):
    return w - lr_at(step) * x.mean(0)

w = jnp.ones(4)
for i in range(3):
    w = train_step(w, jnp.ones((8, 4)), i)
    BASE_LR = BASE_LR / 10
""")
    (v,) = ledger.stale
    assert (v.function, v.helper, v.name) == ("train_step", "lr_at", "BASE_LR")
    assert "`train_step` (defined at line 8) read the global `BASE_LR` in its helper " \
           "`lr_at` at line 6: 0.1 when traced" in text(ledger)


def test_of_two_compiled_versions_the_one_that_holds_the_old_value_is_named(ip):
    """The full batch's program traced at 0.1, the short last batch's at 0.05 (now): the
    full batch's is the stale one, named by its inputs."""
    ledger = ip.run_cell_magic("jitwatch", "--no-plot -o", SHORT_LAST_BATCH)
    (v,) = ledger.stale
    assert v.inputs == "f32[4], f32[8,4]"
    assert "`train_step` (defined at line 5), its program for inputs f32[4], f32[8,4], " \
           "read the global `LR` at line 7: 0.1 when traced, 0.05 now" in text(ledger)
    assert L.Ledger.from_dict(ledger.to_dict()).stale == ledger.stale  # saved, loaded

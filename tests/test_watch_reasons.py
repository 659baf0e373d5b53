"""Every reason right (issue 51): the same ledger on every run, every argument JAX names,
sharding and devices said as such, fixes only where they were shown to work. Real JAX
runs; no timing is asserted."""

from __future__ import annotations

import logging
import sys

import jax
import jax.numpy as jnp
import numpy as np
from IPython.utils.capture import capture_output

import jitmagic
from jitmagic import _compat
from jitmagic.model import ledger as L
from jitmagic.model.ledger import compiles as K
from jitmagic.model.ledger import rows as R

DOCS_EXAMPLE = """\
import jax, jax.numpy as jnp
@jax.jit
def step(w, x, lr):
    return w - lr * jax.grad(lambda w: jnp.mean((x @ w) ** 2))(w)

w, lr = jnp.ones(8), 0.1
for epoch in range(3):
    for i in range(0, 100, 32):          # the last batch has 4 rows
        w = step(w, data[i:i + 32], lr)
    lr = lr * jnp.float32(0.5)           # a Python float, then an array
"""


def reasons(ledger: L.Ledger, function: str) -> list[tuple[str, str | None]]:
    return [(c.reason.kind, c.reason.argument) for c in ledger.watched
            if c.function == function]


# -- 4. ties broken as JAX breaks them -----------------------------------------------------


def test_a_tie_between_two_earlier_compiles_goes_the_same_way_whatever_their_order():
    """The short batch with a strong `lr` differs in one place from both the short batch
    with a weak `lr` and the full batch with a strong one: which reason it got followed
    the order of JAX's cache ("weak type 2×, shape 1×" twice, the reverse once)."""
    seen: list[tuple[object, list[object]]] = []

    class Keys(logging.Filter):
        def filter(self, record):
            frame = _compat._running(_compat.EXPLAIN, sys._getframe())
            if frame is not None and "key" in frame.f_locals:  # a function seen before
                seen.append((frame.f_locals["key"], list(frame.f_locals["keys"])))
            return True

    logger = logging.getLogger(_compat.CACHE_MISS_LOGGER)
    keys = Keys()
    logger.addFilter(keys)
    try:
        with jitmagic.watch() as w:
            exec(DOCS_EXAMPLE, {"data": np.ones((100, 8), np.float32)})
    finally:
        logger.removeFilter(keys)
    tied = [(key, earlier) for key, earlier in seen if len(earlier) >= 3]
    assert tied
    for key, earlier in tied:
        assert _compat.closest_differences(key, earlier) == \
            _compat.closest_differences(key, earlier[::-1])
    assert reasons(w.ledger, "step") == [(K.FIRST, None), (K.SHAPE, "x"),
                                         (K.WEAK_TYPE, "lr"), (K.WEAK_TYPE, "lr")]


def test_the_docs_example_gives_the_same_ledger_on_five_runs(ip):
    ip.user_ns["data"] = np.ones((100, 8), np.float32)
    said = []
    for _ in range(5):
        with capture_output():
            ledger = ip.run_cell_magic("jitwatch", "--no-plot -o", DOCS_EXAMPLE)
        said.append(reasons(ledger, "step"))
    assert said == [said[0]] * 5
    assert said[0].count((K.WEAK_TYPE, "lr")) == 2 and said[0].count((K.SHAPE, "x")) == 1


# -- 5. every difference JAX names ---------------------------------------------------------


def _model():
    """An NNX model with dropout, as a step with a static `train` flag takes it."""
    from flax import nnx

    class Model(nnx.Module):
        def __init__(self, rngs):
            self.lin = nnx.Linear(3, 2, rngs=rngs)
            self.drop = nnx.Dropout(0.5, rngs=rngs)

        def __call__(self, x, train):
            return self.drop(self.lin(x), deterministic=not train)

    return Model(nnx.Rngs(0))


def test_every_difference_jax_names_is_shown_not_the_first_alone(tmp_path):
    """JAX names every differing argument; the watch said '(and 1 more argument at once:
    JAX names the first)', and the one dropped says what happened: `train` passed by
    keyword, then by position. A static flag flipped with a short batch read 'other of
    `input path [0][2]`' (the pytree's line read as a type's)."""
    from flax import nnx

    model = _model()

    @nnx.jit(static_argnames="train")
    def train_step(model, x, train):
        return model(x, train).sum()

    with jitmagic.watch() as w:
        train_step(model, jnp.ones((8, 3)), train=True)
        train_step(model, jnp.ones((8, 3)), True)      # by position now
        train_step(model, jnp.ones((3, 3)), False)     # evaluation on a short batch
    moved, evaluated = [c.reason for c in w.ledger.watched
                        if c.function == "train_step"][1:]
    assert (moved.kind, moved.argument, moved.before, moved.after, moved.also) == (
        K.KEYWORD, "train", "by keyword", "by position", ())  # the tuple's length with it
    assert (evaluated.kind, evaluated.argument, evaluated.before, evaluated.after) == \
        (K.STATIC, "train", "True", "False")
    assert [(c.kind, c.argument, c.before, c.after) for c in evaluated.also] == \
        [(K.SHAPE, "x", "f32[8,3]", "f32[3,3]")]
    text = str(w)
    assert "keyword argument `train`: by keyword → by position: 1×" in text
    assert "static value of `train`: True → False; and shape of `x`: f32[8,3] → f32[3,3]" \
        in text
    assert "JAX names the first" not in text
    saved = tmp_path / "ledger.json"
    jitmagic.save(w.ledger, saved)
    assert str(jitmagic.load(saved)).splitlines()[1:] == str(w).splitlines()[1:]


def test_two_arguments_that_change_at_once_are_both_named():
    @jax.jit
    def pair_loss(pred, target):
        return jnp.mean((pred - target) ** 2)

    with jitmagic.watch() as w:
        for n in (16, 16, 5):  # the short last batch: both arguments shrink
            pair_loss(jnp.ones(n), jnp.zeros(n))
    assert "shape of `pred`: f32[16] → f32[5]; and shape of `target`: f32[16] → f32[5]" \
        in str(w)


# -- 6. sharding and devices ---------------------------------------------------------------

SHARDED = '''
import json
import jax, jax.numpy as jnp
import jitmagic
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4,), ("data",))
batches = NamedSharding(mesh, P("data"))

@jax.jit
def step(w, x):
    return w - 0.1 * jnp.mean((x @ w) ** 2) * w

def train(place_first):
    w = jnp.ones((4, 2))
    if place_first:  # the fix, as printed: placed once, where the output comes back
        w = jax.device_put(w, NamedSharding(mesh, P()))
    for i in range(3):
        x = jax.device_put(jnp.full((8, 4), 0.1 * (i + 1)), batches)
        w = step(w, x)
    return float(w.sum())

with jitmagic.watch() as as_written:
    written = train(False)
step.clear_cache()
with jitmagic.watch() as fixed:
    kept = train(True)

def evaluate(place_last):  # the last batch left on one device, then the fix as printed
    w = jax.device_put(jnp.ones((4, 2)), NamedSharding(mesh, P()))
    for i in range(3):
        x = jnp.full((8, 4), 0.1 * (i + 1))
        if i < 2 or place_last:
            x = jax.device_put(x, NamedSharding(mesh, P('data')))
        w = step(w, x)
    return float(w.sum())

step.clear_cache()
with jitmagic.watch() as unplaced:
    batch_written = evaluate(False)
step.clear_cache()
with jitmagic.watch() as placed:
    batch_kept = evaluate(True)
double = jax.jit(lambda v: v * 2)
with jitmagic.watch() as moved:
    double(jnp.ones(3))
    double(jax.device_put(jnp.ones(3), jax.devices()[1]))  # committed to another device
print(json.dumps({"written": written, "kept": kept, "text": str(as_written),
                  "reasons": [[c.reason.kind, c.reason.argument]
                              for c in as_written.ledger.watched if c.function == "step"],
                  "fixed": [r.compiles for r in fixed.ledger.functions()
                            if r.function == "step"],
                  "moved": [c.reason.kind for c in moved.ledger.watched
                            if c.function == "<lambda>"], "moved_text": str(moved),
                  "batch": [batch_written, batch_kept, str(unplaced),
                            sum(r.compiles for r in placed.ledger.functions()
                                if r.function == "step")]}))
'''


def test_a_parameter_that_comes_back_sharded_is_a_sharding_change_with_its_fix(tmp_path):
    """A device_put onto a mesh read 'other of `w`', 'fix: JAX's own words are below',
    and a move to another device 'JAX gave no reason'. The printed fix (place it once
    where the output comes back) compiles once and keeps the result."""
    import json
    import os
    import subprocess

    script = tmp_path / "sharded.py"
    script.write_text(SHARDED)
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=300, check=True)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["reasons"] == [[K.FIRST, None], [K.SHARDING, "w"]]
    assert "sharding of `w`: f32[4,2]({}) → f32[4,2]({Explicit: ('data',)})" in got["text"]
    assert "fix: place `w` once, before the loop, where the jitted function's output comes " \
           "back" in got["text"]
    assert "JAX's own words are below" not in got["text"]
    assert got["fixed"] == [1] and got["kept"] == got["written"]
    assert got["moved"] == [K.FIRST, K.SHARDING]
    assert "sharding or devices of the arguments (the same types: JAX reused its trace)" \
        in got["moved_text"]
    # an input batch split over `data` on two calls, left unplaced on the third: the fix
    # keeps its split (not "where the output comes back", not a replicated example)
    written, kept, said, compiles = got["batch"]
    assert "sharding of `x`: f32[8@data,4]({Explicit: ('data',)}) → f32[8,4]({})" in said
    assert "fix: place `x` the same way on every call, split as on its other calls: " \
           "`jax.device_put(x, NamedSharding(mesh, P('data')))` before each call" in said
    assert "output comes back" not in said and "P())" not in said
    assert compiles == 1 and kept == written


# -- 8. values, cells and fields as they are -----------------------------------------------


def test_values_that_do_not_follow_each_other_are_not_joined_into_one_history():
    """`f32[3] → f32[4] → f32[4]({}) → f32[2,2]({})` read as one argument's history; the
    third compile was compared with the first, not the second."""
    @jax.jit
    def total(x):
        return x.sum()

    with jitmagic.watch() as w:
        for shape in ((3,), (4,), (2, 2), (5,)):
            total(jnp.ones(shape))
    (row,) = [r for r in w.ledger.functions() if r.function == "total"]
    (shape,) = [r for r in row.reasons if r.kind == K.SHAPE]
    assert R.histories(shape.pairs) == [("f32[3]", "f32[4]"), ("f32[3]({})", "f32[2,2]({})"),
                                        ("f32[3]", "f32[5]")]  # none continues another
    said = str(w)
    assert "f32[3] → f32[4]; f32[3]({}) → f32[2,2]({}); f32[3] → f32[5]" in said
    assert "sharding" not in said  # a new rank re-writes the placement: not a sharding
    assert R.histories([("2", "3"), ("3", "4")]) == [("2", "3", "4")]


def test_a_watch_in_a_notebook_names_cells_as_the_magic_does(ip):
    """`print(w)` showed the kernel's temporary file where `%%jitwatch` shows `Cell
    In[N]`."""
    with capture_output():
        defined = ip.run_cell("import jax, jax.numpy as jnp\n"
                              "celled = jax.jit(lambda x: x * 2)\n", store_history=True)
        ip.run_cell("import jitmagic\nwith jitmagic.watch() as w:\n"
                    "    for n in (2, 3):\n        celled(jnp.ones(n))\n",
                    store_history=True)
    said = str(ip.user_ns["w"])
    assert f"defined at Cell In[{defined.execution_count}]:2" in said
    assert "<ipython-input-" not in said


class _Coloured:
    """A static value whose long repr holds terminal escapes (rich's colours, a screen
    clear) next to where two values differ."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __hash__(self) -> int:
        return hash(self.n)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Coloured) and other.n == self.n

    def __repr__(self) -> str:
        return f"\x1b[2JConfig({'layer, ' * 12}\x1b[31mdepth={self.n}\x1b[0m)"


def test_a_long_static_values_terminal_escapes_are_shown_escaped():
    scaled = jax.jit(lambda x, c: x * c.n, static_argnums=1)
    with jitmagic.watch(live=False) as w:
        for n in (1, 2):
            scaled(jnp.ones(3), _Coloured(n))
    text = str(w)
    assert "static value" in text and "depth=1" in text and "depth=2" in text
    assert "\x1b" not in text
    assert "\\x1b[31mdepth=1\\x1b[0m)" in text

"""Each recompile said as it happens: a 200-step loop whose schedule turns the learning
rate from a Python float into an array at step 2 shows the line before step 3 begins,
from the block (stderr), the magic (the cell's output) and the command (stderr). Checked
by what was written when the loop reached each step, never by a time."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import pytest
from IPython.utils.capture import capture_output

import jitmagic

LOOP = '''\
import sys
import jax, jax.numpy as jnp

def schedule(step):  # a warm-up of two steps at a Python float, then an array
    return 0.1 if step < 2 else 0.1 * jnp.float32(0.99) ** (step - 2)

@jax.jit
def train_step(w, x, lr):
    return w - lr * jax.grad(lambda w: jnp.mean((x @ w) ** 2))(w)

w, x = jnp.ones(4), jnp.ones((8, 4))
for step in range(200):
    seen(step)
    w = train_step(w, x, schedule(step))
'''


def test_the_block_says_a_recompile_on_stderr_before_the_next_step(monkeypatch):
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    written: list[int] = []
    with jitmagic.watch() as w:
        exec(LOOP, {"seen": lambda step: written.append(stderr.getvalue().count("\n"))})
    lines = stderr.getvalue().splitlines()
    assert lines == [lines[0]] and lines[0].startswith(
        "jitwatch: `train_step` compiles again (recompile 1 here)")
    assert "weak type of `lr`: f32[] (weak) → f32[]" in lines[0]
    assert written[:4] == [0, 0, 0, 1]  # written during step 2, before step 3 began
    assert len(written) == 200 and w.ledger.again >= 1


def test_the_magic_shows_the_line_in_the_cell_before_the_next_step(ip):
    with capture_output() as cap:
        ip.user_ns["seen"] = lambda step: shown.append(
            [o.data.get("text/plain", "") for o in cap.outputs])
        shown: list[list[str]] = []
        ip.run_cell_magic("jitwatch", "--no-plot", LOOP)
    live = [t for t in shown[3] if t.startswith("jitwatch: `train_step` compiles again")]
    assert live and "at line 15" in live[0]  # the cell's line (%%jitwatch is line 1)
    assert not [t for t in shown[2] if "compiles again" in t]


def test_a_loop_that_recompiles_every_step_is_said_without_a_flood(monkeypatch):
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    grow = jax.jit(lambda x: x.sum())
    with jitmagic.watch():
        for n in range(1, 27):  # 25 recompiles
            grow(jnp.ones(n))
    recompiles = [int(line.split("(recompile ")[1].split()[0])
                  for line in stderr.getvalue().splitlines()]
    assert recompiles == [*range(1, 11), 20]


def test_each_function_counts_its_own_recompiles_and_a_flood_hides_no_other(monkeypatch):
    """A data step that recompiles on every batch length, and an eval step that recompiles
    once late: the eval's line says its own first recompile (and the run's count), though
    the run is past the lines the data step gets."""
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)

    @jax.jit
    def pad_batch(x):
        return x.sum()

    @jax.jit
    def evaluate(w, x):
        return (w * x).mean()

    with jitmagic.watch():
        for n in range(1, 16):  # 14 recompiles of pad_batch
            pad_batch(jnp.ones(n))
        evaluate(jnp.ones(3), jnp.ones(3))
        evaluate(jnp.ones(4), jnp.ones(4))  # its first recompile, the run's 15th
    lines = stderr.getvalue().splitlines()
    assert lines[-1].startswith("jitwatch: `evaluate` compiles again "
                                "(its recompile 1; 15 in the run)")
    assert len(lines) == 11 and lines[9].startswith(
        "jitwatch: `pad_batch` compiles again (recompile 10 here)")


def test_live_false_writes_nothing(monkeypatch):
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    grow = jax.jit(lambda x: x.sum())
    with jitmagic.watch(live=False) as w:
        for n in (1, 2):
            grow(jnp.ones(n))
    assert stderr.getvalue() == "" and w.ledger.again == 1


@pytest.mark.slow
def test_the_command_says_a_recompile_on_stderr_before_the_next_step(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("def seen(step):\n    print('step', step, file=sys.stderr, flush=True)\n"
                      + textwrap.dedent(LOOP).replace("import sys\n", "", 1)
                      .replace("import jax,", "import sys\nimport jax,", 1))
    done = subprocess.run([sys.executable, "-m", "jitmagic", "watch", str(script)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    err = done.stderr.splitlines()
    said = next(i for i, line in enumerate(err) if "compiles again" in line)
    assert err[said - 1] == "step 2" and err[said + 1] == "step 3"
    assert "at line 16" in err[said]

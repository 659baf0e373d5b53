"""jitmagic's figures on an accelerator, each beside a by-hand run in the same command.

For the TPU (or any machine): one step per process, one after the other (one process at
a time can hold a TPU), each with its own time limit, its output in ``$OUT/<step>.txt``
(or /tmp), and a summary line per step at the end:

* ``seed-by-hand`` / ``demo``: the discussion's example, 5 alternating cold first calls
  by hand, then ``python -m jitmagic demo`` at the default options (decided? within 10%
  of the hand's ratio?);
* ``mlp-by-hand`` / ``mlp``: a 24-block residual MLP in bf16 (512 → 2048 → 512, batch
  256), by hand and through ``python -m jitmagic``;
* ``why``: ``--why`` on the seed (``--lines``, ``--cache``, ``--xla``, ``--effort``);
* ``watch``: ``python -m jitmagic watch`` on a training loop with a short last batch
  and an eager metric, beside JAX's own count of its compiles (``jax_log_compiles``).

    python benchmarks/tpu_figures.py [--steps demo,mlp,...] [--limit SECONDS]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

MLP = """\
import jax, jax.numpy as jnp
def block(p, x):
    h = jax.nn.gelu(x @ p["w1"])
    return x + h @ p["w2"]
def mlp(params, x):
    for p in params:
        x = block(p, x)
    return x.sum()
keys = jax.random.split(jax.random.key(0), 24)
params = [{"w1": jax.random.normal(k, (512, 2048), jnp.bfloat16) * 0.02,
           "w2": jax.random.normal(k, (2048, 512), jnp.bfloat16) * 0.02} for k in keys]
x = jnp.ones((256, 512), jnp.bfloat16)
mlp(params, x)
"""

MLP_BY_HAND = MLP.rsplit("\n", 2)[0] + """
import statistics, time
def nested(params, x):
    for p in params:
        x = jax.jit(block)(p, x)
    return x.sum()
seconds = {"flat": [], "nested": []}
for i in range(3):
    for name, fn in [("flat", mlp), ("nested", nested)][:: 1 if i % 2 == 0 else -1]:
        jax.clear_caches()
        start = time.perf_counter()
        jax.block_until_ready(jax.jit(fn)(params, x))
        seconds[name].append(time.perf_counter() - start)
flat, nested = (statistics.median(seconds[k]) for k in ("flat", "nested"))
print(f"by hand: flat {flat:.2f} s, nested {nested:.2f} s: {flat / nested:.2f}x", seconds)
"""

LOOP = """\
import jax, jax.numpy as jnp
def loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)
@jax.jit
def step(w, x, y, lr):
    return w - lr * jax.grad(loss)(w, x, y)
w = jnp.zeros((16, 1))
data = jnp.ones((100, 16)), jnp.ones((100, 1))
for epoch in range(3):
    for start in range(0, 100, 32):  # a short last batch of 4
        xb, yb = data[0][start:start + 32], data[1][start:start + 32]
        w = step(w, xb, yb, 0.1)
        print(float(jnp.mean(w)))  # an eager metric
"""


def steps(folder: str) -> dict[str, list[str]]:
    """Each step's command line (the cells written into ``folder``)."""
    files = {"mlp.py": MLP, "mlp_by_hand.py": MLP_BY_HAND, "loop.py": LOOP}
    for name, text in files.items():
        with open(os.path.join(folder, name), "w") as out:
            out.write(text)
    py, at = sys.executable, lambda name: os.path.join(folder, name)
    return {
        "seed-by-hand": [py, os.path.join(HERE, "seed_by_hand.py"), "5"],
        "demo": [py, "-m", "jitmagic", "demo", "--save", at("demo.json")],
        "mlp-by-hand": [py, at("mlp_by_hand.py")],
        "mlp": [py, "-m", "jitmagic", at("mlp.py"), "--save", at("mlp.json")],
        "why": [py, "-m", "jitmagic", "demo", "--why", "--save", at("why.json")],
        "watch": [py, "-m", "jitmagic", "watch", at("loop.py")],
        "watch-by-hand": [py, "-c", "import jax; jax.config.update('jax_log_compiles', True)"
                          f"; exec(open({at('loop.py')!r}).read())"],
    }


def run(name: str, command: list[str], limit: float, out: str) -> str:
    """Run one step; its output to ``out``/``name``.txt; its summary line."""
    begun = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit)
        text, rc = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:
        text, rc = f"{exc.stdout or ''}{exc.stderr or ''}\n(timed out)", -1
    with open(os.path.join(out, f"{name}.txt"), "w") as saved:
        saved.write(text if isinstance(text, str) else text.decode())
    return f"{name}: rc {rc}, {time.perf_counter() - begun:.0f} s; {summary(name, str(text))}"


def summary(name: str, text: str) -> str:
    """The line of a step's output that says what it found."""
    if name == "watch-by-hand":
        return f"{len(re.findall(r'Compiling ', text))} compiles logged by JAX"
    pattern = {"demo": r"^Nested jit.*$", "mlp": r"^Nested jit.*$", "why": r"^Nested jit.*$",
               "watch": r"^.*compile.*$"}.get(name, r"^(by hand|backend).*$")
    found = re.search(pattern, text, re.MULTILINE)
    return found.group(0)[:400] if found else text.strip().splitlines()[-1][:400] if text else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="")
    parser.add_argument("--limit", type=float, default=240)
    args = parser.parse_args()
    out = os.environ.get("OUT") or tempfile.mkdtemp(prefix="tpu_figures_")
    os.makedirs(out, exist_ok=True)
    every = steps(out)
    chosen = [s for s in args.steps.split(",") if s] or list(every)
    for name in chosen:
        print(run(name, every[name], args.limit, out), flush=True)


if __name__ == "__main__":
    main()

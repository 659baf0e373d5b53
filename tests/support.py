"""Plain test data shared by several test modules (imported normally; fixtures live in conftest).

Cells are strings so that ``pytest.mark.parametrize`` can build variants of them at import time;
:func:`variant` and :func:`comparison` build the records tests need by hand.
"""

from __future__ import annotations

from jitmagic.model.comparison import Comparison
from jitmagic.model.rows import PHASES, VariantResult

#: A tiny version of the README's example: cheap to trace, still clearly nested.
SMALL_CELL = """\
import jax.numpy as jnp
def layer(x):
    return sum(i * jnp.sin(x) for i in range(8))
def model(x):
    return sum(layer(x) for _ in range(4))
model(jnp.ones(16))
"""

#: The ``--vmap`` example, made small: 2 matmul steps on 8×8.
VMAP_CELL = """\
import jax.numpy as jnp
def f(x):
    for _ in range(2):
        x = jnp.tanh(x @ x.T) + x
    return x.sum()
f(jnp.ones((8, 8)))
"""

#: The fewest repeats and calls that still measure every phase.
FAST = "-r 1 -n 2"

#: A test file whose fixture measures nothing: ``measure`` returns the report in
#: ``JITMAGIC_REPORT`` (crafted by the outer test), so a comparison costs no compile.
CRAFTED = """
import os
import jitmagic
import jitmagic.frontends.pytest_plugin as plugin

def test_model(jitcompare, monkeypatch):
    crafted = jitmagic.load(os.environ["JITMAGIC_REPORT"])
    monkeypatch.setattr(plugin, "measure", lambda fn, *a, **k: crafted)
    assert jitcompare(len, [1]) is crafted
"""


# --- records built by hand -----------------------------------------------------------


def variant(name: str, samples: dict[str, list[float]] | None = None, *,
            every: float | None = None, **fields) -> VariantResult:
    """A variant as if measured: ``samples`` as given and, with ``every``, each phase they
    leave out taking ``every`` seconds in each run (as many runs as the longest list
    given, else one). Other keywords are ``VariantResult`` fields; the nested variant
    nests ``layer`` unless ``helpers`` says otherwise."""
    samples = {key: list(xs) for key, xs in (samples or {}).items()}
    if every is not None:
        runs = max(map(len, samples.values()), default=1)
        for phase in PHASES:
            samples.setdefault(phase, [every] * runs)
    fields.setdefault("helpers", ("layer",) if name == "nested" else ())
    return VariantResult(name, samples, **fields)


def comparison(flat: VariantResult | dict | None = None,
               nested: VariantResult | dict | None = None, *, entry: str = "model",
               outputs_match: bool | None = True, every: float | None = None,
               **fields) -> Comparison:
    """A comparison as if measured: ``flat`` and ``nested`` are variants, or their samples
    (made variants by :func:`variant` with ``every``). Other keywords are
    ``Comparison`` fields."""
    variants = {name: v if isinstance(v, VariantResult) else variant(name, v, every=every)
                for name, v in (("flat", flat), ("nested", nested))}
    return Comparison(entry, variants, outputs_match, **fields)

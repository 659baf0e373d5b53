"""Issue 58: ``%%jitwatch`` answers first. What compiled again, and its fix, come before
the table; the eager ops that compiled once (set-up, no fix applies) are folded (``-v``
shows them, a page keeps them in a ``<details>``); the suggested ``%jitcompare`` measures
one step of the loop, not the value its variable was left at (real JAX, a real shell)."""

from __future__ import annotations

from test_watch import watched

from jitmagic.render.ledger.words import shown as named

#: A training loop whose step recompiles (a short last batch, a weak ``lr``), among the
#: one-off eager ops of its set-up and its printing (shapes no other test uses: JAX
#: caches an eager op's compile for the process).
LOOP = """\
import numpy as np
import jax, jax.numpy as jnp
@jax.jit
def step(w, x, lr):
    return w - lr * jax.grad(lambda w: jnp.mean((x @ w) ** 2))(w)
data = np.ones((103, 13), np.float32)
w, lr = jnp.ones(13), 0.1
for epoch in range(3):
    for i in range(0, 103, 37):
        w = step(w, jnp.asarray(data[i:i + 37]), lr)
    lr = lr * jnp.float32(0.5)
print(float(jnp.linalg.norm(w)), int(jnp.arange(11).sum()))
"""


def _ledger(cap) -> str:
    """The ledger's text as the cell showed it (no print of the cell's, no live line)."""
    (said,) = [o.data["text/plain"] for o in cap.outputs if "jitwatch:" in o.data["text/plain"]
               and "compiles took" in o.data["text/plain"]]
    return said


def _table_rows(text: str) -> list[str]:
    """The names in the table's first column."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("function "))
    rows = []
    for line in lines[start + 1:]:
        if not line or line.startswith(("…", "note:")):
            break
        rows.append(line.split("  ")[0])
    return rows


def test_the_recompile_and_its_fix_come_first_and_one_off_eager_ops_are_folded(ip):
    ledger, cap = watched(ip, LOOP)
    text = _ledger(cap)
    assert text.startswith("jitwatch: `step` (defined at line 4) compiled again 3 times (")
    first, total = text.splitlines()[0].split(" In all, ")
    eager = sum(r.again for r in ledger.functions() if r.eager)
    times = f"{eager} time{'s' * (eager != 1)}"
    assert first.endswith(f"; eager ops (jnp calls outside any jit) {times}: why, and what "
                          "to do, below.")
    assert total.startswith(f"{ledger.count} compiles took ")
    assert total.endswith("each function's first compile included.")
    assert text.index("fix: pad a short batch") < text.index("\nfunction ")
    once = [r for r in ledger.functions() if r.eager and not r.again]
    assert len(once) >= 4  # jnp.asarray's stage, norm, iota, ...: set-up and printing
    assert sorted(_table_rows(text)) == sorted(
        ["step"] + [named(r.function, r.call_text) for r in ledger.functions()
                    if r.eager and r.again])
    assert f"… and {len(once)} eager ops that compiled once (" in text
    assert "jnp calls outside any jit): -v shows them" in text
    html = "".join(o.data.get("text/html", "") for o in cap.outputs)
    assert "<details><summary>… and" in html and "norm" in html.split("<details>")[1]


def test_verbose_shows_every_row(ip):
    ledger, cap = watched(ip, LOOP, "--no-plot -o -v")
    text = _ledger(cap)
    assert sorted(_table_rows(text)) == sorted(
        named(r.function, r.call_text) if r.eager else r.function for r in ledger.functions())
    assert "-v shows them" not in text
    assert "<details>" not in "".join(o.data.get("text/html", "") for o in cap.outputs)


def test_the_suggested_jitcompare_measures_a_step_not_the_loops_last_value(ip):
    _, cap = watched(ip, LOOP)
    text = _ledger(cap)
    assert "%jitcompare step(w, jnp.asarray(data[0:0 + 37]), lr)" in text
    assert "data[i:i + 37]), lr) measures" not in text


def test_a_call_that_reads_another_loops_variable_gets_no_jitcompare_line(ip):
    _, cap = watched(ip, LOOP.replace("for i in range(0, 103, 37):\n        w = step("
                                      "w, jnp.asarray(data[i:i + 37]), lr)",
                                      "for x in (data[:37], data[37:74], data[74:]):\n"
                                      "        w = step(w, jnp.asarray(x), lr)"))
    text = _ledger(cap)
    assert "fix: pad a short batch" in text and "%jitcompare" not in text


def test_the_chart_leaves_the_folded_eager_ops_out(ip, monkeypatch):
    from jitmagic.render import ledger as render_ledger
    from jitmagic.render.charts import ledger as chart_module

    drawn = []
    monkeypatch.setattr(chart_module, "png", lambda led, words: drawn.append(led) or b"")
    ledger, _ = watched(ip, LOOP.replace("13", "19"))  # shapes of its own: eager ops compile
    render_ledger.bundle(ledger, plot=True)
    render_ledger.bundle(ledger, plot=True, verbose=True)
    brief, full = ({r.function for r in d.functions()} for d in drawn)
    assert full == {r.function for r in ledger.functions()}
    assert brief == {r.function for r in ledger.functions() if not r.eager or r.again}
    assert brief < full

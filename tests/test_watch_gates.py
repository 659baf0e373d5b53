"""The recompile gate right both ways (issue 51): a user's own jit of a JAX function is
theirs and counts, an eager ``jnp`` op is not, however JAX's caches stand; in the block,
the magic, the command and the pytest marker. Real JAX runs; no timing is asserted."""

from __future__ import annotations

import textwrap

import jax
import jax.numpy as jnp
import pytest
from IPython.utils.capture import capture_output

import jitmagic
from jitmagic.frontends.watch import command
from jitmagic.model import ledger as L
from jitmagic.model.ledger import compiles as K
from jitmagic.model.ledger import rows as R

pytest_plugins = ["pytester"]


def rows(ledger: L.Ledger) -> dict[str, R.FunctionRow]:
    return {r.function: r for r in ledger.functions()}


# -- 1. a user's jit of a JAX function is the user's --------------------------------------


def test_a_users_jit_of_a_jax_function_is_counted_not_filed_as_an_eager_op():
    """`jax.jit(jnp.linalg.norm)` traces a function in JAX's own files: it was filed as
    an eager op, not counted, and the gate held on 4 compiles of each."""
    norm, softmax = jax.jit(jnp.linalg.norm), jax.jit(jax.nn.softmax)
    with pytest.raises(jitmagic.RecompiledError) as failed, \
            jitmagic.watch(fail_after_warmup=1) as w:
        for n in (3, 4, 5, 6):
            norm(jnp.ones(n))
            softmax(jnp.ones(n))
    found = rows(w.ledger)
    for name in ("norm", "softmax"):
        assert not found[name].eager and (found[name].compiles, found[name].again) == (4, 3)
    said = failed.value.sentences
    assert "`norm` compiled 4 times here, 3 after its warm-up of 1" in said
    assert "`softmax` compiled 4 times here, 3 after its warm-up of 1" in said
    late = [c for c in w.ledger.watched if c.function == "norm"][1:]
    assert {c.reason.kind for c in late} == {K.UNEXPLAINED}  # JAX explains none of its own


def test_the_command_fails_a_loop_whose_jitted_solve_recompiles_as_the_system_grows(
        tmp_path, capsys):
    script = tmp_path / "grow.py"
    script.write_text(textwrap.dedent("""\
        import jax, jax.numpy as jnp
        solve = jax.jit(jnp.linalg.solve)
        for n in range(2, 6):  # the system grows a row a step
            a = jnp.eye(n) * 2.0 + 0.1
            x = solve(a, jnp.ones(n))
        print("solved", x.shape)
    """))
    status = command.main(["--fail-after-warmup", "1", str(script)])
    out = capsys.readouterr().out
    assert status == 1, out
    assert "solved (5,)" in out and "Gate FAILED" in out
    assert "`solve` compiled 4 times here, 3 after its warm-up of 1" in out
    assert "at line 5" in out


# -- 2. an eager op is eager, whatever JAX cached -----------------------------------------


@jax.jit
def _loss(w, x):
    return jnp.mean((x @ w) ** 2)


@jax.jit
def _step(w, x):
    return w - 0.1 * jax.grad(_loss)(w, x)


def _warm(rows_: int) -> tuple[jax.Array, jax.Array]:
    """A warm step (the docs' fixture pattern): its jitted loss traced `jnp.mean` on the
    shape the loop's metric takes, so JAX has that trace cached."""
    w, x = jnp.ones(4), jnp.ones((rows_, 4))
    return _step(w, x), x


def test_an_eager_metric_whose_trace_jax_cached_is_an_eager_op_not_a_jitted_function():
    """The eager `jnp.mean` fires no trace event (JAX cached `_mean`'s trace inside the
    jitted loss): it was counted as a jitted function (defined at —, reason first) and
    failed the docs' own `fail_after_warmup=0` pattern."""
    w, x = _warm(11)
    with jitmagic.watch(fail_after_warmup=0) as watch:
        for _ in range(3):
            w = _step(w, x)
            metric = jnp.mean((x @ w) ** 2)  # logged eagerly, as loops do
    assert float(metric) >= 0
    found = rows(watch.ledger)
    assert "_mean" in found and found["_mean"].eager
    assert found["_mean"].stage_seconds.get("trace_s") is None  # no trace: JAX's cache
    assert watch.ledger.over_gate() == []
    assert "Gate held" in str(watch)


def test_the_magic_holds_on_an_eager_metric_after_an_earlier_cell_warmed_up(ip):
    ip.user_ns.update(step=_step, loss=_loss)
    with capture_output():
        ip.run_cell("import jax.numpy as jnp\nw, x = jnp.ones(4), jnp.ones((13, 4))\n"
                    "w = step(w, x)\n")  # an earlier cell: the warm-up
        result = ip.run_cell("%%jitwatch --no-plot --fail-after-warmup 0\n"
                             "for _ in range(3):\n    w = step(w, x)\n"
                             "    print(float(jnp.mean((x @ w) ** 2)))\n")
    assert result.error_in_exec is None, result.error_in_exec


MARKED = '''
import jax, jax.numpy as jnp
import pytest
import jitmagic

@jax.jit
def loss(w, x):
    return jnp.mean((x @ w) ** 2)

@jax.jit
def step(w, x):
    return w - 0.1 * jax.grad(loss)(w, x)

def test_an_eager_metric_after_warm_up(jitwatch):
    w, x = jnp.ones(4), jnp.ones((17, 4))
    w = step(w, x)
    with jitwatch(fail_after_warmup=0):
        for _ in range(3):
            w = step(w, x)
            jnp.mean((x @ w) ** 2)

@pytest.mark.jitwatch(fail_after_warmup=1)
def test_a_jitted_norm_that_recompiles():
    norm = jax.jit(jnp.linalg.norm)
    for n in (37, 38):  # shapes no other test compiled it for
        norm(jnp.ones(n))
'''


def test_the_marker_and_fixture_judge_both_ways(pytester, monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_loop=MARKED)
    result = pytester.runpytest_inprocess("-p", "jitmagic.frontends.watch.pytest_plugin",
                                          "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "FAILED test_loop.py::test_a_jitted_norm_that_recompiles" in out
    assert "`norm` compiled 2 times here, 1 after its warm-up of 1" in out


def test_eager_calls_of_jaxs_own_jits_stay_eager():
    """JAX's own jits called eagerly (a decorated public function, `jax.random`'s, an
    eager `grad` of a jnp function) are eager ops; the user's `tree.map` of their jit and
    their `.lower()` are theirs."""
    mine = jax.jit(lambda a, b: a * b)
    with jitmagic.watch() as w:
        jnp.linalg.solve(jnp.eye(3) * 3.0, jnp.ones(3))
        jax.random.normal(jax.random.key(7), (19,))
        jax.grad(jnp.mean)(jnp.ones(23))
        jax.tree.map(mine, {"a": jnp.ones(29)}, {"a": jnp.ones(29)})
        jax.jit(lambda v: v + 5).lower(jnp.ones(31)).compile()
    found = rows(w.ledger)
    assert found["solve"].eager and found["_normal"].eager
    lambdas = [r for r in w.ledger.functions() if r.function == "<lambda>"]
    assert len(lambdas) == 2 and not any(r.eager for r in lambdas)
    assert all(r.eager for r in w.ledger.functions() if "mean" in r.function)


# -- 3. eager control flow over a function made anew ---------------------------------------


def test_an_eager_scan_whose_body_is_redefined_each_pass_is_a_new_function_object(ip):
    """It read 'eager op on new shapes or dtypes': no shape changed, and JAX's own words
    say the body is being redefined. The printed fix (define it once, pass what it reads
    as the carry) compiles once and gives the same totals; defined once but still reading
    the loop's value, it would compile once and keep the first value."""
    with capture_output() as cap:
        ledger = ip.run_cell_magic("jitwatch", "--no-plot -o", """\
import jax, jax.numpy as jnp
xs = jnp.arange(1.0, 6.0)
totals = []
for scale in (1.0, 0.5, 0.25):
    def body(c, x):
        return c + x * scale, None
    total, _ = jax.lax.scan(body, 0.0, xs)
    totals.append(float(total))
    jax.lax.cond(total > 0, lambda v: v + scale, lambda v: v - scale, total)
""")
    anew = [c for c in ledger.watched if c.reason.kind == K.NEW_FUNCTION]
    assert {(c.function, c.reason.argument) for c in anew} == {("scan", "body"),
                                                              ("cond", "<lambda>")}
    assert all(c.eager for c in anew) and len(anew) == 4
    text = cap.stdout + "".join(o.data.get("text/plain", "") for o in cap.outputs)
    assert "`scan`: 2×" in text and "a new function object each time (`body`" in text
    assert "at line 8  total, _ = jax.lax.scan(body, 0.0, xs)" in text
    assert "on new shapes or dtypes" not in text
    assert "fix: define each function made anew once, before the loop, and pass what it " \
           "reads from the loop as its arguments (a scan's carry" in text
    assert ip.user_ns["totals"] == [15.0, 7.5, 3.75]

    with jitmagic.watch() as fixed:  # the fix as printed
        def carried(c, x):
            total, s = c
            return (total + x * s, s), None
        kept = [float(jax.lax.scan(carried, (0.0, s), ip.user_ns["xs"])[0][0])
                for s in (1.0, 0.5, 0.25)]
    assert kept == ip.user_ns["totals"]
    assert [r.compiles for r in fixed.ledger.functions() if r.function == "scan"] == [1]

    scale = 1.0

    def hoisted(c, x):  # defined once, still reading the loop's value: stale
        return c + x * scale, None
    stale = []
    for scale in (1.0, 0.5, 0.25):  # noqa: B007 (read by hoisted)
        stale.append(float(jax.lax.scan(hoisted, 0.0, ip.user_ns["xs"])[0]))
    assert stale == [15.0, 15.0, 15.0]


# -- 9, 11, 13: a gate that cannot be set, a ledger after an error, files as asked ---------


def test_the_watchs_options_after_the_script_are_refused_not_handed_to_it(tmp_path, capsys):
    """`python -m jitmagic watch FILE.py --fail-after-warmup 1` (as the `--help` line
    read) gave the option to the script's sys.argv and exited 0 however often it
    recompiled."""
    script = tmp_path / "loop.py"
    script.write_text("import sys\nimport jax, jax.numpy as jnp\n"
                      "f = jax.jit(lambda x: x + 1)\nfor n in (2, 3):\n    f(jnp.ones(n))\n"
                      "print('argv', sys.argv[1:])\n")
    assert command.main([str(script), "--fail-after-warmup", "1"]) == 2
    said = capsys.readouterr()
    assert "--fail-after-warmup after" in said.err and "no gate would be set" in said.err
    assert "argv" not in said.out  # refused before it ran
    assert command.main([str(script), "--", "--max-compiles=3"]) == 0  # the script's own
    assert "argv ['--max-compiles=3']" in capsys.readouterr().out
    assert command.main(["--fail-after-warmup", "1", str(script)]) == 1


def test_the_command_refuses_a_page_named_json_and_one_path_for_both(tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text("x = 1\n")
    assert command.main(["--html", str(tmp_path / "page.json"), str(script)]) == 2
    assert "--html writes an HTML page file: give it a path ending in .html" in \
        capsys.readouterr().err
    same = str(tmp_path / "r.html")
    assert command.main(["--save", same, "--html", same, str(script)]) == 2
    assert not (tmp_path / "r.html").exists()
    assert command.main(["--save", str(tmp_path / "r.json"), "--html", same,
                         str(script)]) == 0
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")


def test_the_command_refuses_a_bad_save_path_before_the_script_runs(tmp_path, capsys):
    """A --save (or --html) path no report can be written to is refused before the
    script runs, as the comparison's are before measuring: it failed only after the
    whole script had run."""
    script = tmp_path / "s.py"
    ran = tmp_path / "ran"
    script.write_text(f"open({str(ran)!r}, 'w').close()\n")
    for option, path in (("--save", tmp_path / "no-such-folder" / "l.json"),
                         ("--html", tmp_path / "no-such-folder" / "l.html")):
        assert command.main([option, str(path), str(script)]) == 3
        said = capsys.readouterr()
        assert f"{option} {path}" in said.err and "does not exist" in said.err
        assert not ran.exists()  # refused before the script ran
    assert command.main(["--save", str(tmp_path / "l.json"), str(script)]) == 0
    assert ran.exists() and jitmagic.load(tmp_path / "l.json").count == 0


def test_the_ledger_is_there_after_an_error_or_ctrl_c_in_the_block():
    """`w.ledger` was None after an error in `with jitmagic.watch() as w:`, though its
    docstring says the ledger is there either way."""
    grow = jax.jit(lambda x: x * 3)
    for n, stop in ((41, ZeroDivisionError), (43, KeyboardInterrupt)):
        with pytest.raises(stop), jitmagic.watch(fail_after_warmup=0) as w:
            grow(jnp.ones(n))
            raise stop()
        assert w.ledger is not None and [r.compiles for r in w.ledger.functions()
                                         if r.function == "<lambda>"] == [1]
        assert ("Gate not checked" in str(w)) and (w.ledger.stopped is
                                                   (stop is KeyboardInterrupt))


def test_the_magic_refuses_a_page_named_json_before_running(ip, tmp_path):
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="--html writes an HTML page"):
        ip.run_cell_magic("jitwatch", f"--no-plot --html {tmp_path / 'page.json'}",
                          "ran_the_cell = 1\n")
    assert "ran_the_cell" not in ip.user_ns


def test_the_magic_says_what_a_misspelt_option_meant_as_jitcompare_does(ip):
    """Both magics read their options through the one table and say an unknown one's
    likely meaning alike (%jitwatch said argparse's bare 'unrecognized arguments')."""
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match=r"Did you mean --fail-after-warmup \(not "
                                         r"--fail-after-warmpu\)\? The options are: "
                                         r"--fail-after-warmup, --max-compiles"):
        ip.run_cell_magic("jitwatch", "--fail-after-warmpu 3", "ran_the_cell = 1\n")
    assert "ran_the_cell" not in ip.user_ns


# -- the gate's sentence ------------------------------------------------------------------


def test_the_gate_says_in_one_plain_sentence_what_was_allowed_what_happened_what_to_do():
    """A new user could not parse 'Gate FAILED, where each function compiles at most 1
    time here, its warm-up (what compiled before the watch is not counted: warmed up
    already, allow 0), eager ops not counted and at most 4 compiles in all, eager ops
    included:'. A training loop whose short last batch recompiles its step."""
    @jax.jit
    def step(w, x):
        return w - 0.1 * jax.grad(lambda w: jnp.mean((x @ w) ** 2))(w)

    data, w = jnp.ones((10, 4)), jnp.ones(4)
    with pytest.raises(jitmagic.RecompiledError), \
            jitmagic.watch(fail_after_warmup=1, max_compiles=1) as watch:
        for i in range(0, 10, 4):  # the last batch has 2 rows
            w = step(w, data[i:i + 4])
    (line,) = [ln for ln in str(watch).splitlines() if ln.startswith("Gate")]
    total = watch.ledger.count
    assert line == (f"Gate FAILED: allowed 1 compile per function (eager ops not counted) "
                    f"and 1 compile in all, but `step` compiled 2 times and {total} compiles "
                    "ran; see why each compiled again above, or raise the limit."), line
    with jitmagic.watch(fail_after_warmup=2, max_compiles=50) as held:
        for i in range(0, 10, 4):
            w = step.__wrapped__(w, data[i:i + 4]) + jax.jit(jnp.sin)(w)  # a new jit
    (line,) = [ln for ln in str(held).splitlines() if ln.startswith("Gate")]
    assert line == ("Gate held: allowed 2 compiles per function (eager ops not counted) and "
                    "50 compiles in all; no function compiled more than 1 time and "
                    f"{held.ledger.count} compiles ran."), line

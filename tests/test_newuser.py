"""What a new user tripped over: sweeps of a value the code never reads, option keywords
``compare`` does not take, ``--in-axes`` batches, loops in ``--lines``, the command's file."""

from __future__ import annotations

import copy
import json
import re

import jax
import jax.numpy as jnp
import pytest

import jitmagic
from jitmagic.frontends.command import main
from jitmagic.measure.sampling.structure import count_equations
from jitmagic.model.sweep import exponents, unchanged
from jitmagic.render.bundle import text as report_text

N_LAYERS = 2  # the global a sweep can rebind


def _layer(x):
    return jnp.sin(x) * 1.5


def _model_with_param(x, n_layers=2):
    for _ in range(n_layers):
        x = _layer(x)
    return x.sum()


def _model_with_global(x):
    for _ in range(N_LAYERS):
        x = _layer(x)
    return x.sum()


@pytest.mark.parametrize("name", ["n_layers", "NOT_READ"])
def test_sweep_of_a_name_the_code_does_not_read_warns_and_fits_nothing(name):
    result = jitmagic.sweep(name, [1, 4], _model_with_param, jnp.ones(4), repeat=1, number=1,
                            progress=False)
    assert unchanged(result)
    assert any(f"`{name}` did not change the program: every value built" in w
               for w in result.warnings)
    assert all(k is None for by_phase in exponents(result).values() for k in by_phase.values())
    assert "built the same programs: the timings do not grow with it (no trend fitted)" \
        in str(result).splitlines()[1]  # the answer, first
    text = report_text(result, verbose=True)
    assert "did not change the program" in text
    growth = [line for line in text.splitlines() if line.startswith("growth ")]
    assert growth and all("^" not in line for line in growth)


def test_sweep_of_a_global_the_code_reads_fits_and_does_not_warn():
    result = jitmagic.sweep("N_LAYERS", [1, 4], _model_with_global, jnp.ones(4), repeat=1,
                            number=1, progress=False)
    assert not unchanged(result)
    assert not any("did not change the program" in w for w in result.warnings)
    assert exponents(result)["flat"]["trace_s"] is not None


@pytest.mark.parametrize(("keyword", "instead"), [
    ("save", "jitmagic.save(result, path)"), ("no_plot", "print(result)"),
    ("html", 'jitmagic.save(result, "report.html")')])
def test_front_end_options_are_refused_by_compare(keyword, instead):
    with pytest.raises(jitmagic.InputError, match=f"`{keyword}=` is an option of the magic"
                       r"(.|\n)*" + re.escape(instead)):
        jitmagic.compare(_model_with_param, jnp.ones(4), repeat=1, number=1,
                         **{keyword: "r.json"})


def test_processes_is_refused_by_compare_naming_the_command_that_takes_it():
    with pytest.raises(jitmagic.InputError, match=r"`processes=` is an option of the command, "
                       r"not of jitmagic's Python functions(.|\n)*python -m jitmagic "
                       r"--processes 2 FILE.py"):
        jitmagic.compare(_model_with_param, jnp.ones(4), effort=True, processes=2)


def test_misspelt_option_keyword_gets_a_did_you_mean():
    with pytest.raises(jitmagic.UserCodeError, match="unexpected keyword argument 'repaet'"
                       r"(.|\n)*did you mean `repeat=`\?"):
        jitmagic.compare(_model_with_param, jnp.ones(4), number=1, repaet=1)


def test_entry_keyword_far_from_any_option_gets_no_hint():
    with pytest.raises(jitmagic.UserCodeError) as raised:
        jitmagic.compare(_model_with_param, jnp.ones(4), repeat=1, number=1, depth=3)
    assert "unexpected keyword argument 'depth'" in str(raised.value)
    assert "did you mean" not in str(raised.value)


def _score(w, batch):
    """Written for one example: a dict of one feature vector and its label."""
    assert batch["x"].ndim == 1, f"expected one example, got {batch['x'].shape}"
    return _layer(batch["x"] @ w).sum() * batch["y"]


def test_in_axes_measures_flat_and_nested_on_one_example():
    w = jnp.eye(3)
    batch = {"x": jnp.arange(15.0).reshape(5, 3), "y": jnp.arange(5.0)}
    result = jitmagic.compare(_score, w, batch, in_axes=(None, {"x": 0, "y": 0}),
                              repeat=1, number=1)
    assert any("flat/nested measured on one example: index 0" in w for w in result.warnings)
    assert result.orderings.batch == 5
    assert result.flat.error is None and result.nested.error is None


def test_in_axes_cell_measures_one_example(run_magic):
    cell = ("import jax.numpy as jnp\n"
            "def h(x):\n    return jnp.tanh(x)\n"
            "def f(x):\n    assert x.ndim == 1, x.shape\n    return h(x @ x)\n"
            "f(jnp.ones((6, 4)))\n")
    result, _ = run_magic("-o -r 1 -n 1 --no-plot --in-axes 1", cell)
    assert result.orderings.batch == 4
    assert any("one example" in w for w in result.warnings)


def _run_fori(x):
    return jax.lax.fori_loop(0, 3, lambda i, c: _layer(c), x).sum()


def _run_scan(x):
    def step(carry, _):
        return _layer(carry), None
    return jax.lax.scan(step, x, None, length=3)[0].sum()


def _run_cond(x):
    return jax.lax.cond(x.sum() > 0, _layer, jnp.cos, x).sum()


@pytest.mark.parametrize("fn", [_run_fori, _run_scan, _run_cond])
def test_lines_own_counts_add_up_to_every_equation(fn):
    x = jnp.ones(4)
    tables = jitmagic.lines(fn, x).tables
    total = sum(row.eqns_own for row in tables["flat"].rows)
    assert total == count_equations(jax.make_jaxpr(fn)(x).jaxpr)
    for table in tables.values():
        assert max(row.eqns_inclusive for row in table.rows) <= sum(
            row.eqns_own for row in table.rows)


SCRIPT = """\
import argparse
import jax.numpy as jnp
def layer(x):
    return x.reshape(3, -1)
def model(x):
    return layer(x).sum()
if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--width", type=int, default=6)
    width = parser.parse_args().width
    model(jnp.ones(width))
"""


def _script(tmp_path, source=SCRIPT):
    path = tmp_path / "train.py"
    path.write_text(source)
    return str(path)


def test_command_runs_a_main_guard_and_names_the_file(tmp_path, capsys):
    path = _script(tmp_path)
    assert main([path, "-r", "1", "-n", "1", "--lines"]) == 0
    out = capsys.readouterr().out
    assert f"# {path}" in out and "jitcompare-cell" not in out
    assert main([path, "-r", "1", "-n", "1", "--", "--width", "8"]) == 1  # 8 is not 3 * k
    err = capsys.readouterr().err
    assert f'File "{path}", line 4, in layer' in err and "jitcompare-cell" not in err


def test_command_says_the_script_exited_before_the_call(tmp_path, capsys):
    assert main([_script(tmp_path), "-r", "1", "-n", "1", "--", "--help"]) == 1
    err = capsys.readouterr().err
    assert "your script exited (sys.exit(0)) before the call to measure" in err


def test_command_refuses_a_main_guard_that_does_not_end_with_the_call(tmp_path, capsys):
    source = SCRIPT.replace("    model(jnp.ones(width))\n", "    y = model(jnp.ones(width))\n")
    assert main([_script(tmp_path, source)]) == 2
    err = capsys.readouterr().err
    assert "the file's last statement must call the function to measure: move the call " \
           'out of the `if __name__ == "__main__":` block' in err


def test_command_messages_speak_of_the_file(tmp_path, capsys):
    assert main([_script(tmp_path, "import jax\nx = 1\n")]) == 2
    assert "the file's last statement (line 2, an assignment) is not a call" in \
        capsys.readouterr().err


@pytest.fixture(scope="module")
def saved_report(tmp_path_factory):
    """One small real report, saved: the tests below spoil copies of its JSON."""
    path = tmp_path_factory.mktemp("report") / "r.json"
    jitmagic.save(jitmagic.compare(_model_with_param, jnp.ones(4), repeat=1, number=1), path)
    return json.loads(path.read_text())


@pytest.mark.parametrize("value", ["fast", True, -5, 1e308, [0.1]])
def test_load_refuses_a_bad_median_field(saved_report, tmp_path, value):
    spoiled = copy.deepcopy(saved_report)
    spoiled["variants"]["flat"]["trace_s"] = value
    path = tmp_path / "spoiled.json"
    path.write_text(json.dumps(spoiled))
    with pytest.raises(jitmagic.ReportSchemaError, match=r"variants\.flat\.trace_s: expected"):
        jitmagic.load(path)


def test_load_takes_a_null_median(saved_report, tmp_path):
    spoiled = copy.deepcopy(saved_report)
    spoiled["variants"]["nested"]["execute_s"] = None
    path = tmp_path / "null.json"
    path.write_text(json.dumps(spoiled))
    assert jitmagic.load(path).nested.samples == jitmagic.Comparison.from_dict(
        saved_report).nested.samples


def test_load_of_a_folder_or_a_missing_file_says_so(tmp_path):
    with pytest.raises(jitmagic.ReportSchemaError, match="is a folder, not a report"):
        jitmagic.load(tmp_path)
    with pytest.raises(FileNotFoundError, match=f"no report at {re.escape(str(tmp_path))}"):
        jitmagic.load(tmp_path / "nothing.json")


def test_command_sweep_warns_only_when_the_program_did_not_change(tmp_path, capsys):
    reads = ("import jax.numpy as jnp\nn = 3\n"
             "def layer(x):\n    return jnp.sin(x) * 1.5\n"
             "def model(x):\n    for _ in range(n):\n        x = layer(x)\n    return x.sum()\n")
    assert main([_script(tmp_path, reads + "model(jnp.ones(4))\n"), "-r", "1", "-n", "1",
                 "--sweep", "n=1,2"]) == 0
    out = capsys.readouterr().out
    assert "did not change the program" not in out and "never reach" not in out
    ignored = reads.replace("range(n)", "range(2)") + "model(jnp.ones(4))\n"
    assert main([_script(tmp_path, ignored), "-r", "1", "-n", "1", "--sweep", "n=1,2"]) == 0
    out = capsys.readouterr().out
    assert "the code never reads `n`" in out and "~ n^" not in out
    assert "did not change the program" not in out  # the specific reason replaces it

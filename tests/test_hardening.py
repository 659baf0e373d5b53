"""Hostile or unusual use of the front ends: paths that cannot be written, scripts with
their own arguments and encodings, cells that patch JAX, frozen heaps, odd entries."""

from __future__ import annotations

import functools
import gc
import io
import sys

import jax
import jax.numpy as jnp
import pytest
from IPython.core.error import UsageError

import jitmagic
from jitmagic.errors import InputError
from jitmagic.frontends.command import build_parser, main
from jitmagic.model.sweep import Sweep
from jitmagic.render.charts.sweep import sweep_figure

FAST = "-r 1 -n 1"

#: A small model the way people write one: a parameter NamedTuple and a helper.
CELL = """\
from typing import NamedTuple
import jax.numpy as jnp

class Params(NamedTuple):
    w: jnp.ndarray
    b: jnp.ndarray

def dense(p, x):
    return jnp.tanh(x * p.w + p.b)

def model(p, x):
    return dense(p, dense(p, x)).sum()

model(Params(jnp.ones(4), jnp.zeros(4)), jnp.ones(4))
"""

#: A cell that fails the moment it runs: a message about anything else means it never ran.
EXPLODES = "raise RuntimeError('the cell ran')\n" + CELL


def _script(tmp_path, body: str = "", name: str = "train.py") -> str:
    path = tmp_path / name
    path.write_text(body + CELL)
    return str(path)


# --------------------------------------------------------------------------- saving


@pytest.mark.parametrize("where, message", [
    ("{tmp}", "it is a folder"),
    ("{tmp}/no/such/folder/r.json", "does not exist"),
])
def test_magic_refuses_a_bad_save_path_before_measuring(run_magic, tmp_path, where, message):
    with pytest.raises(UsageError, match=message):
        run_magic(f"{FAST} --save {where.format(tmp=tmp_path)}", EXPLODES)


def test_magic_saves_to_home_and_to_the_folder_it_started_in(run_magic, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    cell = f"import os\nos.chdir({str(tmp_path / 'elsewhere')!r})\n" + CELL
    result, _ = run_magic(f"{FAST} -o --save ~/home.json", cell)
    assert jitmagic.load(tmp_path / "home.json").to_dict() == result.to_dict()
    monkeypatch.chdir(tmp_path)  # the first run's cell moved us
    run_magic(f"{FAST} --save here.json", cell)
    assert (tmp_path / "here.json").is_file() and not (tmp_path / "elsewhere/here.json").exists()


@pytest.mark.parametrize("option", ["--save", "--html"])
def test_command_exits_3_on_an_unwritable_path_before_measuring(tmp_path, capsys, option):
    script = tmp_path / "boom.py"
    script.write_text(EXPLODES)
    assert main([str(script), "-r", "1", "-n", "1", option, str(tmp_path)]) == 3
    err = capsys.readouterr().err
    assert "it is a folder" in err and "Traceback" not in err and "the cell ran" not in err


def test_command_help_lists_its_exit_codes():
    help_text = build_parser().format_help()
    for line in ("0  measured", "1  your code raised", "2  usage", "3  cannot write"):
        assert line in help_text


# --------------------------------------------------------------------------- the command


def test_command_reads_a_latin1_script_with_a_coding_line(tmp_path):
    path = tmp_path / "old.py"
    path.write_bytes("# -*- coding: latin-1 -*-\nlabel = 'café'\n".encode("latin-1")
                     + CELL.encode())
    assert main([str(path), "-r", "1", "-n", "1"]) == 0


def test_command_gives_the_script_its_own_arguments(tmp_path, capsys):
    body = ("import argparse, sys\n"
            "parser = argparse.ArgumentParser()\n"
            "parser.add_argument('--steps', type=int, required=True)\n"
            "steps = parser.parse_args().steps\n"
            "print('steps', steps, 'argv', sys.argv[1:])\n")
    before = list(sys.argv)
    assert main([_script(tmp_path, body), "-r", "1", "-n", "1", "--", "--steps", "7"]) == 0
    assert "steps 7 argv ['--steps', '7']" in capsys.readouterr().out
    assert sys.argv == before


def test_command_reports_the_scripts_sys_exit(tmp_path, capsys):
    assert main([_script(tmp_path, "import sys\nsys.exit(3)\n"), "-r", "1", "-n", "1"]) == 1
    err = capsys.readouterr().err
    assert "sys.exit(3)" in err and "Traceback" not in err


# --------------------------------------------------------------------------- shared state


def test_a_heap_the_user_froze_stays_frozen(run_magic):
    sentinel = [object()]
    gc.freeze()
    try:
        run_magic(FAST, CELL)
        assert not any(o is sentinel for o in gc.get_objects())
    finally:
        gc.unfreeze()


def test_cell_turning_on_x64_is_undone_and_said(run_magic):
    cell = "import jax\njax.config.update('jax_enable_x64', True)\n" + CELL
    result, _ = run_magic(f"{FAST} -o", cell)  # run_magic checks the config is back
    assert result.env["x64"] is True  # it applied while measuring
    assert any("jax_enable_x64" in w and "back to False" in w for w in result.warnings)


def test_cell_patching_jnp_is_undone_and_said(run_magic):
    sin = jnp.sin
    result, _ = run_magic(f"{FAST} -o", "import jax.numpy as jnp\njnp.sin = jnp.cos\n" + CELL)
    assert jnp.sin is sin
    assert any("jax.numpy.sin" in w for w in result.warnings)


def test_the_cell_runs_once_for_both_variants(run_magic):
    result, cap = run_magic(f"{FAST} -o", "print('side effect')\n" + CELL)
    assert cap.stdout.count("side effect") == 1
    assert not any("the cell ran" in w for w in result.warnings)


# --------------------------------------------------------------------------- sweeps


SWEPT = CELL.replace("jnp.ones(4), jnp.zeros(4)), jnp.ones(4))",
                     "jnp.ones(width), jnp.zeros(width)), jnp.ones(width))")


@pytest.mark.parametrize("cell, said", [
    (CELL, "never reads `width`"),
    ("width = 4\n" + SWEPT, "assigns `width` (line 2) before reading it"),  # %%jitcompare: line 1
    ("width = width * 2\n" + SWEPT, None),
])
def test_sweep_warns_when_the_name_cannot_reach_the_code(run_magic, cell, said):
    result, _ = run_magic(f"{FAST} -o --sweep width=2,4", cell)
    found = [w for w in result.warnings if w.startswith("--sweep width")]
    assert (said in found[0]) if said else not found


@pytest.mark.parametrize("spec", ["__builtins__=1", "print=1,2", "class=1"])
def test_sweep_refuses_names_python_uses(run_magic, spec):
    with pytest.raises(UsageError, match="sweep"):
        run_magic(f"{FAST} --sweep {spec}", CELL)
    with pytest.raises(InputError):
        jitmagic.sweep(spec.split("=")[0], [1], model_fn, jnp.ones(2), progress=False)


TAG = "plain"


def model_fn(x):
    return jnp.sin(x) * len(TAG)


def test_sweep_values_reach_the_chart_as_plain_text():
    result = jitmagic.sweep("TAG", ["$\\x$", "a$b"], model_fn, jnp.ones(2), repeat=1,
                            number=1, progress=False)
    sweep_figure(result).savefig(io.BytesIO(), format="png")


# --------------------------------------------------------------------------- messages


class Scaled:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return jnp.sin(x) * self.k


def shifted(x, by):
    return jnp.cos(x) + by


def test_a_callable_instance_is_an_entry_named_for_its_call():
    r = jitmagic.compare(Scaled(2.0), jnp.ones(2), repeat=1, number=1)
    assert r.entry == "Scaled.__call__" and r.flat.ok and r.nested.ok


def test_a_partial_is_an_entry_named_for_its_function():
    r = jitmagic.compare(functools.partial(shifted, by=1.0), jnp.ones(2), repeat=1, number=1)
    assert r.entry == "partial(shifted)" and r.flat.ok and r.nested.ok


@pytest.mark.parametrize("last, message", [
    ("%time model(Params(jnp.ones(4), jnp.zeros(4)), jnp.ones(4))",
     r"the last line is a magic \(%time\): write the call itself"),
    ("return model(Params(jnp.ones(4), jnp.zeros(4)), jnp.ones(4))",
     "a cell cannot `return` at top level"),
])
def test_cell_shape_messages(run_magic, last, message):
    cell = CELL.rsplit("\n", 2)[0] + "\n" + last + "\n"
    with pytest.raises(UsageError, match=message):
        run_magic(FAST, cell)


def test_empty_nest_says_it_names_no_helper(run_magic):
    with pytest.raises(UsageError, match="--nest names no helper"):
        run_magic(f"{FAST} --nest ,,,", CELL)


# --------------------------------------------------------------------------- --vmap


def standardize(x):
    return (x - x.mean()) / jnp.sqrt(x.var() + 1e-5)


def scored(x):
    return standardize(x) * 2.0


def test_vmap_of_a_function_using_array_methods_measures():
    result = jitmagic.compare(scored, jnp.arange(4.0), vmap=True, repeat=1, number=1)
    rows = result.orderings.rows
    assert rows["vmap(f)"].hlo_instructions is None  # op by op: no program of its own
    assert rows["vmap(jit(f))"].hlo_instructions > 0
    assert all(not r.error for r in rows.values())
    assert jax.config.jax_enable_x64 is False


def test_the_line_form_of_a_sweep_has_no_setup_to_repeat(ip, run_magic):
    # Only the call ran per value: there is no code of the cell whose side effects repeat.
    ip.run_cell("import jax.numpy as jnp\ndef sweep_me(x):\n    return x * n_times\n")
    try:
        result, _ = run_magic("-o -r 1 -n 1 --quiet --sweep n_times=1,2 sweep_me(jnp.ones(2))")
    finally:
        ip.run_cell("del sweep_me, jnp")
    assert isinstance(result, Sweep) and len(result.points) == 2
    assert not any("ran 2 times" in w for w in result.warnings)

"""Mistakes a newcomer makes get help: what was meant, and what to write."""

from __future__ import annotations

import jax.numpy as jnp
import pytest
from IPython.core.error import UsageError
from support import FAST

import jitmagic

CELL = "import jax.numpy as jnp\ndef model(x):\n    return jnp.sin(x)\nmodel(jnp.ones(3))\n"


def test_a_misspelt_option_gets_did_you_mean_and_the_options(run_magic):
    with pytest.raises(UsageError, match=r"Did you mean --vmap \(not --vamp\)\?") as info:
        run_magic("--vamp", CELL)
    assert "--repeat" in str(info.value) and "--nest" in str(info.value)


@pytest.mark.parametrize(("line", "said"), [
    ("--sweep", "argument --sweep: expected one argument. Write --sweep NAME=V1,V2,..."),
    ("-o -r", "argument -r/--repeat: expected one argument. Write --repeat N|auto."),
])
def test_an_option_given_no_value_is_told_what_to_write(run_magic, line, said):
    with pytest.raises(UsageError) as info:
        run_magic(line, CELL)
    assert said in str(info.value)


def test_q_is_quiet_as_in_timeit(run_magic):
    result, _ = run_magic(f"-q -o {FAST}", CELL)
    assert result.flat.ok


def test_the_line_form_without_a_call_says_what_to_write(ip):
    ip.run_cell("import jax.numpy as jnp\ndef model(x):\n    return jnp.sin(x)\n")
    with pytest.raises(UsageError, match=r"`model` is not a call: .*`%jitcompare -o model\(x\)`"):
        ip.run_line_magic("jitcompare", "-o model")
    with pytest.raises(UsageError, match=r"`%%jitcompare` \(two %\)"):
        ip.run_line_magic("jitcompare", "")


def test_an_undefined_argument_of_the_final_call_is_said_to_be_there(ip):
    ip.run_cell("import jax.numpy as jnp\ndef model(x):\n    return jnp.sin(x)\n")
    said = r"evaluating the function and arguments of the final call raised \(nothing was "
    with pytest.raises(UsageError, match=said + r"(.|\n)*NameError: name 'inputs'"):
        ip.run_line_magic("jitcompare", "model(inputs)")
    with pytest.raises(UsageError, match=r"the cell raised before its final call(.|\n)*"
                                         r"ZeroDivisionError"):
        ip.run_cell_magic("jitcompare", "", "y = 1 / 0\nmodel(jnp.ones(2))\n")


def test_a_value_that_is_not_a_function_is_named_by_its_value():
    with pytest.raises(jitmagic.InputError, match=r"the entry `42` is not a function \(it is "
                                                   r"an `int`\)"):
        jitmagic.compare(42, jnp.ones(2), quiet=True)


def _helper(x):
    return jnp.cos(x) * 2


def _calls_helper(x):
    return _helper(x) + _helper(x)


def test_repr_is_one_short_line():
    r = jitmagic.compare(_calls_helper, jnp.ones(2), repeat=1, number=1, quiet=True)
    text = repr(r)
    assert text.startswith("<Comparison _calls_helper: ") and text.endswith(", 1 run>")
    assert "\n" not in text and len(text) < 120
    none = jitmagic.compare(jnp.sin, jnp.ones(2), repeat=1, number=1, quiet=True)
    assert repr(none) == "<Comparison sin: nothing nested, 1 run>"


def test_a_line_form_call_that_does_not_parse_shows_its_syntax_error(ip):
    with pytest.raises(UsageError, match=r"syntax error in the call `g\(x`: '\(' was never "
                                         r"closed"):
        ip.run_line_magic("jitcompare", "-o g(x")

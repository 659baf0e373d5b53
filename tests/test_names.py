"""Misspelt names get "did you mean": the entry, a helper, an argument (difflib over
what the code could see), and hints that fit the failure."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

import jitmagic

CELL = """\
import jax.numpy as jnp
def layer(x):
    return jnp.sin(x) * 2
def model(x):
    return {body}
{call}
"""


def test_a_misspelt_entry_gets_did_you_mean(ip):
    with pytest.raises(UsageError, match=r"the entry `modle` is not defined: Did you mean "
                                         r"`model`\? Or define `modle` in this cell"):
        ip.run_cell_magic("jitcompare", "-r 1", CELL.format(body="layer(x)",
                                                            call="modle(jnp.ones(4))"))


def test_a_misspelt_helper_inside_the_entry_gets_did_you_mean(ip):
    with pytest.raises(UsageError, match=r"NameError: name 'laeyr' is not defined\n\n"
                                         r"Hint: did you mean `layer`\?"):
        ip.run_cell_magic("jitcompare", "-r 1", CELL.format(body="laeyr(x) + layer(x)",
                                                            call="model(jnp.ones(4))"))


def test_a_misspelt_argument_gets_did_you_mean(ip):
    ip.run_cell("import jax.numpy as jnp\ninputs = jnp.ones(3)\n"
                "def model(x):\n    return jnp.sin(x)\n")
    with pytest.raises(UsageError, match=r"NameError: name 'inptus'(.|\n)*did you mean "
                                         r"`inputs`\?"):
        ip.run_line_magic("jitcompare", "model(inptus)")


def test_a_name_far_from_any_gets_no_guess(ip):
    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("jitcompare", "-r 1", CELL.format(body="zzqx(x)",
                                                            call="model(jnp.ones(4))"))
    assert "did you mean" not in str(info.value).lower()


def test_when_flat_fails_too_the_hint_does_not_suggest_nest():
    import jax.numpy as jnp

    def model(x):  # fails in the flat program itself: --nest cannot help
        return jnp.sin(x) if x.sum() > 0 else x

    with pytest.raises(jitmagic.UserCodeError) as info:
        jitmagic.compare(model, jnp.ones(3), repeat=1, number=1, progress=False)
    said = str(info.value)
    assert "Hint: a helper uses the Python value of a traced argument" in said
    assert "--nest" not in said


def test_lines_name_a_notebook_cell_as_ipython_does(ip):
    from jitmagic.frontends.cell_names import THIS_CELL, with_cell_names

    ip.run_cell("import jax.numpy as jnp\ndef layer(x):\n    return jnp.sin(x) * 2\n"
                "def model(x):\n    return layer(x) + layer(x)\n", store_history=True)
    number = ip.execution_count - 1
    result = ip.run_line_magic("jitcompare", "-o -r 1 -n 1 --no-plot --lines model(jnp.ones(3))")
    named = with_cell_names(result, ip)
    text = str(named.lines)
    assert f"# Cell In[{number}]" in text and "ipython-input" not in text
    again = jitmagic.Comparison.from_dict(named.to_dict())
    assert f"# Cell In[{number}]" in str(again.lines)  # saved with the report
    cell = ip.run_cell_magic("jitcompare", "-o -r 1 -n 1 --no-plot --lines",
                             "def f(x):\n    return x * 2\nf(jnp.ones(3))\n")
    assert f"# {THIS_CELL}" in str(with_cell_names(cell, ip).lines)


def test_control_characters_in_live_names_are_escaped_in_every_output():
    import jax.numpy as jnp

    def layer(x):
        return jnp.sin(x) * 2

    layer.__code__ = layer.__code__.replace(co_qualname="layer\x07\x1b]0;owned\x07")

    def model(x):
        return layer(x) + layer(x)

    model.__name__ = "model\x1b[31m"
    c = jitmagic.compare(model, jnp.ones(3), repeat=1, number=1, progress=False)
    shown = str(c) + repr(c) + c.verdict.headline
    assert "\x1b" not in shown and "\x07" not in shown
    assert "model\\x1b[31m" in shown and "\\x07" in shown


def test_the_magic_names_cells_in_its_lines_tables(ip):
    ip.run_cell("import jax.numpy as jnp\ndef twice(x):\n    return jnp.sin(x) * 2\n",
                store_history=True)
    number = ip.execution_count - 1
    result = ip.run_line_magic("jitcompare", "-o -r 1 -n 1 --no-plot --lines twice(jnp.ones(3))")
    assert f"# Cell In[{number}]" in str(result.lines)

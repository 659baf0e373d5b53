"""Property-based tests of the cell and line front end: arbitrary text either
parses or raises one of the documented errors, never an internal exception."""

from __future__ import annotations

import ast
import keyword

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from IPython.core.error import UsageError

from jitmagic.cell.source import CellError, parse_cell, split_line
from jitmagic.errors import InputError
from jitmagic.frontends.magic import PATHS, parsed_line
from jitmagic.options import Options

# Random text is full of invalid escape sequences: Python warns while parsing them.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")

#: This module's own settings, applied per test: loading a profile here would change
#: every other ``@given`` in the run. ``ip`` is a session fixture: sharing it is safe.
FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

python_ish = st.text(alphabet=st.sampled_from(list("abfx_()=,.:+-*# \n\t'\"[]{}01\\\0")),
                     max_size=60)

#: Names as users write them (``λ`` and ``é`` are identifiers too), never a keyword.
identifiers = st.from_regex(r"[A-Za-z_λé][A-Za-z0-9_λé]{0,7}", fullmatch=True).filter(
    lambda s: not keyword.iskeyword(s))
dotted_names = st.lists(identifiers, min_size=2, max_size=4)


@st.composite
def dotted_calls(draw) -> tuple[str, list[str]]:
    """A cell ending in a call of a dotted name (``model.apply(x)``, ``L.dense(x)``), the
    dots spaced or not, maybe after setup lines or inside a ``__main__`` guard; and the
    name's parts."""
    parts = draw(dotted_names)
    call = draw(st.sampled_from([".", " . ", ".\\\n"])).join(parts)
    call += "(" + draw(st.sampled_from(["", "x", "1, 2", "x, k=3", "*xs", "jnp.ones(4)"])) + ")"
    setup = draw(st.sampled_from(["", "import jax\n", "x = 1\n", "# a comment\n"]))
    if draw(st.booleans()):
        call = 'if __name__ == "__main__":\n    ' + call.replace("\n", "\n    ")
    return setup + call + "\n", parts


def dotted_parts(node: ast.expr) -> list[str] | None:
    """``["model", "apply"]`` for ``model.apply``; None if ``node`` is not a dotted name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    return [node.id, *parts] if isinstance(node, ast.Name) else None


@FUZZ
@given(st.one_of(st.text(max_size=80), python_ish, dotted_calls().map(lambda c: c[0])))
@example("model(jnp.ones(4))")
@example("model.apply(params, x)")
@example("import realworld_layers as L\nL.dense(x)")
@example("jax.grad(loss)(w, x)")  # an entry that is itself a call
@example("layers[0](x)")
@example('if __name__ == "__main__":\n    m.f(1)')
def test_parse_cell_works_or_raises_documented_errors(text):
    try:
        plan = parse_cell(text)
    except (SyntaxError, CellError):
        return
    # The entry is the function the cell's last statement calls, written as an
    # expression of its own: parsed again, it is that same expression.
    last = ast.parse(text).body[-1]
    if isinstance(last, ast.If):  # accepted only as the `__main__` guard ending in the call
        last = last.body[-1]
    written = ast.parse(plan.entry, mode="eval").body
    assert ast.dump(written) == ast.dump(last.value.func)
    parts = dotted_parts(written)
    if parts is not None:  # a name or a dotted name: `model`, `model.apply`, `L.dense`
        assert plan.entry == ".".join(parts)
        assert all(p.isidentifier() and not keyword.iskeyword(p) for p in parts)


@FUZZ
@given(dotted_calls())
@example(("model.apply(x)\n", ["model", "apply"]))
@example(("import realworld_layers as L\nL . dense(x)\n", ["L", "dense"]))
def test_a_dotted_entry_is_kept_whole(cell):
    text, parts = cell
    assert parse_cell(text).entry == ".".join(parts)


@FUZZ
@given(st.one_of(st.text(max_size=60), python_ish))
def test_split_line_always_splits(text):
    options, call = split_line(text)
    assert isinstance(options, str) and isinstance(call, str)
    if call:
        parse_cell(call)  # whatever was taken as the call parses as one


options = st.lists(st.sampled_from(["-o", "-r", "-n", "--nest", "--no-plot", "--save",
                                    "--timeout", "3", "0", "-1", "x", "a,b", "'", '"', "--",
                                    "--bogus", "1e9", "nan"]), max_size=6).map(" ".join)


@FUZZ
@given(st.one_of(options, st.text(max_size=40)))
def test_option_strings_parse_or_raise_usage_error(ip, text):
    magics = ip.magics_manager.registry["JitCompareMagics"]
    try:  # as the magic does: read the line, then check the values (InputError)
        options = Options.from_namespace(parsed_line(magics.jitcompare, text, PATHS))
    except (UsageError, InputError):
        return
    assert options.repeat == "auto" or options.repeat >= 1
    assert options.number is None or options.number >= 1

"""Property-based tests of the cell and line front end: arbitrary text either
parses or raises one of the documented errors, never an internal exception."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from IPython.core.error import UsageError

from jitmagic.errors import InputError
from jitmagic.frontends.cell import CellError, parse_cell, split_line
from jitmagic.options import Options

# Random text is full of invalid escape sequences: Python warns while parsing them.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")

#: This module's own settings, applied per test: loading a profile here would change
#: every other ``@given`` in the run. ``ip`` is a session fixture: sharing it is safe.
FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

python_ish = st.text(alphabet=st.sampled_from(list("abfx_()=,.:+-*# \n\t'\"[]{}01\\\0")),
                     max_size=60)


@FUZZ
@given(st.one_of(st.text(max_size=80), python_ish))
def test_parse_cell_works_or_raises_documented_errors(text):
    try:
        plan = parse_cell(text)
    except (SyntaxError, CellError):
        return
    assert plan.entry.isidentifier()


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
        options = Options.from_namespace(magics._parse_options(text))
    except (UsageError, InputError):
        return
    assert options.repeat >= 1 and (options.number is None or options.number >= 1)

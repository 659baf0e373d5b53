"""One set of options: the magic and the command list the same ones, and the Python
API takes them as keywords, text parsed as on the command line."""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import pytest

import jitmagic
from jitmagic import InputError, Options
from jitmagic.frontends.command import build_parser
from jitmagic.frontends.magic import JitCompareMagics

#: Options only one front end has: the magic's return/plot switches; the command's
#: file, HTML report and --processes (it starts processes: a notebook kernel is one).
MAGIC_ONLY = {("-h", "--help"), ("-o", "--output"), ("--no-plot",), ("--html",)}  # help of its own
COMMAND_ONLY = {("-h", "--help"), (), ("--html",), ("--processes",)}


def _listed(parser: argparse.ArgumentParser, own: set[tuple[str, ...]]) -> dict:
    """Flags → what the help says about them, for the options not in ``own``."""
    return {tuple(a.option_strings): (a.help, a.metavar, a.default, a.type)
            for a in parser._actions if tuple(a.option_strings) not in own}


def test_magic_and_command_list_the_same_options():
    magic = _listed(JitCompareMagics.jitcompare.parser, MAGIC_ONLY)
    command = _listed(build_parser(), COMMAND_ONLY)
    assert magic == command
    assert {("-r", "--repeat"), ("--nest",), ("--in-axes",), ("--sweep",), ("--save",)} \
        <= set(magic)
    # The generated help is what `%jitcompare?` shows.
    assert "--in-axes SPEC" in JitCompareMagics.jitcompare.__doc__
    assert "--save PATH" in build_parser().format_help()
    assert "--json" not in build_parser().format_help()


def test_text_is_parsed_as_on_the_command_line():
    parsed = build_parser().parse_args(["f.py", "--nest", "dense, norm", "--in-axes", "0,None",
                                        "--sweep", "width=8,16", "-r", "2"])
    from_text = Options.from_namespace(parsed)
    assert from_text == Options(repeat=2, nest=["dense", "norm"], in_axes=(0, None),
                                sweep=("width", [8, 16]))
    assert from_text.nest == ("dense", "norm") and from_text.sweep == ("width", (8, 16))
    assert from_text.vmap  # implied by in_axes
    assert not Options().vmap and Options(batch=4).vmap
    assert Options(repeat="3").repeat == 3 == Options(repeat=" 3 ").repeat  # as -r 3
    assert Options(number=None).number is None  # None is "auto-ranged" for these


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"repeat": 0}, "-r/--repeat must be at least 1, not 0"),
        ({"repeat": 10**6}, "-r/--repeat is at most 100 cold runs a variant, not 1000000"),
        ({"number": 2.5}, "-n/--number must be a whole number"),
        ({"timeout": -1}, "--timeout must be a positive number of seconds"),
        ({"nest": 3}, "--nest takes helper names"),
        ({"vmap": "yes"}, "--vmap is on or off"),
        ({"in_axes": "0,x"}, "'x' is not an axis"),
        ({"sweep": "width"}, "does not name a variable"),
        ({"sweep": ("width", [])}, "at least one value"),
        ({"repeat": None}, r"-r/--repeat takes no None: leave it out for its default \('auto'\)"),
        ({"repeat": "three"}, "-r/--repeat is `auto` or a whole number of cold runs"),
    ],
)
def test_bad_options_say_what_to_write(keywords, message):
    with pytest.raises(InputError, match=message):
        Options(**keywords)


# A small network, written as JAX users write one: module-level helpers reached by
# name from the entry, a weight matrix and a bias.


def dense(w, b, x):
    return jnp.tanh(x @ w + b)


def norm(x, eps=1e-5):
    return x * jax.lax.rsqrt(jnp.sum(x * x) + eps)


def forward(w, b, x, scale=1.0):
    for _ in range(DEPTH):
        x = norm(dense(w, b, x))
    return scale * x.sum()


DEPTH = 2  # swept below, in a copy of this module's namespace only


def _params():
    return jax.random.normal(jax.random.PRNGKey(0), (4, 4)), jnp.zeros(4)


def test_compare_takes_nest_as_text_and_passes_other_keywords_on():
    result = jitmagic.compare(forward, *_params(), jnp.ones(4), nest="dense", scale=2.0,
                              repeat=1, number=1)
    assert result.nested.helpers == ("dense",)  # not the helpers d, e, n, s, e
    assert result.flat.ok and result.outputs_match is True


def test_compare_keywords_override_given_options():
    base = Options(repeat=2, nest=("norm",))
    result = jitmagic.compare(forward, *_params(), jnp.ones(4), options=base, repeat=1,
                              number=1)
    assert result.nested.helpers == ("norm",)
    assert all(len(v.samples["trace_s"]) == 1 for v in result.variants.values())


def test_compare_sends_a_sweep_to_jitmagic_sweep():
    with pytest.raises(InputError, match="jitmagic.sweep"):
        jitmagic.compare(forward, *_params(), jnp.ones(4), sweep="DEPTH=1,2")


@pytest.mark.slow
def test_sweep_takes_the_vmap_and_attribute_options():
    result = jitmagic.sweep("DEPTH", [1, 2], forward, *_params(), jnp.ones(4), vmap=True,
                            batch=2, attribute=True, repeat=1, number=1, progress=False)
    points = result.to_dict()["points"]
    eqns = [p["variants"]["flat"]["jaxpr_eqns"] for p in points]
    assert eqns[0] < eqns[1]  # DEPTH was bound to 1, then 2
    for point in points:
        assert point["orderings"]["batch"] == 2
        assert {h["helper"] for h in point["attribution"]["helpers"]} == {"dense", "norm"}
    assert DEPTH == 2


#: A fresh interpreter that adds two rows to the one table before any front end is
#: imported (the magics are made from it as their module loads), then says where each
#: shows: a row for both tools, and one for the comparison alone.
ADDED_OPTION_CHILD = '''
import json
from jitmagic.options import table
from jitmagic.options.table import COMPARE, WATCH, OptionSpec

table.OPTION_SPECS = (*table.OPTION_SPECS,
                      OptionSpec(("--frobnicate",), "frobnicate {result} first", str, "HOW",
                                 tools=frozenset({COMPARE, WATCH})),
                      OptionSpec(("--compare-alone",), "only the comparison takes it"))
from jitmagic.frontends.command import build_parser
from jitmagic.frontends.magic import JitCompareMagics
from jitmagic.frontends.watch.command import build_parser as watch_parser
from jitmagic.frontends.watch.magic import JitWatchMagics

print(json.dumps({
    "%jitcompare?": JitCompareMagics.jitcompare.__doc__,
    "%jitwatch?": JitWatchMagics.jitwatch.__doc__,
    "python -m jitmagic --help": build_parser().format_help(),
    "python -m jitmagic watch --help": watch_parser().format_help(),
    "docs jitcompare": table.as_markdown(COMPARE),
    "docs jitwatch": table.as_markdown(WATCH),
}))
'''


def test_an_option_added_to_the_one_table_shows_in_every_front_doors_help_and_the_docs():
    """Both magics, both commands and the docs list their options from one table: a row
    added to it is in each of them that takes it, and in no other."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", ADDED_OPTION_CHILD], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout.splitlines()[-1])
    for place, text in shown.items():
        assert "--frobnicate HOW" in text, place
        watch = "jitwatch" in place or "watch --help" in place
        assert ("--compare-alone" in text) is not watch, place
    assert "frobnicate the ledger first" in shown["docs jitwatch"]
    assert "frobnicate the result first" in shown["docs jitcompare"]


def test_the_docs_hold_each_tools_options_as_the_one_table_makes_them():
    """docs/options.md and docs/watch.md list the options between markers, exactly as
    ``as_markdown`` makes them from the table (paste its output there after a change)."""
    import pathlib
    import re

    from jitmagic.options.table import DOCS, as_markdown

    root = pathlib.Path(__file__).resolve().parent.parent
    for tool, doc in DOCS.items():
        text = (root / doc).read_text()
        found = re.search(rf"<!-- options: {tool} -->\n(.*?)\n<!-- /options -->", text, re.S)
        assert found is not None, f"{doc} has no generated options list for {tool}"
        assert found[1] == as_markdown(tool), f"{doc}: regenerate with as_markdown({tool!r})"

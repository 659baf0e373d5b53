"""jitmagic's Python functions' keywords: which are options (and ``baseline=``), which go to the
user's function, and what to write for one that is neither's."""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import textwrap
from collections.abc import Iterable
from typing import Any, NamedTuple

from ..errors import InputError
from . import Options, fields
from .table import OPTION_SPECS


def split_options(kwargs: dict[str, Any],
                  options: Options | None = None) -> tuple[Options, dict[str, Any]]:
    """``compare``'s ``**kwargs`` → (``options`` updated by the option keywords, the rest)."""
    names = fields()
    for k in kwargs.keys() & FRONT_END_ONLY.keys():
        of = "the command" if k in COMMAND_ONLY else "the magic and the command"
        raise InputError(f"`{k}=` is an option of {of}, not of jitmagic's Python "
                         f"functions: {FRONT_END_ONLY[k]}.")
    chosen = {k: v for k, v in kwargs.items() if k in names}
    rest = {k: v for k, v in kwargs.items() if k not in names}
    return dataclasses.replace(options or Options(), **chosen), rest


class Keywords(NamedTuple):
    """What :func:`keywords_of` split a Python function's ``**kwargs`` into."""

    #: The :class:`Options` the option keywords chose.
    options: Options
    #: The keywords that go to the user's function.
    rest: dict[str, Any]
    #: ``baseline=``: the report to compare with (None: none given).
    baseline: str | os.PathLike | None = None


#: The keyword that is no :class:`Options` field, taken by the functions that return a report.
BASELINE = "baseline"


def keywords_of(function: str, kwargs: dict[str, Any], options: Options | None = None,
                takes: Iterable[str] | None = None) -> Keywords:
    """``kwargs`` → :class:`Options`, ``baseline=`` and the user's own; an option ``function`` does
    not take is refused."""
    known = {*fields(), BASELINE}
    allowed = set(known if takes is None else takes)
    refused = [k for k in kwargs if k in known and k not in allowed]
    if refused:
        takes_what = ", ".join(f"`{k}=`" for k in sorted(allowed)) or "no options"
        said = ", ".join(f"`{k}=`" for k in refused)
        raise InputError(
            f"`jitmagic.{function}` takes {takes_what}, not {said}: "
            f"{'those are' if len(refused) > 1 else 'that is'} an option of "
            f"`jitmagic.compare` (write `jitmagic.compare(fn, *args, {refused[0]}=...)`). "
            f"A keyword argument of your own function spelt so goes in "
            f"`functools.partial(fn, {refused[0]}=...)`.")
    rest = dict(kwargs)
    baseline = rest.pop(BASELINE, None)
    chosen, rest = split_options(rest, options)
    return Keywords(chosen, rest, baseline)


def options_of(function: str, kwargs: dict[str, Any], options: Options | None = None,
               takes: Iterable[str] | None = None) -> tuple[Options, dict[str, Any]]:
    """:func:`keywords_of` for a function that returns no report, and so takes no ``baseline=``."""
    found = keywords_of(function, kwargs, options,
                        takes=fields() if takes is None else takes)
    return found.options, found.rest


def keywords_said(names: Iterable[str]) -> str:
    """A docstring's list of ``names``, each with its flag and help (as ``--help``)."""
    specs = {spec.name: spec for spec in OPTION_SPECS}
    return "\n".join(textwrap.fill(f"``{name}=`` ({specs[name].label}): {specs[name].help}.",
                                   width=88, subsequent_indent="    ") for name in names)


#: The front ends' options the Python functions refuse, saying what to write instead.
COMMAND_ONLY = ("json", "processes")
FRONT_END_ONLY = {
    "save": "call `jitmagic.save(result, path)` on the result it returns",
    "json": "call `jitmagic.save(result, path)` on the result it returns",
    "output": "the result is already returned",
    "no_plot": "nothing is drawn: `print(result)` shows the tables, a notebook cell ending "
               "in `result` the chart",
    "html": "call `jitmagic.save(result, \"report.html\")` on the result it returns",
    "processes": "measuring in several processes at once is the command line's: "
                 "`python -m jitmagic --processes 2 FILE.py` (each process runs the file)",
    "jax": "a function's objects live in this process's JAX, and another release runs in a "
           "Python of its own, where only source can be rebuilt: put the code and its call "
           "in one cell (`%%jitcompare --jax 0.9.0,current`) or in FILE.py (`python -m "
           "jitmagic FILE.py --jax 0.9.0,current`)",
    "trace": "the magic and the command write it: `%%jitcompare --trace trace.json`",
    "bisect": "releases are measured from source: put the code and its call in one cell "
              "(`%%jitcompare --bisect 0.9.0..current`) or in FILE.py (`python -m jitmagic "
              "FILE.py --bisect 0.9.0..current`)",
}


def misspelt_option(message: str) -> str | None:
    """``did you mean `repeat=`?`` for an unexpected keyword argument close to an option's name."""
    found = re.search(r"unexpected keyword argument '(\w+)'", message)
    if found is None:
        return None
    close = difflib.get_close_matches(found[1], list(fields()), n=1)
    return f"did you mean `{close[0]}=`? (`{found[1]}=` went to your function)" if close \
        else None

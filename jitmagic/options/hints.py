"""What an option the parser does not know may have meant (the magics and the commands alike)."""

from __future__ import annotations

import argparse
import difflib
import re

from .._compat import option_strings
from .keywords import FRONT_END_ONLY
from .table import MAGIC, OPTION_SPECS

#: The command's options the magic does not take (said with why, where the magic is given one).
COMMAND_FLAGS = frozenset(spec.flags[-1] for spec in OPTION_SPECS
                          if MAGIC not in spec.places and spec.name in FRONT_END_ONLY)


def with_option_hint(message: str, parser: argparse.ArgumentParser) -> str:
    """argparse's error ``message``, with :func:`unknown_option_hint` for ``parser``'s options,
    or what to write after an option given no value (``--sweep NAME=V1,V2,...``)."""
    hint = unknown_option_hint(message, list(option_strings(parser)))
    if (empty := re.search(r"argument (\S+): expected one argument", message)) and not hint:
        flag = empty[1].split("/")[-1]
        action = parser._option_string_actions.get(flag)
        metavar = str(action.metavar) if action and action.metavar else ""
        hint = f"Write {flag} {metavar}{'.' * (not metavar.endswith('.'))}" if metavar else ""
    return f"{message}. {hint}" if hint else message


def unknown_option_hint(message: str, flags: list[str]) -> str:
    """``Did you mean --vmap (not --vamp)?`` and the options, for an unknown one."""
    found = re.search(r"unrecognized arguments: (.*)", message)
    if found is None:
        return ""
    hints = []
    for given in found[1].split():
        flag = given.split("=")[0]
        if flag in COMMAND_FLAGS and flag not in flags:
            hints.append(f"{flag} is the command's only: {FRONT_END_ONLY[flag.lstrip('-')]}.")
        elif given.startswith("-") and (close := difflib.get_close_matches(flag, flags, n=1,
                                                                           cutoff=0.6)):
            hints.append(f"Did you mean {close[0]} (not {given})?")
    listed = ", ".join(f for f in flags if f.startswith("--"))
    return " ".join(hints) + (" " if hints else "") + f"The options are: {listed}."

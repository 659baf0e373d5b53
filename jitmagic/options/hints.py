"""What an option the parser does not know may have meant (the magics and the commands
say it alike)."""

from __future__ import annotations

import argparse
import difflib
import re

from .._compat import option_strings


def with_option_hint(message: str, parser: argparse.ArgumentParser) -> str:
    """argparse's error ``message``, and after ``unrecognized arguments: --vamp`` a
    ``Did you mean --vmap (not --vamp)?`` and the options ``parser`` lists (those its help
    shows): the magic and the command say it alike."""
    flags = list(option_strings(parser))
    hint = unknown_option_hint(message, flags)
    return f"{message}. {hint}" if hint else message


def unknown_option_hint(message: str, flags: list[str]) -> str:
    """For argparse's ``unrecognized arguments: --vamp``: ``did you mean --vmap?`` and the
    options there are (empty where ``message`` is another error)."""
    found = re.search(r"unrecognized arguments: (.*)", message)
    if found is None:
        return ""
    hints = []
    for given in found[1].split():
        if given.startswith("-"):
            close = difflib.get_close_matches(given.split("=")[0], flags, n=1, cutoff=0.6)
            if close:
                hints.append(f"Did you mean {close[0]} (not {given})?")
    listed = ", ".join(f for f in flags if f.startswith("--"))
    return " ".join(hints) + (" " if hints else "") + f"The options are: {listed}."

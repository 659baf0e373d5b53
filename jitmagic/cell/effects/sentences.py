"""The words of the warnings that say what was put back, and what was left: a list of
names joined as a sentence lists them (:func:`listed`), and the sentence of a row that
put back something the cell's code changed (:func:`said`)."""

from __future__ import annotations


def listed(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def said(change: str, how: str = "") -> str:
    """The sentence of a row that put back ``change`` (``how``: to what, where that is
    not simply as it was)."""
    return (f"the cell, or the code it ran, {change}: it applied while measuring and is "
            f"put back now{how}")


def said_all(changes: list[str]) -> list[str]:
    """One sentence for all of a row's changes (none where there are none)."""
    return [said(listed(changes))] if changes else []

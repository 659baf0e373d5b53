"""A running measurement's progress as one line: what every progress display draws
(stderr, a notebook's display updated in place)."""

from __future__ import annotations

from ..model.progress import Progress
from ..model.shown import register


def line(p: Progress) -> str:
    """``jitcompare g: flat 2/3 · XLA compile · 4.1 s elapsed, ~6 s left``."""
    if p.done:
        return f"{_head(p)}: measured in {p.elapsed_s:.1f} s"
    left = ""
    if p.left_s is not None:
        of_part = f" of the {p.what}" if p.later else ""
        sooner = ", less if it decides sooner" if p.at_most_left else ""
        left = f", ~{p.left_s:.0f} s left{of_part}{sooner}"
    if p.later:
        left += f", then {', '.join(p.later)}"
    return f"{position(p, '≤' if p.at_most else '')} · {p.elapsed_s:.1f} s elapsed{left}"


def _head(p: Progress) -> str:
    return f"jitcompare {p.entry}".rstrip() + (f" [{p.point}]" if p.point else "")


def position(p: Progress, most: str = "") -> str:
    """Where a measurement is, without its times: ``jitcompare g: flat 2/3 · XLA compile``
    (``most``: ``≤`` before the rounds where -r auto may take fewer)."""
    where = p.what if p.what != "comparison" else ""
    if p.row is not None:
        where = f"{where} {p.row}".strip() + (f" {p.round}/{most}{p.rounds}" if p.rounds else "")
    return f"{_head(p)}: {' · '.join(x for x in (where, p.stage) if x)}"


def register_progress() -> None:
    """Word a progress record here (:mod:`jitmagic.model.shown`'s registry)."""
    register("line", Progress, line)

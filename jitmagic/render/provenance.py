"""Where a report came from, as blocks: one line of text (when, which jitmagic, which
options) and, in HTML, the measured source collapsed under a ``<details>``."""

from __future__ import annotations

from ..model.comparison import Comparison
from ..model.sweep import Sweep
from .blocks import Block
from .blocks import Code
from .blocks import Details
from .blocks import Inline
from .blocks import Para


def made_line(c: Comparison | Sweep) -> list[Inline] | None:
    """``made 2026-12-01T12:30:00Z by jitmagic 0.4.0.dev0 with -r 3``; None for a report
    that recorded none of it (written before provenance existed)."""
    version = c.env.get("jitmagic")
    if not (c.created or version or c.options is not None):
        return None
    parts: list[Inline] = [f"made {c.created or '(time not recorded)'}"]
    parts.append(f" by jitmagic {version}" if version else "")
    if c.file:
        parts += [" from ", Code(c.file)]
    if c.options is not None:
        parts += [" with ", Code(c.options) if c.options else "the default options"]
    return parts


def blocks(c: Comparison | Sweep) -> list[Block]:
    """The made-line, and the source collapsed (HTML only)."""
    line = made_line(c)
    out: list[Block] = [Para([line], "note")] if line else []
    if c.source:
        lines = c.source.count("\n") + (not c.source.endswith("\n"))
        out.append(Details((f"source ({lines} line{'s' * (lines != 1)})",), c.source))
    return out

"""Where a report came from, as blocks: one line of text (when, which jitmagic, which
options) and, in HTML, the measured source collapsed under a ``<details>``."""

from __future__ import annotations

import os

from ..model.comparison import Comparison
from ..model.stats.units import fmt_s
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


def sampled_line(c: Comparison | Sweep) -> list[Inline] | None:
    """Where the cold samples were taken, where the backend's compiler remembers work
    between compiles in a process (None elsewhere): each in a fresh process, at what
    cost; or in this one (the session's figures), with the command that takes cold ones."""
    said = c.env.get("cold_samples")
    if not said:
        return None
    if said["where"] == "fresh":
        return [f"cold samples: each in a fresh process ({fmt_s(said['sample_s'])} a "
                "sample), as this backend's compiler remembers compiles within one"]
    command = f"python -m jitmagic {os.path.basename(c.file or 'CELL.py')} {c.options or ''}"
    return ["figures: this session's (a process that has compiled before: this backend's "
            "compiler remembers, and warm runs are left out); for cold ones, each sample "
            "in a fresh process, run ", Code(command.rstrip())]


def blocks(c: Comparison | Sweep) -> list[Block]:
    """The made-line, where the cold samples were taken, and the source collapsed
    (HTML only)."""
    out: list[Block] = [Para([line], "note") for line in (made_line(c), sampled_line(c))
                        if line]
    if c.source:
        lines = c.source.count("\n") + (not c.source.endswith("\n"))
        out.append(Details((f"source ({lines} line{'s' * (lines != 1)})",), c.source))
    return out

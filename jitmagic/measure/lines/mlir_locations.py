"""StableHLO ops counted per user source line, from the ``loc(...)`` entries of a module
lowered with ``debug_info=True`` (named locations, call sites and aliases resolved)."""

from __future__ import annotations

import re
from collections import Counter

from .counts import Key
from .counts import UserCode

_LOC_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$")
_OP_LOC = re.compile(r" loc\((.*)\)\s*$")
_FILE_LOC = re.compile(r'^"((?:[^"\\]|\\.)*)":(\d+)')
_NOT_OPS = ("func.func", "module", "return ", "stablehlo.return", "func.return")


def count_hlo_ops(text: str, user: UserCode) -> Counter:
    """StableHLO ops per user line, from ``as_text(debug_info=True)`` locations (an op
    with regions carries its location on its closing line), each to its innermost frame
    inside a user function."""
    aliases = {m[1]: m[2] for m in map(_LOC_DEF.match, text.splitlines()) if m}
    ranges = _line_ranges(user)
    resolved: dict[str, Key | None] = {}
    ops: Counter = Counter()
    for raw in text.splitlines():
        m = _OP_LOC.search(raw)
        stripped = raw.lstrip()
        if not m or stripped.startswith(_NOT_OPS) or raw.startswith("#"):
            continue
        if stripped.startswith("}") and len(raw) - len(stripped) <= 2:
            continue  # the end of a function or the module
        loc = m.group(1)
        if loc not in resolved:
            resolved[loc] = _user_frame(_frames(loc, aliases), ranges)
        if resolved[loc] is not None:
            ops[resolved[loc]] += 1
    return ops


def _line_ranges(user: UserCode) -> dict[str, list[tuple[int, int]]]:
    ranges: dict[str, list[tuple[int, int]]] = {}
    for span in user.spans():
        ranges.setdefault(span.file, []).append((span.first_line, span.last_line))
    return ranges


def _user_frame(frames: list[Key], ranges: dict[str, list[tuple[int, int]]]) -> Key | None:
    for file, line in frames:
        if any(a <= line <= b for a, b in ranges.get(file, ())):
            return file, line
    return None


def _frames(loc: str, aliases: dict[str, str], depth: int = 0) -> list[Key]:
    """The (file, line) frames of an MLIR location, innermost first."""
    loc = loc.strip()
    if depth > 200 or loc == "unknown":
        return []
    if loc.startswith("#loc"):
        return _frames(aliases.get(loc, "unknown"), aliases, depth + 1)
    if loc.startswith("callsite("):
        callee, caller = _split_callsite(loc[len("callsite("):-1])
        return _frames(callee, aliases, depth + 1) + _frames(caller, aliases, depth + 1)
    m = _FILE_LOC.match(loc)
    if m:
        name = m.group(1)
        if "\\" in name:  # MLIR escapes quotes and backslashes in file names
            name = name.replace('\\"', '"').replace("\\\\", "\\")
        return [(name, int(m.group(2)))]
    if loc.startswith('"') and loc.endswith(")"):  # a named location: "name"(child)
        return _frames(loc[loc.index('"(', 1) + 2:-1], aliases, depth + 1)
    return []


def _split_callsite(body: str) -> tuple[str, str]:
    """``A at B`` of a ``callsite(A at B)``, splitting at the top-level ``at``."""
    level, quoted = 0, False
    for i, ch in enumerate(body):
        if ch == '"' and (i == 0 or body[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and ch == "(":
            level += 1
        elif not quoted and ch == ")":
            level -= 1
        elif not quoted and level == 0 and body.startswith(" at ", i):
            return body[:i], body[i + 4:]
    return body, "unknown"

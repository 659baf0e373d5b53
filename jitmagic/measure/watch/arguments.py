"""The user's names for what a recompile's reason points at: JAX's pytree path (``[0][1]``)
as the parameter it starts at (``lr``), an Equinox static field by class and name
(``MLP.depth``)."""

from __future__ import annotations

import ast
import linecache
import re
import sys
import textwrap
from contextlib import suppress

from ...model.ledger.compiles import PYTREE
from ...model.ledger.compiles import STATIC
from ...usercode import user_file


def named(kind: str, argument: str | None, defined_at: str | None) -> str | None:
    """The argument a difference names: a pytree path as its parameter; a type's
    argument is JAX's own name already."""
    return _argument(argument, defined_at) if kind in (STATIC, PYTREE) else argument


_NODE = re.compile(r"(?P<name>[A-Za-z_]\w*)\[\(")


def static_field(before: str | None, after: str | None) -> tuple[str, str, str] | None:
    """(``MLP.depth``, its value before, after) where the static values that
    changed are one field of a module (Equinox writes its node ``MLP[(Missing, 2)]``: its
    fields' static values in order); None otherwise."""
    if not before or not after:
        return None
    a, b = _nodes(before), _nodes(after)
    if len(a) != len(b):
        return None
    changed = [(name, i, x[i], y[i]) for (name, x), (_, y) in zip(a, b, strict=True)
               if len(x) == len(y) for i in range(len(x)) if x[i] != y[i]]
    if len(changed) != 1:
        return None
    name, i, old, new = changed[0]
    fields = _fields_of(name, len(a[[n for n, _ in a].index(name)][1]))
    return None if fields is None else (f"{name}.{fields[i]}", old, new)


def _nodes(t: str) -> list[tuple[str, list[str]]]:
    """Each ``Name[(a, b)]`` in ``t``: the name and its top-level items."""
    found = []
    for m in _NODE.finditer(t):
        depth, items, start = 0, [], m.end()
        for j in range(m.end(), len(t)):
            ch = t[j]
            if ch in "([{":
                depth += 1
            elif ch in ")]}" and depth:
                depth -= 1
            elif ch == ")":
                items.append(t[start:j].strip())
                break
            elif ch == "," and not depth:
                items.append(t[start:j].strip())
                start = j + 1
        found.append((m["name"], [x for x in items if x]))
    return found


def _fields_of(name: str, count: int) -> list[str] | None:
    """The field names of the one loaded dataclass named ``name`` with ``count``
    fields; None where there is none, or more than one."""
    import dataclasses

    found = {}
    for module in list(sys.modules.values()):
        cls = getattr(module, name, None)
        if isinstance(cls, type) and dataclasses.is_dataclass(cls):
            names = [f.name for f in dataclasses.fields(cls)]
            if len(names) == count:
                found[id(cls)] = names
    return next(iter(found.values())) if len(found) == 1 else None


_PATH = re.compile(r"^\[(?P<part>[01])\]\[(?P<key>\d+|'[^']*')\](?P<rest>.*)$")


def _argument(path: str | None, defined_at: str | None) -> str | None:
    """A static argument's name from JAX's input path (``[0][1]``: the second
    positional argument, ``[1]['n']``: the keyword ``n``), read off the user's ``def`` or
    ``lambda``; the path itself where the source cannot be read, None for a library's
    wrapper's parameter."""
    found = _PATH.match(path or "")
    if found is None:
        return path
    key, rest = found["key"], found["rest"]
    if key.startswith("'"):
        return key.strip("'") + rest
    names = _parameters(defined_at)
    index = int(key)
    if names is None or index >= len(names):  # a library's wrapper (equinox.filter_jit):
        return None  # its own parameter means nothing to the user
    return names[index] + rest


def _parameters(defined_at: str | None) -> list[str] | None:
    """The positional parameter names of the user's function defined at ``file:line``."""
    if not defined_at or ":" not in defined_at:
        return None
    filename, _, line = defined_at.rpartition(":")
    if not line.isdigit() or not user_file(filename):  # a library's wrapper's parameters
        return None
    lines = linecache.getlines(filename)[int(line) - 1:int(line) + 40]
    for end in range(1, len(lines) + 1):
        chunk = textwrap.dedent("".join(lines[:end]))
        with suppress(SyntaxError, ValueError):
            tree = ast.parse(chunk + ("\n    pass" if chunk.rstrip().endswith(":") else ""))
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                    a = node.args
                    return [p.arg for p in (*a.posonlyargs, *a.args)]
    return None

"""JAX's explanation of a tracing-cache miss (JAX 0.10's ``TRACING CACHE MISS`` text) read into a
:class:`~jitmagic.model.ledger.compiles.Reason`, with the user's names for what it points at
(a pytree path as ``lr``, an Equinox static field as ``MLP.depth``); the rest is ``other``."""

from __future__ import annotations

import ast
import dataclasses
import linecache
import re
import sys
import textwrap
from contextlib import suppress
from dataclasses import dataclass

from ...model.ledger.compiles import (
    CONTEXT,
    DTYPE,
    FIRST,
    KEYWORD,
    MAX_ALSO,
    MAX_TEXT,
    OTHER,
    PYTREE,
    SHAPE,
    SHARDING,
    STATIC,
    UNEXPLAINED,
    WEAK_TYPE,
    Change,
    Reason,
)
from ...usercode import user_file

PREFIX = "TRACING CACHE MISS at "

_NEVER = re.compile(r"^\s*never seen function:\s*\n\s*(?P<name>.+?) id=(?P<id>\d+)"
                    r"(?: defined at (?P<defined>.+))?$", re.MULTILINE)
_FOR = re.compile(r"^\s*for (?P<name>.+?)(?: defined at (?P<defined>.+))?$", re.MULTILINE)
_TYPE = re.compile(r"^\s*\* at (?P<arg>.+?), now (?P<new>.+?) and before (?P<old>.+?)"
                   r"(?:https?://\S*)?$")
_TREE = re.compile(r"^\s*\* at input path (?P<path>.*?), now (?P<new>.+?) and before "
                   r"(?P<old>.+?)(?:, so (?P<why>.*))?$", re.DOTALL)
_CONTEXT = re.compile(r"^\s*\* (?P<name>.+?) differs: now (?P<new>.+?) and before (?P<old>.+)$")
_KEYS = re.compile(r"symmetric difference of key sets: (?P<keys>.+)$")
_STATIC = re.compile(r"Static\(val=(?P<val>.*)\)$")
_CLASS = re.compile(r"<class '(?:[\w.]*\.)?(?P<name>[\w]+)'>")
_WEAK = re.compile(r"\{weak_type=(True|False)\}")
_ARRAY = re.compile(r"^(?P<dtype>[a-z]+\d*)\[(?P<shape>[^\]]*)\]")


@dataclass(frozen=True, slots=True)
class Miss:
    """One logged miss: the call's place, the function (and its object's id), and why."""

    call_site: str
    function: str
    function_id: int | None
    defined_at: str | None
    reason: Reason
    #: JAX's "seen another function defined on the same line" note.
    same_line: bool = False


def read(message: str) -> Miss | None:
    """The miss ``message`` describes; None where it is not a cache-miss explanation."""
    if not message.startswith(PREFIX):
        return None
    head, _, body = message.partition("\n")
    site = head[len(PREFIX):].rstrip(":")
    text = body[:MAX_TEXT]
    never = _NEVER.search(body)
    if never is not None:
        return Miss(site, never["name"], int(never["id"]), never["defined"],
                    Reason(FIRST, text=text), same_line="seen another function" in body)
    named = _FOR.search(body)
    if named is None:
        return Miss(site, "?", None, None, Reason(OTHER, text=text))
    return Miss(site, named["name"], None, named["defined"], _difference(body, text))


def _difference(body: str, text: str) -> Reason:
    """A seen function's reason: the first difference JAX names, the others beside it."""
    changes, context = _changes(body)
    changes = _moved(changes)
    if changes:
        first, *rest = changes
        return Reason(first.kind, first.argument, first.before, first.after, len(rest), text,
                      tuple(rest[:MAX_ALSO]))
    return Reason(CONTEXT if context else UNEXPLAINED if "explanation unavailable" in body
                  else OTHER, text=text)


def _changes(body: str) -> tuple[list[Change], bool]:
    """Each difference JAX names, read in its section, and whether the context differed."""
    section, found, context = None, [], False
    item: tuple[str | None, str] | None = None  # a `* ` line and the lines it runs on to
    for line in body.splitlines():
        said = line.strip()
        for head, name in _SECTIONS:
            if said.startswith(head):
                section, context = name, context or name == "context"
                break
        else:
            if not said.startswith("* "):  # a value written on many lines (NNX's GraphDef)
                item = item and (item[0], f"{item[1]}\n{line}")
                continue
        if item is not None:
            found += _change(*item)
        item = (section, line) if said.startswith("* ") else None
    if item is not None:
        found += _change(*item)
    return found, context


_LENGTH = re.compile(r"length (\d+)")


def _moved(changes: list[Change]) -> list[Change]:
    """``changes`` with a keyword passed by position on the other call made one change."""
    keyword = [c for c in changes if c.kind == KEYWORD and c.before != "swapped"]
    tuples = [c for c in changes if c.kind == PYTREE and c.argument == "[0]"]
    if len(keyword) != 1 or len(tuples) != 1:
        return changes
    (k,), (t,) = keyword, tuples
    lengths = [int(m[1]) if (m := _LENGTH.search(v or "")) else 0 for v in (t.before, t.after)]
    if (lengths[1] > lengths[0]) != (k.before == "passed"):  # the tuple grew as it left
        return changes
    said = ("by keyword", "by position") if k.before == "passed" else \
        ("by position", "by keyword")
    return [Change(KEYWORD, k.argument, *said) if c is k else c for c in changes
            if c is not t]


_SECTIONS = (("different input pytree:", "pytree"), ("different input types:", "types"),
             ("Tracing context doesn't match", "context"), ("Debug info doesn't match", "debug"))


def _change(section: str | None, line: str) -> list[Change]:
    if section == "pytree":
        tree = _TREE.match(line)
        return [] if tree is None else [_tree(tree)]
    if section == "types":
        typed = _TYPE.match(line)
        return [] if typed is None else _types(typed["arg"], typed["old"].strip(),
                                               typed["new"].strip())
    if section == "context":
        ctx = _CONTEXT.match(line)
        return [] if ctx is None else [Change(CONTEXT, ctx["name"], _clip(ctx["old"]),
                                              _clip(ctx["new"]))]
    return []


def _types(arg: str, old: str, new: str) -> list[Change]:
    """A changed type: weak type, else dtype, else shape, else placement (said beside too)."""
    arg, old, new = _clip(arg) or "", _clip(old) or "", _clip(new) or ""
    if _WEAK.search(old) or _WEAK.search(new):
        return [Change(WEAK_TYPE, arg, _weak(old), _weak(new))]
    a, b = _typed(old), _typed(new)
    if a is None or b is None:
        return [Change(OTHER, arg, old, new)]
    # a new rank re-writes every dimension's placement: only the mesh's part then counts
    moved = a[2] != b[2] if len(a[1]) == len(b[1]) else a[2][-1] != b[2][-1]
    placed = [Change(SHARDING, arg, old, new)] if moved else []
    if a[0] != b[0]:
        return [Change(DTYPE, arg, old, new), *placed]
    if a[1] != b[1]:
        return [Change(SHAPE, arg, old, new), *placed]
    return placed or [Change(OTHER, arg, old, new)]


def _typed(t: str) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
    """(dtype, sizes, placement) of a type as JAX writes it (``f32[8@x,4]``)."""
    found = _ARRAY.match(t)
    if found is None:
        return None
    dims = [d.strip() for d in found["shape"].split(",")] if found["shape"].strip() else []
    sizes = tuple(d.partition("@")[0] for d in dims)
    return found["dtype"], sizes, (*(d.partition("@")[2] for d in dims),
                                   t[found.end():].strip())


def _tree(found: re.Match[str]) -> Change:
    """A changed pytree: a static argument's value, else the structure."""
    new, old = found["new"], found["old"]
    s_new, s_old = _STATIC.search(new), _STATIC.search(old)
    if s_new and s_old:
        return Change(STATIC, _clip(found["path"]), _clip(s_old["val"]), _clip(s_new["val"]))
    graph = _graph_change(old, new)
    if graph is not None:  # an NNX module's graph: the static attributes that differ
        return Change(PYTREE, _clip(found["path"]) or None, *graph)
    keys = _KEYS.search(found["why"] or "")  # JAX's "symmetric difference of key sets"
    if keys and found["path"] == "[1]":  # the keyword arguments: one passed, then not
        return _keyword(keys["keys"], _node(old), _node(new))
    gone = f" (keys {keys['keys']} differ)" if keys else ""
    return Change(PYTREE, _clip(found["path"]) or None, _clip(_node(old)),
                  _clip(_node(new) + gone))


_CHILDREN = re.compile(r"with (\d+) child")


def _keyword(keys: str, old: str, new: str) -> Change:
    """A keyword passed on one call and not another: ``passed``/``left out``/``swapped``."""
    names = ", ".join(re.findall(r"'([^']*)'", keys)) or keys
    before, now = (int(m[1]) if (m := _CHILDREN.search(t)) else 0 for t in (old, new))
    said = ("passed", "left out") if now < before else ("left out", "passed") \
        if now > before else ("swapped", "swapped")
    return Change(KEYWORD, _clip(names), *said)


_GRAPH_NODE = re.compile(r"(?P<kind>NodeDef|VariableDef|NodeRef)\(\s*type='(?P<type>[\w.]+)'")
_GRAPH_ATTRS = re.compile(r"\((?:'(?P<key>\w+)'|(?P<index>\d+)), "
                          r"(?P<what>Static\(value=|NodeAttr\(\))")
_NUM_ATTRS = re.compile(r"num_attributes=(\d+)")


def _graph_change(old: str, new: str) -> tuple[str, str] | None:
    """(before, after) of the static attributes two NNX ``GraphDef``s of one shape differ in."""
    if "GraphDef(" not in old or "GraphDef(" not in new:
        return None
    a, b = _graph_attributes(old), _graph_attributes(new)
    if a is None or b is None or [k for k, _ in a] != [k for k, _ in b]:
        return None
    changed = [(key, x, y) for (key, x), (_, y) in zip(a, b, strict=True) if x != y]
    if not changed:
        return None
    return (", ".join(f"{key}={x}" for key, x, _ in changed),
            ", ".join(f"{key}={y}" for key, _, y in changed))


def _graph_attributes(t: str) -> list[tuple[str, str]] | None:
    """Each static attribute of a ``GraphDef`` in order (``Dropout.rate``), with its value."""
    head, _, attrs = t.partition("attributes=[")
    found: list[tuple[str, str | None]] = []
    for m in _GRAPH_ATTRS.finditer(attrs):
        key = m["key"] if m["key"] is not None else m["index"]
        static = m["what"].startswith("Static")  # its value runs to its bracket's close
        found.append((key, attrs[m.end():_items(attrs, m.end())[1]].strip() if static else None))
    if not found:
        return None
    owners = _owners(head, [value is None for _, value in found])
    return [(f"{owner}.{key}" if owner else key, value)
            for (key, value), owner in zip(found, owners or [None] * len(found), strict=True)
            if value is not None and not key.startswith("_pytree__")]


def _owners(nodes: str, child: list[bool]) -> list[str | None] | None:
    """The class holding each attribute (``child``: a node); None where the walk misses any."""
    found = list(_GRAPH_NODE.finditer(nodes))
    sizes = []
    for i, m in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(nodes)
        n = _NUM_ATTRS.search(nodes, m.end(), end)
        sizes.append((m["type"].rpartition(".")[2], int(n[1]) if n else 0))
    owners: list[str | None] = []
    next_node = 0

    def visit() -> None:
        nonlocal next_node
        kind, size = sizes[next_node]
        next_node += 1
        for _ in range(size):
            owners.append(kind)
            if child[len(owners) - 1]:
                visit()

    try:
        visit()
    except (IndexError, RecursionError):
        return None
    return owners if (next_node, len(owners)) == (len(sizes), len(child)) else None


def _items(t: str, start: int) -> tuple[list[str], int | None]:
    """The top-level items from ``start`` to the closing bracket, and where it is (or None)."""
    depth, begin, items = 0, start, list[str]()
    for j in range(start, len(t)):
        if t[j] in "([{":
            depth += 1
        elif t[j] in ")]}" and depth:
            depth -= 1
        elif t[j] in ")]}":
            return [*items, t[begin:j].strip()], j
        elif t[j] == "," and not depth:
            items.append(t[begin:j].strip())
            begin = j + 1
    return items, None


def _weak(t: str) -> str:
    """``f32[]{weak_type=True}`` as ``f32[] (weak)``, its strong twin as ``f32[]``."""
    return _WEAK.sub(lambda m: " (weak)" if m[1] == "True" else "", t)


def _node(t: str) -> str:
    """A pytree node with ``<class 'x.y.dict'>`` shortened to ``dict``."""
    return _CLASS.sub(lambda m: m["name"], t).strip()


def _clip(t: str | None) -> str | None:
    """At most :data:`MAX_TEXT` characters (a static argument's repr can be megabytes)."""
    return t if t is None else t[:MAX_TEXT]


def named(kind: str, argument: str | None, defined_at: str | None) -> str | None:
    """The argument a difference names: a pytree path read as its parameter."""
    return _argument(argument, defined_at) if kind in (STATIC, PYTREE) else argument


_NODE = re.compile(r"(?P<name>[A-Za-z_]\w*)\[\(")


def static_field(before: str | None, after: str | None) -> tuple[str, str, str] | None:
    """(``MLP.depth``, before, after) where one Equinox module field changed; None otherwise."""
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
    return [(m["name"], [x for x in _items(t, m.end())[0] if x]) for m in _NODE.finditer(t)]


def _fields_of(name: str, count: int) -> list[str] | None:
    """The field names of the one loaded dataclass ``name`` with ``count`` fields."""
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
    """A static argument's name from JAX's path off the user's ``def`` (None: a library's)."""
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

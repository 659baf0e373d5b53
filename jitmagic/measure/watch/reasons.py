"""JAX's explanation of a tracing-cache miss, read into a :class:`~jitmagic.model.ledger.Reason`.

With ``jax_explain_cache_misses`` on, JAX logs one WARNING per miss (JAX 0.10,
``jax._src.interpreters.partial_eval.explain``)::

    TRACING CACHE MISS at FILE:LINE:COL (caller):
      never seen function:
        NAME id=ID defined at FILE:LINE
      [but seen another function defined on the same line; ...]

or, for a function seen before, ``for NAME defined at FILE:LINE``, then the closest
previous key's difference: ``different input types:`` with one ``* at ARG, now NEW and
before OLD`` line per argument, ``different input pytree:`` with ``* at input path PATH,
now A and before B, so WHY`` lines (a static argument is a ``Static(val=...)`` node),
``Tracing context doesn't match`` (a config value), or another sentence, kept as JAX
wrote it. Anything this module cannot read becomes an ``other`` reason with JAX's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import replace

from ...model.ledger import CONTEXT
from ...model.ledger import DTYPE
from ...model.ledger import FIRST
from ...model.ledger import MAX_TEXT
from ...model.ledger import OTHER
from ...model.ledger import PYTREE
from ...model.ledger import SHAPE
from ...model.ledger import STATIC
from ...model.ledger import UNEXPLAINED
from ...model.ledger import WEAK_TYPE
from ...model.ledger import Reason

PREFIX = "TRACING CACHE MISS at "

_NEVER = re.compile(r"^\s*never seen function:\s*\n\s*(?P<name>.+?) id=(?P<id>\d+)"
                    r"(?: defined at (?P<defined>.+))?$", re.MULTILINE)
_FOR = re.compile(r"^\s*for (?P<name>.+?)(?: defined at (?P<defined>.+))?$", re.MULTILINE)
_TYPE = re.compile(r"^\s*\* at (?P<arg>.+?), now (?P<new>.+?) and before (?P<old>.+?)"
                   r"(?:https?://\S*)?$", re.MULTILINE)
_TREE = re.compile(r"^\s*\* at input path (?P<path>.*?), now (?P<new>.+?) and before "
                   r"(?P<old>.+?)(?:, so (?P<why>.*))?$", re.MULTILINE)
_CONTEXT = re.compile(r"^\s*\* (?P<name>.+?) differs: now (?P<new>.+?) and before (?P<old>.+)$",
                      re.MULTILINE)
_STATIC = re.compile(r"Static\(val=(?P<val>.*)\)$")
_CLASS = re.compile(r"<class '(?:[\w.]*\.)?(?P<name>[\w]+)'>")
_WEAK = re.compile(r"\{weak_type=(True|False)\}")
_ARRAY = re.compile(r"^(?P<dtype>[a-z]+\d*)\[(?P<shape>[^\]]*)\]")


@dataclass(frozen=True, slots=True)
class Miss:
    """One logged miss: where the call was, which function (and which object, by id),
    and why."""

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
    reason = _difference(body, text)
    clipped = replace(reason, argument=_clip(reason.argument), before=_clip(reason.before),
                      after=_clip(reason.after))
    return Miss(site, named["name"], None, named["defined"], clipped)


def _difference(body: str, text: str) -> Reason:
    """The reason of a miss on a function seen before, from the closest key's difference."""
    if "different input types:" in body:
        found = _TYPE.findall(body)
        if found:
            arg, new, old = found[0]
            return _types(arg, _clean(old), _clean(new), len(found) - 1, text)
    if "different input pytree:" in body:
        trees = list(_TREE.finditer(body))
        if trees:
            return _tree(trees[0], len(trees) - 1, text)
    if "Tracing context doesn't match" in body:
        ctx = _CONTEXT.search(body)
        if ctx is None:
            return Reason(CONTEXT, text=text)
        return Reason(CONTEXT, ctx["name"], ctx["old"], ctx["new"], text=text)
    if "explanation unavailable" in body:
        return Reason(UNEXPLAINED, text=text)
    return Reason(OTHER, text=text)


def _types(arg: str, old: str, new: str, more: int, text: str) -> Reason:
    """A changed argument type: its weak type, else its dtype, else its shape."""
    if _WEAK.search(old) or _WEAK.search(new):
        return Reason(WEAK_TYPE, arg, _weak(old), _weak(new), more, text)
    a, b = _ARRAY.match(old), _ARRAY.match(new)
    if a and b and a["dtype"] != b["dtype"]:
        return Reason(DTYPE, arg, old, new, more, text)
    if a and b and a["shape"] != b["shape"]:
        return Reason(SHAPE, arg, old, new, more, text)
    return Reason(OTHER, arg, old, new, more, text)


def _tree(found: re.Match[str], more: int, text: str) -> Reason:
    """A changed pytree: a static argument's value, else the structure."""
    new, old = found["new"], found["old"]
    s_new, s_old = _STATIC.search(new), _STATIC.search(old)
    if s_new and s_old:
        return Reason(STATIC, found["path"], s_old["val"], s_new["val"], more, text)
    return Reason(PYTREE, found["path"] or None, _node(old), _node(new), more, text)


def _weak(t: str) -> str:
    """``f32[]{weak_type=True}`` as ``f32[] (weak)``, its strong twin as ``f32[]``."""
    return _WEAK.sub(lambda m: " (weak)" if m[1] == "True" else "", t)


def _node(t: str) -> str:
    """A pytree node as JAX writes it, with ``<class 'x.y.dict'>`` shortened to ``dict``."""
    return _CLASS.sub(lambda m: m["name"], t).strip()


def _clip(t: str | None) -> str | None:
    """A value as the ledger keeps it: at most :data:`MAX_TEXT` characters (a static
    argument's repr can be megabytes)."""
    return t if t is None else t[:MAX_TEXT]


def _clean(t: str) -> str:
    return re.sub(r"https?://\S*$", "", t).strip()

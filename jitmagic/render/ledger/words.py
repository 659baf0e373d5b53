"""The ledger's small words: limits, places, clipped names, eager ops."""

from __future__ import annotations

import os
import re
from contextlib import suppress

from ...model.ledger import Ledger, compiles
from ...model.ledger.rows import FunctionRow
from ...model.saved.schema import printable
from ...usercode import user_file
from ..blocks import shown_name

#: Functions shown in the table and the reasons; the rest are counted in one line.
MAX_ROWS = 12
#: Reasons shown per function, and call lines per reason.
MAX_REASONS, MAX_LINES = 6, 3
#: Values of a changing argument shown (``f32[3] → f32[4] → …``).
MAX_VALUES = 4
CLOCK = "wall time, from JAX's own compile events"
#: What ``%%jitwatch`` and ``%jitwatch`` watch: the ledgers that can offer a ``%jitcompare``.
MAGIC_SOURCES = ("the cell", "the statement")


#: Each kind of reason (:data:`~jitmagic.model.ledger.compiles.KINDS`) in words.
KIND_WORDS = {
    compiles.FIRST: "first", compiles.WEAK_TYPE: "weak type", compiles.SHAPE: "shape",
    compiles.DTYPE: "dtype", compiles.SHARDING: "sharding", compiles.STATIC: "static value",
    compiles.NEW_FUNCTION: "new function", compiles.PYTREE: "pytree",
    compiles.CONTEXT: "context", compiles.KEYWORD: "keyword argument",
    compiles.EAGER: "eager op", compiles.UNEXPLAINED: "no reason", compiles.OTHER: "other"}


def defined(site: str | None, ledger: Ledger) -> str:
    """`` (defined at line 3)`` after a function's name; nothing where not known."""
    place = defined_place(site, ledger)
    return f" (defined at {printable(place)})" if place != "—" else ""


def defined_place(site: str | None, ledger: Ledger, eager: bool = False) -> str:
    """Where a row's function was defined: ``line 3``, ``eager op``, a library's file, or ``—``."""
    found = _SITE.match(site or "")
    if eager or found is None:
        return "eager op" if eager else "—"
    if user_file(found["file"]):
        return place(site, ledger) or "—"
    for root in ("site-packages", "dist-packages"):
        _, sep, below = found["file"].rpartition(f"{os.sep}{root}{os.sep}")
        if sep:
            return f"{below}:{found['line']}"
    return f"{_normal(found['file'])}:{found['line']}"


_SITE = re.compile(r"^(?P<file>.*?):(?P<line>\d+)(?::\d+)?(?P<rest>(?: \(.*\))?)$")


def place(site: str | None, ledger: Ledger) -> str | None:
    """``file:line`` as a reader wants it: ``line 3`` in the cell, else a relative path."""
    found = _SITE.match(site or "")
    if found is None:
        return site or None
    filename, line = _normal(found["file"]), found["line"]
    if ledger.source_file is not None and filename == _normal(ledger.source_file):
        return f"line {line}"
    if os.path.isabs(filename):
        with suppress(ValueError):
            rel = os.path.relpath(filename)
            filename = filename if rel.startswith("..") else rel
    return f"{filename}:{line}"


def _normal(filename: str) -> str:
    """``filename`` without ``..`` in it; a cell's name as it is."""
    return os.path.normpath(filename) if os.path.isabs(filename) else filename


def clip(s: str, width: int = 40) -> str:
    return shown_name(printable(s), width)


def clip_place(s: str, width: int = 40) -> str:
    """A place cut from its start at a folder (``…/deep/train.py:12``)."""
    s = printable(s)
    if len(s) <= width:
        return s
    tail = s[-(width - 1):]
    folder = tail.find(os.sep)
    return "…" + (tail[folder:] if folder >= 0 else tail)


#: JAX's name of an eager op → the last names of the calls users write that run it.
WRITTEN = {"stage": ("asarray", "array")}
#: What each of them is, in words (said once, under the table).
EXPLAINED = {
    "stage": "`stage` is JAX's own op behind `jnp.array` and `jnp.asarray` of a Python number "
             "or a NumPy array: it copies the value onto the device, and compiles once per "
             "shape and dtype (calls with the same shape and dtype reuse it)",
}
#: A call as written: its dotted name (``jnp.asarray``, ``jax.numpy.array``) then ``(``.
_CALL = re.compile(r"((?:[A-Za-z_]\w*\.)*)([A-Za-z_]\w*)\s*\(")
#: Prefixes of NumPy's own ``array``/``asarray``, which compile nothing.
_NUMPY = ("np", "numpy", "onp")


def written_as(function: str, call_text: str | None) -> str | None:
    """The user's call that ran JAX's eager op ``function``; None where there is none."""
    names = WRITTEN.get(function)
    if not names or not call_text:
        return None
    for m in _CALL.finditer(call_text):
        prefix, name = m[1].rstrip("."), m[2]
        if name in names and prefix.rsplit(".", 1)[-1] not in _NUMPY:
            return f"{prefix}.{name}" if prefix else name
    return None


def shown(function: str, call_text: str | None) -> str:
    """An eager op's name as shown: ``jnp.asarray (stage)``, or JAX's name alone."""
    written = written_as(function, call_text)
    return f"{written} ({function})" if written else function


def explanations(rows: list[FunctionRow]) -> list[str]:
    """What each eager op of ``rows`` that JAX names by its internals is (once each)."""
    return [EXPLAINED[f] for f in dict.fromkeys(r.function for r in rows if r.eager)
            if f in EXPLAINED]

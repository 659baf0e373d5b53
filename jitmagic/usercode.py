"""What counts as the user's code: the one rule that discovery, ``--lines`` and the
tracebacks jitmagic shows all follow.

Code is the user's when its file is a notebook or ``%%jitcompare`` cell, or a
real file outside the interpreter's standard library, its site-packages and
jitmagic itself (a local ``mylayers.py`` is the user's; JAX, NumPy, IPython,
Equinox are not). Code with no file of its own (``<string>``: ``exec``,
``python -c``, the methods ``dataclasses`` and ``NamedTuple`` generate) is the user's
where the globals it runs in are (:func:`users_namespace`).
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
from typing import Any

#: File names IPython and jitmagic give the cells they compile.
CELL_PREFIXES = ("<jitcompare-cell-", "<ipython-input-")

PACKAGE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")

#: The file name jitmagic gives code it compiles itself (a nested helper's trampoline).
OWN_SOURCE = "<jitmagic-"


def user_file(filename: str) -> bool:
    """Whether code in ``filename`` is the user's: a cell, or a file outside the
    interpreter's own libraries and jitmagic."""
    if filename.startswith(CELL_PREFIXES):
        return True
    if filename.startswith("<"):
        return False  # <string> (dataclass, NamedTuple methods), <frozen ...>
    path = os.path.abspath(filename)
    return not any(path.startswith(p) for p in library_dirs())


def sourceless(filename: str) -> bool:
    """Code compiled from a string (``<string>``, ``<lambda>``): whose it is depends on
    the globals it runs in, not on its file name."""
    return (filename.startswith("<") and not filename.startswith(CELL_PREFIXES)
            and not filename.startswith(("<frozen", OWN_SOURCE)))


def users_namespace(namespace: dict[str, Any],
                    entry_namespace: dict[str, Any] | None = None) -> bool:
    """Whether code compiled from a string (:func:`sourceless`) that runs in
    ``namespace`` is the user's: the one rule of discovery and ``--lines``.

    It is in the namespace of an entry that has no file itself (``entry_namespace``:
    ``python -c``, an ``exec``'d script), in a module of the user's, or in a
    ``__main__`` that is no module's (a notebook's). Anything else is not: a library
    module's, a namedtuple's, a bare dict nobody named (whose it is, is unknown)."""
    if namespace is entry_namespace:
        return True
    label = namespace.get("__name__")
    module = sys.modules.get(str(label))
    if module is not None and getattr(module, "__dict__", None) is namespace:
        return user_file(getattr(module, "__file__", None) or "<")
    return label == "__main__"


@functools.lru_cache(maxsize=1)
def library_dirs() -> tuple[str, ...]:
    """The interpreter's standard library and package folders, and jitmagic's own."""
    paths = sysconfig.get_paths()
    dirs = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    dirs |= {sys.prefix, sys.base_prefix, sys.exec_prefix, PACKAGE_DIR}
    return tuple(os.path.join(os.path.abspath(d), "") for d in dirs if d)

"""What counts as the user's code, the one rule discovery, the state check, ``--lines``, the ledger
and tracebacks follow: a cell, or a file of no installed distribution, the standard library,
jitmagic or JAX's stack (``--mine`` names more); code with no file of its own, where its globals
are the user's."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib.metadata
import importlib.util
import json
import os
import site
import sys
import sysconfig
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

#: File names IPython and jitmagic give the cells they compile.
CELL_PREFIXES = ("<jitcompare-cell-", "<ipython-input-")

PACKAGE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")

#: The file name jitmagic gives code it compiles itself (a nested helper's trampoline).
OWN_SOURCE = "<jitmagic-"

#: Top-level modules never the user's, even with no distribution to say so (a JAX checkout).
STACK = frozenset({"jax", "jaxlib", "jax_plugins", "libtpu", "numpy", "ml_dtypes",
                   "opt_einsum", "scipy", "IPython", "ipykernel", "ipywidgets",
                   "matplotlib", "jitmagic"})

#: Top-level module names the user declared theirs (``--mine``) for the running measurement.
_MINE: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "jitmagic_mine", default=frozenset())


def user_file(filename: str) -> bool:
    """Whether code in ``filename`` is the user's (the rule above)."""
    if filename.startswith(CELL_PREFIXES):
        return True
    if filename.startswith("<"):
        return False  # <string> (dataclass, NamedTuple methods), <frozen ...>
    return _cached_user_path(os.path.abspath(filename), _MINE.get(), tuple(sys.path))


def called_by_user(passed_over: Collection[str]) -> bool:
    """Whether the first frame above the caller's caller outside the files ``passed_over`` (the
    library's own: ``os.environ``'s, ``warnings``') is the user's: who set a setting or a filter."""
    frame = sys._getframe(2)
    while frame.f_back is not None and frame.f_code.co_filename in passed_over:
        frame = frame.f_back
    return user_file(frame.f_code.co_filename)


def jax_file(filename: str | None) -> bool:
    """Whether code in ``filename`` is JAX's own (its ``jax`` package's)."""
    return bool(filename) and os.path.abspath(str(filename)).startswith(_jax_folder())


@functools.lru_cache(maxsize=1)
def _jax_folder() -> str:
    """The ``jax`` package's folder (with a separator), found without importing it."""
    module = sys.modules.get("jax")
    found = getattr(module, "__file__", None)
    if found is None:
        spec = importlib.util.find_spec("jax")
        found = spec.origin if spec is not None else None
    return os.path.join(os.path.dirname(os.path.abspath(found)), "") if found else "\0"


@contextlib.contextmanager
def mine(modules: Iterable[str]) -> Iterator[None]:
    """Within, code of the top-level ``modules`` is the user's."""
    token = _MINE.set(frozenset(m.split(".")[0] for m in modules))
    try:
        yield
    finally:
        _MINE.reset(token)


def sourceless(filename: str) -> bool:
    """Code compiled from a string: whose it is depends on its globals."""
    return (filename.startswith("<") and not filename.startswith(CELL_PREFIXES)
            and not filename.startswith(("<frozen", OWN_SOURCE)))


def users_namespace(namespace: dict[str, Any],
                    entry_namespace: dict[str, Any] | None = None) -> bool:
    """Whether code compiled from a string that runs in ``namespace`` is the user's."""
    if namespace is entry_namespace:
        return True
    label = namespace.get("__name__")
    module = sys.modules.get(str(label))
    if module is not None and getattr(module, "__dict__", None) is namespace:
        return user_file(getattr(module, "__file__", None) or "<")
    return label == "__main__"


@dataclass(frozen=True)
class Layout:
    """Where an interpreter keeps its libraries, and which distributions it has."""

    #: The standard library's folders.
    stdlib: tuple[str, ...]
    #: Folders of installed packages (site-packages, Debian's dist-packages).
    site: tuple[str, ...]
    #: The import path, whose folders name a file's top-level module.
    path: tuple[str, ...]
    #: Top-level module → the folders its (non-editable) distributions were installed in.
    distributed: Mapping[str, tuple[str, ...]]


def is_users(path: str, layout: Layout, mine: frozenset[str] = frozenset()) -> bool:
    """Whether the file at absolute ``path`` is the user's under ``layout`` (links followed)."""
    paths = (path, os.path.realpath(path))
    tops = {t for p in paths if (t := top_module(p, layout.path)) is not None}
    if tops & mine:
        return True
    if tops & STACK or _under(paths, (PACKAGE_DIR, *layout.stdlib)):
        return False
    if any(_under(paths, layout.distributed.get(t, ())) for t in tops):
        return False
    return not _under(paths, layout.site)


def top_module(path: str, import_path: Iterable[str]) -> str | None:
    """The top-level module a file at ``path`` is imported as (None: none)."""
    folders = [os.path.join(os.path.abspath(p or os.curdir), "") for p in import_path]
    holding = [f for f in folders if path.startswith(f)]
    if not holding:
        return None
    first = path[len(max(holding, key=len)):].split(os.sep)[0]
    name = first.removesuffix(".py")
    return name if name.isidentifier() else None


@functools.lru_cache(maxsize=4096)
def _cached_user_path(path: str, mine: frozenset[str], import_path: tuple[str, ...]) -> bool:
    return is_users(path, Layout(_stdlib_dirs(), _site_dirs(), import_path, _distributed()),
                    mine)


def _under(paths: Iterable[str], folders: Iterable[str]) -> bool:
    return any(p.startswith(f) for p in paths for f in folders)


def _folders(paths: Iterable[str | None]) -> tuple[str, ...]:
    """Each folder as given and with links followed (a venv reached through a link)."""
    found = {p for p in paths if p}
    both = {os.path.abspath(p) for p in found} | {os.path.realpath(p) for p in found}
    return tuple(sorted(os.path.join(p, "") for p in both))


@functools.lru_cache(maxsize=1)
def _stdlib_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return _folders([paths.get("stdlib"), paths.get("platstdlib")])


@functools.lru_cache(maxsize=1)
def _site_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    found = [paths.get("purelib"), paths.get("platlib"), site.getusersitepackages()]
    return _folders([*found, *site.getsitepackages()])


@functools.lru_cache(maxsize=1)
def _distributed() -> dict[str, tuple[str, ...]]:
    """Top-level module → the folders its (non-editable) distributions were installed in."""
    found: dict[str, tuple[str, ...]] = {}
    for top, names in importlib.metadata.packages_distributions().items():
        dists = [d for n in set(names) for d in importlib.metadata.distributions(name=n)]
        found[top] = _folders(str(d.locate_file("")) for d in dists if _installed(d))
    return found


def _installed(dist: importlib.metadata.Distribution) -> bool:
    """Whether ``dist`` was installed as a library (not editable, no stray ``.egg-info``)."""
    if _editable(dist):
        return False
    egg_info = dist.read_text("PKG-INFO") is not None and dist.read_text("METADATA") is None
    return not egg_info or _under((str(dist.locate_file("")),), _site_dirs())


def _editable(dist: importlib.metadata.Distribution) -> bool:
    """Whether ``dist`` is an editable install (PEP 610's ``direct_url.json``)."""
    try:
        return bool(json.loads(dist.read_text("direct_url.json") or "{}")
                    .get("dir_info", {}).get("editable"))
    except (ValueError, AttributeError):
        return False

"""The kinds of :class:`~jitmagic.model.notes.Note` that say what a cell's code changed
outside its scratch namespace and jitmagic put back after measuring it (or left, where
another thread changed it): one kind per row of :mod:`jitmagic.cell.effects.table`, each
holding the names and values (``repr``) the sentence gives; their sentences are in
:mod:`jitmagic.render.notes.effects`, word for word what the cell layer wrote before."""

from __future__ import annotations

from dataclasses import dataclass

from .note import Note
from .note import kind

# --- the process-wide rows -----------------------------------------------------------


@kind("figures_closed")
@dataclass(frozen=True)
class FiguresClosed(Note):
    """The cell opened ``count`` pyplot figures while measuring: closed."""

    count: int


@kind("rc_put_back")
@dataclass(frozen=True)
class RcPutBack(Note):
    """The cell changed matplotlib's rcParams ``keys``: put back."""

    keys: tuple[str, ...]


@kind("listeners_put_back")
@dataclass(frozen=True)
class ListenersPutBack(Note):
    """The cell registered ``added`` and unregistered ``removed`` jax.monitoring
    listeners: put back."""

    added: int
    removed: int


@kind("filters_put_back")
@dataclass(frozen=True)
class FiltersPutBack(Note):
    """The cell changed the warnings ``filters`` and/or replaced ``showwarning``."""

    filters: bool
    showwarning: bool


@kind("logging_put_back")
@dataclass(frozen=True)
class LoggingPutBack(Note):
    """The cell called ``logging.disable`` (``disable``) and/or changed the level or
    handlers of ``loggers`` (their names; "" the root logger)."""

    disable: bool
    loggers: tuple[str, ...]


@kind("numpy_put_back")
@dataclass(frozen=True)
class NumpyPutBack(Note):
    """The cell changed numpy's settings through ``call`` ("np.seterr" or
    "np.set_printoptions"): ``settings`` to ``values`` (each a ``repr``)."""

    call: str
    settings: tuple[str, ...]
    values: tuple[str, ...]


@kind("decimal_put_back")
@dataclass(frozen=True)
class DecimalPutBack(Note):
    """The cell replaced decimal's context (``replaced``) and/or changed its
    ``settings`` to ``values`` from ``was`` (each a ``repr``)."""

    replaced: bool
    settings: tuple[str, ...]
    values: tuple[str, ...]
    was: tuple[str, ...]


@kind("setting_put_back")
@dataclass(frozen=True)
class SettingPutBack(Note):
    """The cell set a setting of one value by ``call`` ("sys.setrecursionlimit",
    "os.umask") to ``value`` from ``was`` (each a ``repr``)."""

    call: str
    value: str
    was: str


@kind("signals_put_back")
@dataclass(frozen=True)
class SignalsPutBack(Note):
    """The cell set the handlers of ``signals`` (their names)."""

    signals: tuple[str, ...]


@kind("environ_put_back")
@dataclass(frozen=True)
class EnvironPutBack(Note):
    """The cell changed the environment variables ``changed`` and added ``added``."""

    changed: tuple[str, ...]
    added: tuple[str, ...]


@kind("jax_environ_put_back")
@dataclass(frozen=True)
class JaxEnvironPutBack(Note):
    """The cell changed JAX's or XLA's variables: ``late`` after JAX read them (no
    effect), ``took`` before (in effect for the rest of the kernel); ``added``: those
    of them it added."""

    late: tuple[str, ...]
    took: tuple[str, ...]
    added: tuple[str, ...]


@kind("cwd_put_back")
@dataclass(frozen=True)
class CwdPutBack(Note):
    """The cell changed the working directory to ``now`` (None: it was removed) from
    ``was``."""

    now: str | None
    was: str


@kind("sys_list_put_back")
@dataclass(frozen=True)
class SysListPutBack(Note):
    """The cell changed ``sys.<name>`` (``argv``, ``path``)."""

    name: str


@kind("hooks_put_back")
@dataclass(frozen=True)
class HooksPutBack(Note):
    """The cell changed ``hooks`` (their setters' names: "sys.settrace", "sys.stdout")."""

    hooks: tuple[str, ...]


@kind("streams_put_back")
@dataclass(frozen=True)
class StreamsPutBack(Note):
    """The cell drew from the global random ``generators`` ("np.random", "random"):
    put back as after one run of the cell (``settled``), else as before it."""

    generators: tuple[str, ...]
    settled: bool


# --- the name rows, and what could not be put back or was left -----------------------


@kind("config_put_back")
@dataclass(frozen=True)
class ConfigPutBack(Note):
    """JAX's config ``option`` was set to ``value``, now back to ``was`` (each a
    ``repr``); ``sure``: the cell set it (else the cell, or another thread)."""

    option: str
    value: str
    was: str
    sure: bool


@kind("config_left")
@dataclass(frozen=True)
class ConfigLeft(Note):
    """Another thread set JAX's config ``option`` to ``value`` (a ``repr``): left."""

    option: str
    value: str


@kind("library_name_put_back")
@dataclass(frozen=True)
class LibraryNamePutBack(Note):
    """The cell patched ``module``'s ``name`` (``jnp.sin = ...``): restored."""

    module: str
    name: str


@kind("own_names_put_back")
@dataclass(frozen=True)
class OwnNamesPutBack(Note):
    """The cell changed ``names`` of the user's modules and classes ("L.SCALE"); those
    in ``added`` it added."""

    names: tuple[str, ...]
    added: tuple[str, ...]


@kind("globals_put_back")
@dataclass(frozen=True)
class GlobalsPutBack(Note):
    """The code changed the kernel's globals ``changed`` and added ``added``."""

    changed: tuple[str, ...]
    added: tuple[str, ...]


@kind("not_put_back")
@dataclass(frozen=True)
class NotPutBack(Note):
    """Putting a row back raised ``error`` (its type's name): ``message``."""

    error: str
    message: str


@kind("left_as_is")
@dataclass(frozen=True)
class LeftAsIs(Note):
    """Another thread changed these, while the cell's code was not running: each a
    ``rows`` (the row, as :mod:`jitmagic.render.notes.effects` names it: "environ",
    "config") and ``keys`` (the key in it: a variable's name; "" for a row of one
    value). Left as they are."""

    rows: tuple[str, ...]
    keys: tuple[str, ...]

"""The sentences of what a cell changed and jitmagic put back (or left, where another
thread changed it): one renderer per kind of :mod:`jitmagic.model.notes.effects`, and
the names of the things a row holds (:data:`THINGS`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...model.notes import Note
from ...model.notes import effects as e
from ...model.stats.units import counted


def listed(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def said(change: str, how: str = "") -> str:
    """The sentence of a row that put back ``change`` (``how``: to what, where that is
    not simply as it was)."""
    return (f"the cell, or the code it ran, {change}: it applied while measuring and is "
            f"put back now{how}")


def _added(names: tuple[str, ...], added: tuple[str, ...]) -> list[str]:
    """Each of ``names``, those ``added`` said so: ``CALLS, SEEN (added)``."""
    return [f"{n} (added)" if n in added else n for n in names]


#: What the sentences call a hook by its setter's name (the others: by the name).
HOOKS = {"sys.settrace": "sys.settrace's hook (a debugger's or coverage's)",
         "sys.setprofile": "sys.setprofile's hook (a profiler's)",
         "threading.settrace": "threading.settrace's hook",
         "threading.setprofile": "threading.setprofile's hook"}


def _logger(name: str) -> str:
    return "the root logger" if not name else f"the {name!r} logger"


#: What the sentences call a key of each row (:class:`~jitmagic.model.notes.effects.LeftAsIs`).
THINGS: dict[str, Callable[[str], str]] = {
    "figures": lambda _: "pyplot's open figures",
    "listeners": lambda _: "jax.monitoring's listeners",
    "filters": lambda k: "warnings.showwarning" if k == "showwarning" else "the warnings filters",
    "logging": lambda k: "logging.disable" if k == "logging.disable" else _logger(k),
    "rc": lambda k: f"matplotlib's rcParams {k}",
    "np.seterr": lambda _: "numpy's error handling (np.seterr)",
    "np.set_printoptions": lambda _: "numpy's print options",
    "decimal": lambda _: "decimal's context",
    "random": lambda k: f"the global random generator {k}",
    "sys.setrecursionlimit": lambda _: "the recursion limit",
    "sys.setswitchinterval": lambda _: "the switch interval",
    "sys.set_int_max_str_digits": lambda _: "the integer string limit",
    "os.umask": lambda _: "the umask",
    "signals": lambda k: f"the handler of {k}",
    "environ": lambda k: f"the environment variable {k}",
    "cwd": lambda _: "the working directory",
    "sys_list": lambda k: f"sys.{k}",
    "hooks": lambda k: HOOKS.get(k, k),
    "config": lambda k: f"JAX's config {k}",
    "module": lambda k: k,
    "own": lambda k: k,
    "global": lambda k: f"your global {k}",
}


def _listeners(n: e.ListenersPutBack) -> str:
    parts = [f"registered {counted(n.added, 'jax.monitoring listener')}"] if n.added else []
    parts += [f"unregistered {counted(n.removed, 'jax.monitoring listener')}"] if n.removed \
        else []
    return said(listed(parts))


def _filters(n: e.FiltersPutBack) -> str:
    return said(listed(["changed the warnings filters"] * n.filters
                       + ["replaced warnings.showwarning"] * n.showwarning))


def _logging(n: e.LoggingPutBack) -> str:
    return said(listed(["called logging.disable"] * n.disable
                       + [f"changed {_logger(k)} (its level or handlers)" for k in n.loggers]))


def _numpy(n: e.NumpyPutBack) -> str:
    what = "error handling" if n.call == "np.seterr" else "print options"
    changed = ", ".join(f"{k}={v}" for k, v in zip(n.settings, n.values, strict=True))
    return said(f"changed numpy's {what} ({n.call}({changed}))")


def _decimal(n: e.DecimalPutBack) -> str:
    """``replaced decimal's context (decimal.setcontext; prec=6, it was 28)``."""
    parts = ["decimal.setcontext"] * n.replaced + [
        f"{k}={v}, it was {w}" for k, v, w in zip(n.settings, n.values, n.was, strict=True)]
    return said(f"{'replaced' if n.replaced else 'changed'} decimal's context "
                f"({'; '.join(parts)})")


def _setting(n: e.SettingPutBack) -> str:
    """``set sys.setrecursionlimit(50) (it was 1000)``; a umask in octal."""
    def shown(value: str) -> str:
        return f"{int(value):#o}" if n.call == "os.umask" else value
    return said(f"set {n.call}({shown(n.value)}) (it was {shown(n.was)})")


def _jax_environ(n: e.JaxEnvironPutBack) -> str:
    """JAX reads ``JAX_*`` once at import, XLA the others (``XLA_FLAGS``, device lists)
    once as its backend starts: set after that they changed nothing, set before it they
    stay in effect."""
    said_late = (f"changed {', '.join(_added(n.late, n.added))}, which had no effect: JAX "
                 "reads such variables once, when jax is imported (JAX_*) or its backend "
                 "starts (the others), and that was before the cell; the variable is put "
                 "back now. To try one, set it before the first `import jax` of a fresh "
                 "kernel; XLA's compile options also go to one jit: "
                 "`jax.jit(f, compiler_options={...})`")
    said_took = (f"changed {', '.join(_added(n.took, n.added))}, which JAX read as it started "
                 "during the cell, so it applied while measuring and stays in effect for the "
                 "rest of this kernel; the variable is put back now")
    return "the cell, or the code it ran, " + "; it ".join(
        [*([said_late] if n.late else []), *([said_took] if n.took else [])])


def _streams(n: e.StreamsPutBack) -> str:
    drew = (f"drew from the global random generator{'s' if len(n.generators) > 1 else ''} "
            f"{listed(list(n.generators))} while measuring (code that draws while traced "
            "draws once per trace, and the cell was traced once per cold run)")
    if not n.settled:
        return said(drew, " as before the cell (its measurement ended before its first "
                          "trace did: the cell's own draws are undone too)")
    return said(drew, " as after one run of the cell (its setup and one trace): later "
                      "draws continue as they would after running it once")


def _config(n: e.ConfigPutBack) -> str:
    who = "the cell" if n.sure else "the cell, or another thread while it ran,"
    return (f"{who} changed JAX's config {n.option} to {n.value}: it applied while "
            f"measuring and is back to {n.was} now")


def _own_names(n: e.OwnNamesPutBack) -> str:
    return (f"the cell, or the code it ran, changed names of your own modules and "
            f"classes: {', '.join(_added(n.names, n.added))}. They applied while measuring "
            f"and are put back now; a count a helper keeps there counted traces, not your "
            f"calls (lists and dicts changed in place are not put back)")


def _globals(n: e.GlobalsPutBack) -> str:
    names = ", ".join([*n.changed, *(f"{k} (added)" for k in n.added)])
    return (f"the code measured changed your globals {names}: it applied while "
            "measuring and they are put back now; a count a helper keeps there counted "
            "traces, not your calls")


def _left(n: e.LeftAsIs) -> str:
    names = [THINGS[row](key) for row, key in zip(n.rows, n.keys, strict=True)]
    left = "it as it is" if len(names) == 1 else "them as they are"
    return (f"{listed(names)} changed while measuring (another thread?), at moments "
            f"your code was not running: jitmagic left {left}")


#: The renderer of each of these kinds, by its type.
SAID: dict[type[Note], Callable[[Any], str]] = {
    e.FiguresClosed: lambda n: (f"the cell opened {counted(n.count, 'matplotlib figure')} "
                                "while measuring (code that draws runs once per trace): "
                                "closed now"),
    e.RcPutBack: lambda n: said(f"changed matplotlib's rcParams {', '.join(n.keys)}"),
    e.ListenersPutBack: _listeners,
    e.FiltersPutBack: _filters,
    e.LoggingPutBack: _logging,
    e.NumpyPutBack: _numpy,
    e.DecimalPutBack: _decimal,
    e.SettingPutBack: _setting,
    e.SignalsPutBack: lambda n: said(f"set the handler of {listed(list(n.signals))} "
                                     "(signal.signal)"),
    e.EnvironPutBack: lambda n: said("changed environment variables "
                                     + ", ".join([*n.changed, *(f"{k} (added)"
                                                                for k in n.added)])),
    e.JaxEnvironPutBack: _jax_environ,
    e.CwdPutBack: lambda n: said(f"changed the working directory to {n.now!r} "
                                 f"(it was {n.was!r})"),
    e.SysListPutBack: lambda n: said(f"changed sys.{n.name}"),
    e.HooksPutBack: lambda n: said(f"changed {', '.join(HOOKS.get(h, h) for h in n.hooks)}"),
    e.StreamsPutBack: _streams,
    e.ConfigPutBack: _config,
    e.ConfigLeft: lambda n: (f"another thread changed JAX's config {n.option} to {n.value} "
                             "while the cell ran: jitmagic left it as it is"),
    e.LibraryNamePutBack: lambda n: (f"the cell patched the library name {n.module}.{n.name}: "
                                     "it applied while measuring and is now restored"),
    e.OwnNamesPutBack: _own_names,
    e.GlobalsPutBack: _globals,
    e.NotPutBack: lambda n: (f"the cell changed something jitmagic could not put back "
                             f"({n.error}: {n.message})"),
    e.LeftAsIs: _left,
}

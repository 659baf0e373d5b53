"""The sentences of what a cell changed and jitmagic put back or left."""

from __future__ import annotations

from collections.abc import Callable

from ...model.notes import Note


def listed(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def said(change: str, how: str = "") -> str:
    """The sentence of a row that put back ``change`` (``how``: to what, where that is
    not simply as it was)."""
    return (f"the cell, or the code it ran, {change}: it applied while measuring and is "
            f"put back now{how}")


def marked(names: tuple[str, ...], added: tuple[str, ...]) -> str:
    """Each of ``names``, those ``added`` said so: ``CALLS, SEEN (added)``."""
    return ", ".join(f"{n} (added)" if n in added else n for n in names)


#: What the sentences call a hook by its setter's name (the others: by the name).
HOOKS = {"sys.settrace": "sys.settrace's hook (a debugger's or coverage's)",
         "sys.setprofile": "sys.setprofile's hook (a profiler's)",
         "threading.settrace": "threading.settrace's hook",
         "threading.setprofile": "threading.setprofile's hook"}


def logger(name: str) -> str:
    return "the root logger" if not name else f"the {name!r} logger"


#: What the sentences call a key of each row (``left_as_is``; its rows:
#: ``jitmagic.model.notes.KEYS["row"]``).
THINGS: dict[str, Callable[[str], str]] = {
    "figures": lambda _: "pyplot's open figures",
    "listeners": lambda _: "jax.monitoring's listeners",
    "filters": lambda k: "warnings.showwarning" if k == "showwarning" else "the warnings filters",
    "logging": lambda k: "logging.disable" if k == "logging.disable" else logger(k),
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


def numpy_settings(n: Note) -> str:
    what = "error handling" if n.call == "np.seterr" else "print options"
    changed = ", ".join(f"{k}={v}" for k, v in zip(n.settings, n.values, strict=True))
    return said(f"changed numpy's {what} ({n.call}({changed}))")


def decimal_context(n: Note) -> str:
    """``replaced decimal's context (decimal.setcontext; prec=6, it was 28)``."""
    parts = ["decimal.setcontext"] * n.replaced + [
        f"{k}={v}, it was {w}" for k, v, w in zip(n.settings, n.values, n.was, strict=True)]
    return said(f"{'replaced' if n.replaced else 'changed'} decimal's context ({'; '.join(parts)})")


def setting(n: Note) -> str:
    """``set sys.setrecursionlimit(50) (it was 1000)``; a umask in octal."""
    def shown(value: str) -> str:
        return f"{int(value):#o}" if n.call == "os.umask" else value
    return said(f"set {n.call}({shown(n.value)}) (it was {shown(n.was)})")


def jax_environ(n: Note) -> str:
    """JAX reads ``JAX_*`` once at import, XLA the others (``XLA_FLAGS``, device lists) once as its
    backend starts: set after that they changed nothing, set before it they stay in effect."""
    said_late = (f"changed {marked(n.late, n.added)}, which had no effect: JAX "
                 "reads such variables once, when jax is imported (JAX_*) or its backend "
                 "starts (the others), and that was before the cell; the variable is put "
                 "back now. To try one, set it before the first `import jax` of a fresh "
                 "kernel; XLA's compile options also go to one jit: "
                 "`jax.jit(f, compiler_options={...})`")
    said_took = (f"changed {marked(n.took, n.added)}, which JAX read as it started "
                 "during the cell, so it applied while measuring and stays in effect for the "
                 "rest of this kernel; the variable is put back now")
    return "the cell, or the code it ran, " + "; it ".join(
        [*([said_late] if n.late else []), *([said_took] if n.took else [])])


def streams(n: Note) -> str:
    drew = (f"drew from the global random generator{'s' if len(n.generators) > 1 else ''} "
            f"{listed(list(n.generators))} while measuring (code that draws while traced "
            "draws once per trace, and the cell was traced once per cold run)")
    if not n.settled:
        return said(drew, " as before the cell (its measurement ended before its first "
                          "trace did: the cell's own draws are undone too)")
    return said(drew, " as after one run of the cell (its setup and one trace): later "
                      "draws continue as they would after running it once")


def then_added(n: Note) -> str:
    """The names ``changed``, then those ``added``, said so: ``A, B (added)``."""
    return ", ".join([*n.changed, *(f"{k} (added)" for k in n.added)])


def left(n: Note) -> str:
    names = [THINGS[row](key) for row, key in zip(n.rows, n.keys, strict=True)]
    left = "it as it is" if len(names) == 1 else "them as they are"
    return (f"{listed(names)} changed while measuring (another thread?), at moments "
            f"your code was not running: jitmagic left {left}")

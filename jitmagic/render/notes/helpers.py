"""The sentences of notes that take more than a template, and :data:`THINGS`."""

from __future__ import annotations

from collections.abc import Callable

from ...model import parts as table
from ...model.notes import Note

#: Why a planned helper with no jit call in the program stays inline (no library holds it).
NO_CALL = "no call of it went through a jit while tracing (its program has no jit call of it)"
#: How the reason the out-of-line row of ``--effort`` was not measured begins.
NOT_MEASURED = "out of line was not measured"


def not_nested(n: Note) -> str:
    held = n.held_by
    if held is None:
        why = NO_CALL
    elif not n.named:
        why = (f"{held} holds it and runs it itself, after your code has run (where the "
               f"function's own code is jitmagic's no longer), and no name or closure of your "
               f"code holds it, where {held} could be handed a jit of it instead")
    else:
        why = (f"{held} holds it and runs it itself: it was handed a jit of it where your "
               f"code names it, but ran it without tracing that jit into the program (no jit "
               f"call of it there)")
    return f"`{n.helper}` stays inline: {why}"


def held_by(n: Note) -> str:
    ran = ", ".join(f"`{f}`" for f in n.ran)
    return (f"`{n.helper}` is held by {n.held_by}, which runs it itself: it is nested by "
            f"handing that a jit of `{n.helper}` where your code names it"
            + (f"; the functions it calls ({ran}) run inside that jit, not under jits of "
               f"their own: the flat program shows them only inside {n.held_by}, so no trace "
               "found them as helpers" if ran else ""))


def rules_only(n: Note) -> str:
    """A ``custom_vjp`` function runs its two rules in its place, a ``custom_jvp`` one."""
    count = f"the {n.equations} equations they add" if n.equations is not None else \
        "what they add"
    at = (f"at its call site in `{n.caller}`" if n.sites == 1 else
          f"at its {n.sites} call sites in `{n.caller}`" if n.sites else
          f"at its calls in `{n.caller}`")
    if n.rule == "custom_vjp":
        fwd, bwd = n.rules
        runs, never = (f"its rules in its place (`{fwd}` forward, `{bwd}` in the backward "
                       "pass)", ", and never a custom_vjp function (nested, each call would "
                       "be a jit call forward and another in the backward pass)")
    else:
        runs, never = f"its rule `{n.rules[0]}` in its place", ""
        count = count.replace("they add", "it adds")
    return (f"it is a `jax.{n.rule}` function whose body adds no equation to this program: "
            f"under differentiation JAX runs {runs} and traces {count} {at}. jitmagic nests "
            f"a function where its own body builds equations{never}")


#: How a helper of each library reads its caller's traced values unpassed (None: any other).
NOT_PASSED = {
    "haiku": "it reads its parameters with `hk.get_parameter` from the state "
             "`hk.transform` keeps, not from its arguments",
    "keras": "it reads its Keras layer's variables, which `stateless_call` holds while "
             "it runs, not from its arguments",
    None: "it uses its caller's traced values without being passed them (a closure over "
          "them, or a library's state)",
}


def static_held(n: Note) -> str:
    result = f" (a `{n.result_type}`)" if n.result_type is not None else ""
    holder = {"partial": f"a `functools.partial` of `{n.name}` with traced arguments",
              "function": f"the function `{n.name}`, whose closure holds traced values",
              "object": f"a `{n.name}` holding traced values"}.get(n.holder, "a traced value")
    where = "in its static part (pytree aux data)" if n.in_aux else \
        "as a leaf that is not an array"
    return f"its result{result} holds {holder} {where}"


def leaks(n: Note) -> str:
    where = f" (only with `{n.partner}` nested too)" if n.partner else ""
    if n.held is not None:
        return (f"{n.held}{where}: a jit returns arrays only and fixes the rest when it traces, so "
                f"under a jit of its own those traced values would leak; it runs inline")
    return f"under a jit of its own it leaks traced values{where}: {n.mechanism}, so it runs inline"


def _structures(n: Note) -> str:
    """The two sides where the structures differ: "shape (3,) vs (4,)", …."""
    if n.structure == "shape":
        return f"shape {n.shapes[0]} vs {n.shapes[1]}"
    return " vs ".join(f"a leaf {dtype}{list(shape)}" if not node else
                       node + (f" with static data {static}" if static else "")
                       for node, dtype, shape, static
                       in zip(n.nodes, n.dtypes, n.shapes, n.statics, strict=True))


def leaf_differs(n: Note) -> str:
    """The first leaf where two outputs differ, and how many others do."""
    where = f"`{n.path}`" if n.path else "the whole output"
    if n.structure is not None:
        first = f"{where}: {_structures(n)}"
    elif n.nonfinite:
        finite = f"; largest finite difference {n.worst:.3g}" if n.worst else ""
        first = f"{where} (NaN or infinite values in different places{finite})"
    else:
        first = f"{where} (largest difference {n.worst:.3g})"
    many = f"; {n.others} other leaf differs" if n.others == 1 else \
        f"; {n.others} other leaves differ"
    return first + (many if n.others else "")


def part(n: Note) -> str:
    """The label of the part a note names (``part``): "second start"."""
    return table.named(n.part).label


def late_settings(n: Note) -> str:
    names = ", ".join(f"{k}={v}" if v else f"{k} (removed)"
                      for k, v in zip(n.settings, n.values, strict=True))
    if n.imported_by == "before":
        when = "jax had been imported before the file ran (in this process)"
        fix = "run `python -m jitmagic` in a fresh process, or set it in the shell"
    else:
        line = f"line {n.line}" if n.line else "its first definition"
        when = (f"jitmagic imports jax before {line} (the first definition, or a use of "
                "the swept name) runs")
        fix = f"set it above {line}, or in the shell"
    return f"{n.file} sets {names}, but {when}, so this run did not use it: {fix}"


#: What a captured value that is not an array of numbers is, by its kind.
NOT_ARRAY = {"tracer": "a tracer (a value leaked from another trace)",
             "objects": "a NumPy array of Python objects (dtype object)"}


#: Why a per-line table has no hits, calls or time, by the note's ``why``.
NO_HOOK = {
    "not_asked": "no line hook was asked for",
    "no_tool_id": "every sys.monitoring tool id was taken, and a sys.settrace hook would "
                  "make the trace 2-5x slower",
    "no_monitoring": "Python {} has no sys.monitoring (3.12+), and a sys.settrace hook "
                     "would make the trace 2-5x slower",
}


def listed(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def said(change: str, how: str = "") -> str:
    """The sentence of a row that put back ``change`` (``how``: to what)."""
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


#: What the sentences call a key of each row (``jitmagic.model.notes.KEYS["row"]``).
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


def setting(n: Note) -> str:
    """``set sys.setrecursionlimit(50) (it was 1000)``; a umask in octal."""
    def shown(value: str) -> str:
        return f"{int(value):#o}" if n.call == "os.umask" else value
    return said(f"set {n.call}({shown(n.value)}) (it was {shown(n.was)})")


def jax_environ(n: Note) -> str:
    """JAX reads ``JAX_*`` at import, XLA the others as its backend starts: set later, no effect."""
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

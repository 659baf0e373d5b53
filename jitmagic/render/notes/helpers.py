"""The sentences of notes that take more than a template."""

from __future__ import annotations

from ...model import parts as table
from ...model.notes import Note

#: Why a planned helper that the program holds no jit call of stays inline, where no
#: library primitive holds it.
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


def backward_passes(n: Note) -> str:
    said = ", ".join(f"{c} of `{h}`" for h, c in zip(n.helpers, n.counts, strict=True))
    return ("under autodiff each jit call of a helper leaves its backward pass as a jit of "
            "its own, made from the same trace: the row of nested jit calls counts those "
            f"too ({said}; {sum(n.counts)} in all), a helper's jit calls do not")


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


#: How a helper of each library uses its caller's traced values without being passed
#: them (a leak through JAX's cache of a jit's constants); None: any other code.
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
    """The two sides where the structures differ: "shape (3,) vs (4,)", "a leaf
    float32[3] vs Point", "Linear with static data 3 vs Linear with static data 4"."""
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


def clock_disagrees(n: Note) -> str:
    gap = abs(n.ours_s - n.theirs_s)
    return (f"{n.variant}: {n.phase[:-2]} measured {n.ours_s * 1e3:.1f} ms but JAX's own event "
            f"says {n.theirs_s * 1e3:.1f} ms ({gap / n.ours_s:.0%} apart)")


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
_NOT_ARRAY = {"tracer": "a tracer (a value leaked from another trace)",
              "objects": "a NumPy array of Python objects (dtype object)"}


def captured_not_array(n: Note) -> str:
    what = _NOT_ARRAY.get(n.what, f"a `{n.type_name}` object")
    return (f"the program captures {what}, which is not an array of numbers: it is left "
            "captured and not measured as an argument")


def other_threads_cached(n: Note) -> str:
    many = n.compiles != 1
    return (f"{n.compiles} compile{'s' * many} of another thread used JAX's persistent cache "
            f"while the second start measured: JAX's cache folder is the process's, so "
            f"{'they' if many else 'it'} went to jitmagic's folder (removed after), not to "
            "your own cache")


#: Why a per-line table has no hits, calls or time, by the note's ``why``.
NO_HOOK = {
    "not_asked": "no line hook was asked for",
    "no_tool_id": "every sys.monitoring tool id was taken, and a sys.settrace hook would "
                  "make the trace 2-5x slower",
    "no_monitoring": "Python {} has no sys.monitoring (3.12+), and a sys.settrace hook "
                     "would make the trace 2-5x slower",
}


def none_kept(n: Note) -> str:
    why = "; ".join(f"`{r.helper}` {r.why}" for r in n.refused if r.kind == "stays_inline")
    return f"{NOT_MEASURED}: no helper could be kept out of line ({why or 'no call of a helper'})"


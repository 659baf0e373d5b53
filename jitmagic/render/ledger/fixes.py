"""What to do about each kind of recompile: only fixes shown to work, else notes."""

from __future__ import annotations

import re

from ...model.ledger.compiles import (
    CONTEXT,
    DTYPE,
    EAGER,
    KEYWORD,
    MAX_EXPLAINED,
    NEW_FUNCTION,
    PYTREE,
    SHAPE,
    SHARDING,
    STATIC,
    WEAK_TYPE,
    Noted,
)
from ...model.ledger.rows import ReasonRow
from .words import clip

#: What to do about each kind of reason (``{arg}``: the argument, or "it"): only fixes
#: ``tests/test_watch_fixes.py`` shows remove the recompile and keep the result.
FIXES = {
    WEAK_TYPE: "a Python scalar (weakly typed) became an array, or the other way: give {arg} "
               "one type from the start, e.g. `jnp.float32(0.1)` rather than `0.1`",
    SHAPE: "pad a short batch to the full size with a mask that keeps the padded rows out "
           "of the result (for a mean: `jnp.sum(jnp.where(mask, err, 0)) / jnp.sum(mask)`), "
           "or expect one compile per shape",
    DTYPE: "give {arg} one dtype on every call (`.astype(...)` before the call; a Python "
           "number as `float(...)`: `0` is an int, `0.1` a float)",
    STATIC: "a static value (a static argument, an Equinox static field, a hashable `self`) "
            "is part of what JAX compiles for: each new value compiles again; where it only "
            "feeds arithmetic, pass it as an array instead; where it steers Python (a loop "
            "count, an `if`, Flax's `deterministic`), keep it static and expect one compile "
            "per value, or write the branch with `jax.lax.cond` or `jax.lax.fori_loop`",
    NEW_FUNCTION: "the function is made anew on each pass: hoist the `jax.jit(...)` (or the "
                  "`lambda`/`partial` it wraps) out of the loop and reuse it, passing what it "
                  "reads from the loop as arguments (hoisted, it keeps the values it closed "
                  "over when it was first traced)",
    PYTREE: "keep the arguments' structure the same on every call: the same keys and fields "
            "each time (an all-ones mask rather than no mask, an array rather than None)",
    KEYWORD: "pass {arg} the same way on every call (by keyword each time, its default "
             "written out where it was left out): one program serves every value; where "
             "the function branches on it in Python (an `if`), make it static as well "
             "(`static_argnames`) and expect one compile per value",
    SHARDING: "place {arg} once, before the loop, where the jitted function's output comes "
              "back (`jax.device_put(x, NamedSharding(mesh, P()))` for a replicated "
              "parameter), so that every call sees the same devices and sharding; or fix "
              "them on the jit (`in_shardings=`, `out_shardings=`)",
}
#: What to do about a Flax NNX module's graph (``._graphdef``) changed by ``model.train()``.
GRAPH_FIX = ("the module's static attributes are part of its graph, which JAX compiles for "
             "(`model.train()` and `model.eval()` set Dropout's `deterministic` and "
             "BatchNorm's `use_running_average`): jit one function per mode, each its own "
             "`def` under `@nnx.jit` and called only in its mode (a `train_step` after "
             "`model.train()`, an `eval_step` after `model.eval()`): each compiles once")
#: What to do about an argument split over the mesh on some calls only (``f32[8@data,4]``).
SPLIT_FIX = ("place {arg} the same way on every call, split as on its other calls: "
             "`jax.device_put({name}, NamedSharding(mesh, {spec}))` before each call (a batch left "
             "unplaced lands on one device), or fix it on the jit (`in_shardings=`)")
#: What is said where no fix was shown to remove the recompile and keep the result.
NOTES = {
    CONTEXT: "a config value or context manager changed between calls: JAX compiles once "
             "per setting, and the setting is part of what the call computes",
    EAGER: "an op outside any jit compiles once per new shape or dtype of its inputs (set-up "
           "code does so once); inside a jit it would compile once per shape as well (a "
           "mean over a growing list compiles at each length either way)",
}
#: What to do about an eager ``lax.scan`` (``cond``, ...) whose function is made anew each pass.
EAGER_ANEW_FIX = ("define {arg} once, before the loop, and pass what it reads from the loop "
                  "as its arguments (a scan's carry or `xs`, a cond's operands, a "
                  "while_loop's value): defined once, it is traced once, and a value it "
                  "closes over keeps what it was at that first trace")
#: What the watch knew where JAX gave no reason (:class:`~jitmagic.model.ledger.compiles.Noted`).
NOTED = {
    Noted.NOT_EXPLAINED: f"not explained: the watch turned JAX's explanations off after "
                         f"{MAX_EXPLAINED} misses, which JAX makes slower with every miss",
    Noted.REUSED_TRACE: "JAX reused its trace (the arguments' types were the same) and compiled "
                        "again: the arguments sit on other devices or in another sharding (or a "
                        "second jax.jit of the function has other options, such as donate_argnums)",
    Noted.CLEARED_OR_NEW: "JAX had never seen this function object, though a function of "
                          "this name defined there compiled before: it was made anew (a "
                          "freed object's id reused), or JAX's caches were cleared "
                          "(jax.clear_caches(), f.clear_cache())",
    Noted.CLEARED_BY_JITMAGIC: "compiled again only because jitmagic's own measuring (a "
                               "jitmagic.compare() in the run) cleared JAX's caches: not "
                               "counted as a recompile, nor against the gate",
}


def advice(reason: ReasonRow) -> str | None:
    """The line under a reason: ``fix: ...`` or ``note: ...``; None for neither."""
    arg = f"`{clip(reason.argument, 40)}`" if reason.argument else "it"
    spec = split_spec(reason.values) if reason.kind == SHARDING else None
    if spec is not None:
        return "fix: " + SPLIT_FIX.format(arg=arg, name=clip(reason.argument or "x", 40),
                                          spec=spec)
    if reason.kind == PYTREE and (reason.argument or "").endswith("._graphdef"):
        return f"fix: {GRAPH_FIX}"
    if reason.kind in FIXES:
        return f"fix: {FIXES[reason.kind].format(arg=arg)}"
    return f"note: {NOTES[reason.kind]}" if reason.kind in NOTES else None


_DIMS = re.compile(r"\[(?P<dims>[^\]]*@[^\]]*)\]")
#: One dimension as JAX writes it: ``8``, ``8@data``, ``8@(data,model)``.
_DIM = re.compile(r"(?:[^,(]|\([^)]*\))+")


def split_spec(values: tuple[str, ...]) -> str | None:
    """``P('data')``: the split of the first value JAX wrote as split; None where none."""
    found = next((m for v in values if (m := _DIMS.search(v))), None)
    if found is None:
        return None
    axes = [d.partition("@")[2].strip("()").split(",") for d in _DIM.findall(found["dims"])]
    while axes and axes[-1] == [""]:
        axes.pop()
    return "P(" + ", ".join("None" if a == [""] else repr(a[0]) if len(a) == 1
                            else f"({', '.join(map(repr, a))})" for a in axes) + ")"


def explained(reason: ReasonRow) -> str:
    """The words under a reason: what the watch knew, else JAX's own."""
    return NOTED[reason.noted] if reason.noted else reason.text

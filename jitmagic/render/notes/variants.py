"""The sentences of a variant's notes: one renderer per kind of
:mod:`jitmagic.model.notes.variants`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...model.notes import Note
from ...model.notes import variants as v
from .comparison import fixed


def _scalars_held_static(n: v.ScalarsHeldStatic) -> str:
    return (f"{n.arguments} of `{n.entry}`: a Python scalar used as a Python value (tracing "
            f"it raised {n.error}), so it is held static, as `jax.jit({n.short}, {n.spelled})` "
            "would")


def _leaves_held_static(n: v.LeavesHeldStatic) -> str:
    return (f"Python scalars inside the arguments of `{n.entry}` ({n.leaves}) are used as "
            f"Python values (tracing them raised {n.error}), so every non-array leaf is held "
            "static, as `eqx.filter_jit` would")


def _equinox_modules(n: v.EquinoxModules) -> str:
    return (f"the arguments of `{n.entry}` hold Equinox modules: their arrays are traced and "
            "every other field is held static, as `eqx.filter_jit` takes them")


def _donates(n: v.Donates) -> str:
    return (f"`{n.entry}` donates its arguments ({n.donation}): jitmagic measures it without "
            "donation, so that your arrays are never deleted (donation saves memory and "
            "copies, not compile time)")


def _inline_holds_arrays(n: v.InlineHoldsArrays) -> str:
    return (f"`{n.helper}` stays inline for calls on a `{n.type_name}` holding arrays that is "
            "not a pytree (a static argument cannot carry arrays, so jit cannot take it)")


def _inline_unhashable(n: v.InlineUnhashable) -> str:
    return (f"`{n.helper}` stays inline for calls with a `{n.type_name}` argument that holds "
            "no array and is not hashable (it can be neither traced nor static)")


def _helper_scalars_static(n: v.HelperScalarsStatic) -> str:
    return (f"`{n.helper}` takes its Python scalar arguments static: traced, one of them is "
            f"used as a Python value (tracing it raised {n.error})")


#: Why a planned helper that the program holds no jit call of stays inline, where no
#: library primitive holds it.
NO_CALL = "no call of it went through a jit while tracing (its program has no jit call of it)"


def _not_nested(n: v.NotNested) -> str:
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


def _held_by(n: v.HeldBy) -> str:
    ran = ", ".join(f"`{f}`" for f in n.ran)
    return (f"`{n.helper}` is held by {n.held_by}, which runs it itself: it is nested by "
            f"handing that a jit of `{n.helper}` where your code names it"
            + (f"; the functions it calls ({ran}) run inside that jit, not under jits of "
               f"their own: the flat program shows them only inside {n.held_by}, so no trace "
               "found them as helpers" if ran else ""))


def _kernel_body(n: v.KernelBody) -> str:
    return (f"`{n.helper}` is a Pallas kernel body: its jit runs inside the kernel "
            "`pallas_call` traces (in interpret mode as a jit call; Pallas's Triton and "
            "Mosaic lowerings emit a jit inside a kernel inline, into the kernel's own code)")


def _backward_passes(n: v.BackwardPasses) -> str:
    said = ", ".join(f"{c} of `{h}`" for h, c in zip(n.helpers, n.counts, strict=True))
    return ("under autodiff each jit call of a helper leaves its backward pass as a jit of "
            "its own, made from the same trace: the row of nested jit calls counts those "
            f"too ({said}; {sum(n.counts)} in all), a helper's jit calls do not")


def _rules_only(n: v.RulesOnly) -> str:
    count = f"the {n.equations} equations they add" if n.equations is not None else \
        "what they add"
    at = (f"at its call site in `{n.caller}`" if n.sites == 1 else
          f"at its {n.sites} call sites in `{n.caller}`" if n.sites else
          f"at its calls in `{n.caller}`")
    if n.rule == "custom_vjp":
        fwd, bwd = n.rules
        return (f"it is a `jax.custom_vjp` function whose body adds no equation to this "
                f"program: under differentiation JAX runs its rules in its place (`{fwd}` "
                f"forward, `{bwd}` in the backward pass) and traces {count} {at}. jitmagic "
                f"nests a function where its own body builds equations, and never a "
                f"custom_vjp function (nested, each call would be a jit call forward and "
                f"another in the backward pass)")
    (jvp,) = n.rules
    return (f"it is a `jax.custom_jvp` function whose body adds no equation to this "
            f"program: under differentiation JAX runs its rule `{jvp}` in its place and "
            f"traces {count.replace('they add', 'it adds')} {at}. jitmagic nests a function "
            f"where its own body builds equations")


def _linen_made_before(n: v.LinenMadeBefore) -> str:
    name = n.class_name
    return (f"it is a Flax linen module made before the call: `apply` runs a clone of "
            f"that `{name}` instance, which `Module.clone` makes from the instance's own "
            f"class, not from a name, so `nn.jit({name})` bound where `{name}` is looked "
            f"up (how jitmagic nests linen submodules) never reaches it")


def _self_holds_arrays(n: v.SelfHoldsArrays) -> str:
    kind = n.type_name
    return (f"its `self`, a `{kind}`, holds arrays but is not a pytree, and a static "
            f"argument cannot carry arrays, so `self` cannot be passed through `jax.jit`. "
            f"To nest it, register `{kind}` as a pytree (`jax.tree_util.register_dataclass`"
            f" or `register_pytree_node_class`), or make it an `eqx.Module`")


#: How the reason a helper that leaks tracers under its own jit runs inline begins.
LEAKS = "under a jit of its own it leaks traced values"


#: How a helper of each library uses its caller's traced values without being passed
#: them (a leak through JAX's cache of a jit's constants); None: any other code.
_NOT_PASSED = {
    "haiku": "it reads its parameters with `hk.get_parameter` from the state "
             "`hk.transform` keeps, not from its arguments",
    "keras": "it reads its Keras layer's variables, which `stateless_call` holds while "
             "it runs, not from its arguments",
    None: "it uses its caller's traced values without being passed them (a closure over "
          "them, or a library's state)",
}


def _static_output(n: v.LeakStaticOutput) -> str:
    what = f"a `{n.type_name}`" if n.type_name is not None else "an object"
    return (f"it returns them inside the static part of its output ({what}, not a "
            f"pytree), which its jit can pass out only as a Python value")


#: How each kind of leak mechanism is said, by its type.
MECHANISMS: dict[type[Note], Callable[[Any], str]] = {
    v.LeakNotPassed: lambda n: (f"{_NOT_PASSED.get(n.library, _NOT_PASSED[None])}, so its "
                                "jit holds them as constants, and JAX's cache of those "
                                "constants keeps them after the caller's trace"),
    v.LeakStaticOutput: _static_output,
    v.LeakHandlerStack: lambda n: (f"it records them on an effect handler's stack "
                                   f"(`{n.name}`), as a numpyro model under its handlers "
                                   "does"),
    v.LeakGlobal: lambda n: f"it stores them in a global (`{n.name}`), where they outlive its "
                            "trace",
    v.LeakClosure: lambda n: (f"it stores them in `{n.variable}`, which `{n.function}` "
                              "closes over, where they outlive its trace"),
    v.LeakElsewhere: fixed("it keeps them outside what it returns (in a global or a list, or "
                           "an effect handler's stack, as a numpyro model does)"),
}


def _static_held(n: v.StaticHeld) -> str:
    result = f" (a `{n.result_type}`)" if n.result_type is not None else ""
    holder = {"partial": f"a `functools.partial` of `{n.name}` with traced arguments",
              "function": f"the function `{n.name}`, whose closure holds traced values",
              "object": f"a `{n.name}` holding traced values"}.get(n.holder, "a traced value")
    where = "in its static part (pytree aux data)" if n.in_aux else \
        "as a leaf that is not an array"
    return f"its result{result} holds {holder} {where}"


def _leaks(n: v.Leaks) -> str:
    where = f" (only with `{n.partner}` nested too)" if n.partner else ""
    if n.held is not None:
        return (f"{n.held}{where}: a jit returns arrays only and fixes the rest when it "
                f"traces, so under a jit of its own those traced values would leak; it runs "
                f"inline")
    return f"{LEAKS}{where}: {n.mechanism}, so it runs inline"


#: Why a helper is not kept out of line where Equinox's ``noinline`` does not import (and
#: why the out-of-line row is not measured).
NO_NOINLINE = ("out of line was not measured: it needs Equinox's `equinox.internal.noinline` "
               "(pip install equinox), which could not be imported")

#: The renderer of each kind of why a helper stays inline, by its type.
WHY_INLINE: dict[type[Note], Callable[[Any], str]] = {
    v.RulesOnly: _rules_only,
    v.Recreated: lambda n: (f"it is re-created on every call of `{n.outer}`, so the "
                            "function a jit would wrap is not the one called"),
    v.LinenMadeBefore: _linen_made_before,
    v.LinenMethod: fixed("it is a method of a Flax linen module other than `__call__`: linen "
                         "lifts whole modules (`nn.jit(Block)`), so jitmagic nests only "
                         "`__call__`"),
    v.SelfHoldsArrays: _self_holds_arrays,
    v.NoFunction: fixed("no live function object holds its code (it was made during the "
                        "trace and is gone), so there is nothing to put a jit on"),
    v.CustomVjp: fixed("it is a custom_vjp function, whose rules must see it unjitted"),
    v.Classmethod: fixed("it is a classmethod"),
    v.LinenUnnamed: fixed("it is a Flax linen module, which is nested by lifting its class "
                          "(`nn.jit(Block)`) where its parent looks the class up, and no name "
                          "or closure holds the class"),
    v.FlaxJit: fixed("it is a Flax module's method, jitted by Flax's own lifted jit, which "
                     "jitmagic cannot call out of line"),
    v.TraceFails: lambda n: (f"under a jit of its own its trace fails where the flat program "
                             f"traces ({n.error}: {n.first_line}), so it runs inline"),
    v.Leaks: _leaks,
    v.Differentiated: fixed("it is differentiated through (under jax.grad or jax.jvp): "
                            "Equinox's noinline would compile another program for its "
                            "tangent and another for its transpose, so it would not be the "
                            "helper compiled once"),
    v.NoNoinline: fixed(NO_NOINLINE),
    v.CannotNest: fixed("it cannot be nested"),
    **MECHANISMS,
    v.StaticHeld: _static_held,
}


#: The renderer of each of these kinds, by its type.
SAID: dict[type[Note], Callable[[Any], str]] = {
    v.ScalarsHeldStatic: _scalars_held_static,
    v.LeavesHeldStatic: _leaves_held_static,
    v.EquinoxModules: _equinox_modules,
    v.Donates: _donates,
    v.InlineHoldsArrays: _inline_holds_arrays,
    v.InlineUnhashable: _inline_unhashable,
    v.HelperScalarsStatic: _helper_scalars_static,
    v.NotNested: _not_nested,
    v.HeldBy: _held_by,
    v.KernelBody: _kernel_body,
    v.BackwardPasses: _backward_passes,
    v.SameAsFlat: fixed("nothing to nest: the nested program would be the flat one, so it "
                        "was measured once"),
    v.StaysInline: lambda n: f"`{n.helper}` stays inline: {n.why}",
    **WHY_INLINE,
}

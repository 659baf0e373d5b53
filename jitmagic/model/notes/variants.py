"""The kinds of :class:`~jitmagic.model.notes.Note` a variant keeps (``VariantResult.noted``):
how its entry and helpers were taken, and why a helper stays inline (their sentences:
:mod:`jitmagic.render.notes`). A note about one helper names it in ``helper``."""

from __future__ import annotations

from dataclasses import dataclass

from .note import Note
from .note import kind

# Of the entry (its plan): how jitmagic takes the call.


@kind("scalars_held_static")
@dataclass(frozen=True)
class ScalarsHeldStatic(Note):
    """The entry's Python scalar ``arguments`` (named as the user points at them:
    "argument 1, `n`") are held static, as ``jax.jit(short, spelled)`` would: tracing
    them raised ``error`` (its type's name)."""

    entry: str
    arguments: str
    error: str
    short: str  # the entry's short name, as the jit spelled for it says it
    spelled: str  # the jit's static options as code: "static_argnums=(1,)"


@kind("leaves_held_static")
@dataclass(frozen=True)
class LeavesHeldStatic(Note):
    """The Python scalar ``leaves`` inside the entry's arguments ("argument 2[0], cfg.n")
    are used as Python values (tracing raised ``error``): every non-array leaf is static."""

    entry: str
    leaves: str
    error: str


@kind("equinox_modules")
@dataclass(frozen=True)
class EquinoxModules(Note):
    """The entry's arguments hold Equinox modules: their arrays are traced, the rest
    static, as ``eqx.filter_jit`` takes them."""

    entry: str


@kind("donates")
@dataclass(frozen=True)
class Donates(Note):
    """The entry's jit donates its arguments (``donation``, as code:
    "donate_argnums=(0,)"): it is measured without donation."""

    entry: str
    donation: str


# Of a helper's jit (as it runs).


@kind("inline_holds_arrays")
@dataclass(frozen=True)
class InlineHoldsArrays(Note):
    """``helper`` stays inline for calls on a ``type_name`` holding arrays that is not a
    pytree."""

    helper: str
    type_name: str


@kind("inline_unhashable")
@dataclass(frozen=True)
class InlineUnhashable(Note):
    """``helper`` stays inline for calls with a ``type_name`` argument that holds no array
    and is not hashable."""

    helper: str
    type_name: str


@kind("helper_scalars_static")
@dataclass(frozen=True)
class HelperScalarsStatic(Note):
    """``helper`` takes its Python scalar arguments static: traced, one was used as a
    Python value (tracing it raised ``error``, its type's name)."""

    helper: str
    error: str


# Of the variant's program, as measured.


@kind("not_nested")
@dataclass(frozen=True)
class NotNested(Note):
    """``helper`` was planned but its program holds no jit call of it: it stays inline.
    ``held_by``: the library primitive that holds and runs it (None: none does);
    ``named``: whether a name or closure of the user's code holds it."""

    helper: str
    held_by: str | None
    named: bool


@kind("held_by")
@dataclass(frozen=True)
class HeldBy(Note):
    """``helper`` is held by ``held_by`` (a library primitive that runs it itself) and was
    nested by handing that a jit of it; ``ran``: the user's functions its jit ran."""

    helper: str
    held_by: str
    ran: tuple[str, ...]


@kind("kernel_body")
@dataclass(frozen=True)
class KernelBody(Note):
    """The nested ``helper`` is a Pallas kernel body."""

    helper: str


@kind("backward_passes")
@dataclass(frozen=True)
class BackwardPasses(Note):
    """Under autodiff the program also holds ``counts`` backward passes of ``helpers``
    (pairwise), jits of their own."""

    helpers: tuple[str, ...]
    counts: tuple[int, ...]


@kind("same_as_flat")
@dataclass(frozen=True)
class SameAsFlat(Note):
    """Nothing to nest: the nested program would be the flat one, measured once."""


# Why a helper stays inline (a variant's note ``StaysInline`` holds one; ``--effort``'s
# out-of-line row keeps one per helper it could not keep out of line).


@kind("stays_inline")
@dataclass(frozen=True)
class StaysInline(Note):
    """``helper`` cannot be nested and stays inline; ``why`` is one of the kinds below."""

    helper: str
    why: Note


@kind("inline_rules_only")
@dataclass(frozen=True)
class RulesOnly(Note):
    """A ``rule`` (``custom_vjp`` or ``custom_jvp``) function whose body adds no equation:
    its ``rules`` (forward and backward, or its jvp) add ``equations`` (None: not counted
    alone) at ``sites`` call sites (0: not counted) in ``caller``."""

    rule: str
    rules: tuple[str, ...]
    equations: int | None
    sites: int
    caller: str


@kind("inline_recreated")
@dataclass(frozen=True)
class Recreated(Note):
    """It is re-created on every call of ``outer`` (its short name)."""

    outer: str


@kind("inline_linen_made_before")
@dataclass(frozen=True)
class LinenMadeBefore(Note):
    """A Flax linen module of class ``class_name`` made before the call (``apply`` runs a
    clone of it)."""

    class_name: str


@kind("inline_linen_method")
@dataclass(frozen=True)
class LinenMethod(Note):
    """A method of a Flax linen module other than ``__call__``."""


@kind("inline_self_holds_arrays")
@dataclass(frozen=True)
class SelfHoldsArrays(Note):
    """Its ``self``, a ``type_name``, holds arrays but is not a pytree."""

    type_name: str


@kind("inline_no_function")
@dataclass(frozen=True)
class NoFunction(Note):
    """No live function object holds its code (made during the trace, and gone)."""


@kind("inline_custom_vjp")
@dataclass(frozen=True)
class CustomVjp(Note):
    """It is a ``custom_vjp`` function, whose rules must see it unjitted."""


@kind("inline_classmethod")
@dataclass(frozen=True)
class Classmethod(Note):
    """It is a classmethod."""


@kind("inline_linen_unnamed")
@dataclass(frozen=True)
class LinenUnnamed(Note):
    """A Flax linen module whose class no name or closure its parent looks up holds."""


@kind("inline_flax_jit")
@dataclass(frozen=True)
class FlaxJit(Note):
    """Out of line: a Flax module's method, jitted by Flax's own lifted jit."""


@kind("inline_trace_fails")
@dataclass(frozen=True)
class TraceFails(Note):
    """Under a jit of its own its trace raised ``error`` (its type's name; ``first_line``:
    its message's first line, cut) where the flat program traces."""

    error: str
    first_line: str


@kind("inline_leaks")
@dataclass(frozen=True)
class Leaks(Note):
    """Under a jit of its own it leaks traced values: ``held`` says where its result
    holds them (its own jit saw it), else ``mechanism`` how it keeps them (as the leak
    checker's message shows: one of the ``Leak*`` kinds below); ``partner``: a helper it
    leaks only nested with."""

    held: Note | None
    mechanism: Note | None
    partner: str | None


@kind("leak_static_held")
@dataclass(frozen=True)
class StaticHeld(Note):
    """What in its result holds a traced value where a jit cannot return it (its own jit
    saw it): the result is a ``result_type`` (None: a plain container); the value sits in
    a pytree node's aux data (``in_aux``) or in a leaf that is not an array; ``holder``
    is what holds it nearest: ``partial`` (of the function ``name``), ``function``
    (``name``, by its closure), ``object`` (of type ``name``) or ``traced`` (the value
    itself, no name)."""

    result_type: str | None
    in_aux: bool
    holder: str
    name: str | None


# How a helper's jit kept traced values (``Leaks.mechanism``).


@kind("leak_not_passed")
@dataclass(frozen=True)
class LeakNotPassed(Note):
    """It uses its caller's traced values without being passed them, as a helper of
    ``library`` (``haiku``, ``keras``; None: any other code) does; its jit holds them as
    constants, which JAX's cache keeps."""

    library: str | None


@kind("leak_static_output")
@dataclass(frozen=True)
class LeakStaticOutput(Note):
    """It returns them inside the static part of its output, a ``type_name`` (None: an
    object of no type the chain names)."""

    type_name: str | None


@kind("leak_handler_stack")
@dataclass(frozen=True)
class LeakHandlerStack(Note):
    """It records them on an effect handler's stack, the global ``name``."""

    name: str


@kind("leak_global")
@dataclass(frozen=True)
class LeakGlobal(Note):
    """It stores them in the global ``name``."""

    name: str


@kind("leak_closure")
@dataclass(frozen=True)
class LeakClosure(Note):
    """It stores them in ``variable``, which ``function`` closes over."""

    function: str
    variable: str


@kind("leak_elsewhere")
@dataclass(frozen=True)
class LeakElsewhere(Note):
    """It keeps them outside what it returns (the chain says no more)."""


@kind("inline_differentiated")
@dataclass(frozen=True)
class Differentiated(Note):
    """Out of line: it is differentiated through (Equinox's noinline would compile more
    programs)."""


@kind("inline_no_noinline")
@dataclass(frozen=True)
class NoNoinline(Note):
    """Out of line was not measured: Equinox's ``noinline`` could not be imported."""


@kind("inline_cannot_nest")
@dataclass(frozen=True)
class CannotNest(Note):
    """It cannot be nested (no reason kept)."""

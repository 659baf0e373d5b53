"""The sentences of what the measuring notes (:mod:`jitmagic.model.notes`): one renderer
per kind of note, registered for its type, so ``str(note)`` (and a record's ``warnings``)
says it. Each sentence is word for word what the measuring layer wrote before notes were
facts, so a report reads as it did."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..model import parts as table
from ..model.notes import Note
from ..model.notes import kinds as k
from ..model.notes import parts as p
from ..model.notes import variants as v
from ..model.shown import register
from ..model.stats.units import fmt_bytes


def _waited(n: k.Waited) -> str:
    return (f"this measurement waited {n.seconds:.2g} s for another thread's to finish: "
            "jitmagic measures one call at a time per process (each swaps the process's own "
            "helpers)")


def _part_moved(n: k.PartMoved) -> str:
    return (f"--{n.option} not measured: it needs JAX's private {n.name}, which JAX "
            f"{n.version} does not have (pip install -U jitmagic for a release made for this "
            "JAX); the rest was measured")


def _staged_run(n: k.StagedRun) -> str:
    return (f"{n.variant}: JAX reported no trace, lowering or compile event inside the first "
            "call, so the stages were timed in a separate staged run (trace, lower, compile): "
            "they do not add up to the first call")


def _clock_disagrees(n: k.ClockDisagrees) -> str:
    gap = abs(n.ours_s - n.theirs_s)
    return (f"{n.variant}: {n.phase[:-2]} measured {n.ours_s * 1e3:.1f} ms but JAX's own event "
            f"says {n.theirs_s * 1e3:.1f} ms ({gap / n.ours_s:.0%} apart)")


def _sweep_unchanged(n: k.SweepUnchanged) -> str:
    return (f"`{n.name}` did not change the program: every value built {n.eqns} jaxpr "
            f"equations (flat), so the growth is not fitted; is `{n.name}` read by the code as "
            "a global?")


def _part_not_measured(n: k.PartNotMeasured) -> str:
    return f"the {table.named(n.part).label} was not measured: {n.error}"


def _one_process_only(n: k.OneProcessOnly) -> str:
    return (f"the {table.named(n.part).label} were not measured: that part runs in one "
            f"process only, and {n.processes} processes share this measurement")


def _target_replicated(n: k.TargetReplicated) -> str:
    return (f"an argument sharded over {n.sharded} devices was replicated: the target has "
            f"{n.devices}")


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


#: What a captured value that is not an array of numbers is, by its kind.
_NOT_ARRAY = {"tracer": "a tracer (a value leaked from another trace)",
              "objects": "a NumPy array of Python objects (dtype object)"}


def _captured_not_array(n: p.CapturedNotArray) -> str:
    what = _NOT_ARRAY.get(n.what, f"a `{n.type_name}` object")
    return (f"the program captures {what}, which is not an array of numbers: it is left "
            "captured and not measured as an argument")


def _constant_stuck(n: p.ConstantStuck) -> str:
    return (f"a constant of {fmt_bytes(n.nbytes)} is read inside a `{n.stuck_in}` (through a "
            "jit call there): left captured")


def _small_constants(n: p.SmallConstants) -> str:
    return (f"{fmt_bytes(n.small)} of the {fmt_bytes(n.total)} of constants are in constants "
            f"under {fmt_bytes(n.lift)} each: those stay captured")


def _constants_still_captured(n: p.ConstantsStillCaptured) -> str:
    return (f"{n.variant}: the passed program still captures {n.count} constants "
            f"({n.nbytes:,} bytes), not the {n.expected} left after passing the others")


def _fixed(said: str) -> Callable[[Any], str]:
    """The renderer of a kind that holds no figure: always ``said``."""
    return lambda _: said


#: Each kind of note's renderer, by its type.
SAID: dict[type[Note], Callable[[Any], str]] = {
    k.CacheSwitchedOff: _fixed("your persistent compilation cache was switched off for the "
                               "measurement and switched back on after"),
    k.CacheServed: _fixed("a compile was served from JAX's persistent cache: compile times "
                          "may be too low"),
    k.Waited: _waited,
    k.PartMoved: _part_moved,
    k.OneExample: _fixed("flat/nested measured on one example: index 0 of the batch along "
                         "each mapped axis (--in-axes); the orderings on the whole batch"),
    k.StagedRun: _staged_run,
    k.EffortFlatFailed: _fixed("XLA's effort was not measured: the flat variant failed"),
    k.AdviceFlatFailed: _fixed("no attribution or advice: they trace the flat variant, "
                               "which failed"),
    k.AdviceStopped: lambda n: f"no attribution or advice: {n.reason}",
    k.NoSecondStart: _fixed("no second start: every variant failed in the comparison"),
    k.PartNotMeasured: _part_not_measured,
    k.OneProcessOnly: _one_process_only,
    k.NoStageEvent: lambda n: (f"{n.variant}: JAX reported no {n.phase[:-2]} event for "
                               f"`{n.entry}` (was it served from a cache?)"),
    k.ClockDisagrees: _clock_disagrees,
    k.SweepUnchanged: _sweep_unchanged,
    k.OrderingFailed: lambda n: f"{n.ordering} failed:\n{n.traceback}",
    k.TargetReplicated: _target_replicated,
    k.TargetShardingsUnmatched: lambda n: (f"your jit's in_shardings did not match the "
                                           f"arguments' {n.what}"),
    k.TargetSettingRefused: lambda n: f"`{n.setting}` left out: libtpu refused it ({n.why})",
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
    p.SettingAlreadyOn: lambda n: f"`{n.setting}` left out: your jit already compiles with it",
    p.SettingRefused: lambda n: (f"`{n.setting}` left out: this backend ({n.backend}) refused "
                                 f"it ({n.why})"),
    p.CapturedNotArray: _captured_not_array,
    p.ConstantStuck: _constant_stuck,
    p.SmallConstants: _small_constants,
    p.ConstantsUnmatched: lambda n: (f"{n.variant}: its inputs could not be matched to the "
                                     "call's arguments"),
    p.NoConstantPassed: lambda n: f"{n.variant}: no constant could be passed as an argument",
    p.ConstantsStillCaptured: _constants_still_captured,
    v.SameAsFlat: _fixed("nothing to nest: the nested program would be the flat one, so it "
                         "was measured once"),
}


def register_notes() -> None:
    """Register each kind's renderer as its ``text`` (``str(note)``)."""
    for note_type, said in SAID.items():
        register("text", note_type, said)

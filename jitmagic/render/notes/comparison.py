"""The sentences of a comparison's warnings (and a sweep's, the orderings', a
``--target`` record's notes): one renderer per kind of :mod:`jitmagic.model.notes.kinds`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...model import parts as table
from ...model.notes import Note
from ...model.notes import kinds as k


def fixed(said: str) -> Callable[[Any], str]:
    """The renderer of a kind that holds no figure: always ``said``."""
    return lambda _: said


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


def _structures(n: k.LeafDiffers) -> str:
    """The two sides where the structures differ: "shape (3,) vs (4,)", "a leaf
    float32[3] vs Point", "Linear with static data 3 vs Linear with static data 4"."""
    if n.structure == "shape":
        return f"shape {n.shapes[0]} vs {n.shapes[1]}"
    return " vs ".join(f"a leaf {dtype}{list(shape)}" if not node else
                       node + (f" with static data {static}" if static else "")
                       for node, dtype, shape, static
                       in zip(n.nodes, n.dtypes, n.shapes, n.statics, strict=True))


def leaf_differs(n: k.LeafDiffers) -> str:
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


def _part_not_measured(n: k.PartNotMeasured) -> str:
    return f"the {table.named(n.part).label} was not measured: {n.error}"


def _one_process_only(n: k.OneProcessOnly) -> str:
    return (f"the {table.named(n.part).label} were not measured: that part runs in one "
            f"process only, and {n.processes} processes share this measurement")


def _target_replicated(n: k.TargetReplicated) -> str:
    return (f"an argument sharded over {n.sharded} devices was replicated: the target has "
            f"{n.devices}")


#: The renderer of each of these kinds, by its type.
SAID: dict[type[Note], Callable[[Any], str]] = {
    k.CacheSwitchedOff: fixed("your persistent compilation cache was switched off for the "
                              "measurement and switched back on after"),
    k.CacheServed: fixed("a compile was served from JAX's persistent cache: compile times "
                         "may be too low"),
    k.Waited: _waited,
    k.PartMoved: _part_moved,
    k.OneExample: fixed("flat/nested measured on one example: index 0 of the batch along "
                        "each mapped axis (--in-axes); the orderings on the whole batch"),
    k.StagedRun: _staged_run,
    k.EffortFlatFailed: fixed("XLA's effort was not measured: the flat variant failed"),
    k.AdviceFlatFailed: fixed("no attribution or advice: they trace the flat variant, "
                              "which failed"),
    k.AdviceStopped: lambda n: f"no attribution or advice: {n.reason}",
    k.NoSecondStart: fixed("no second start: every variant failed in the comparison"),
    k.PartNotMeasured: _part_not_measured,
    k.OneProcessOnly: _one_process_only,
    k.NoStageEvent: lambda n: (f"{n.variant}: JAX reported no {n.phase[:-2]} event for "
                               f"`{n.entry}` (was it served from a cache?)"),
    k.ClockDisagrees: _clock_disagrees,
    k.SweepUnchanged: _sweep_unchanged,
    k.OrderingFailed: lambda n: f"{n.ordering} failed:\n{n.traceback}",
    k.LeafDiffers: leaf_differs,
    k.OutputsDiffer: lambda n: (f"outputs of {n.reference} and {n.other} differ at "
                                f"{leaf_differs(n)}"),
    k.OutputsUncompared: lambda n: (f"outputs of {n.reference} and {n.other} could not be "
                                    f"compared ({n.error})"),
    k.CompareRaised: lambda n: f"{n.error}: {n.message}"[:200],
    k.TargetReplicated: _target_replicated,
    k.TargetShardingsUnmatched: lambda n: (f"your jit's in_shardings did not match the "
                                           f"arguments' {n.what}"),
    k.TargetSettingRefused: lambda n: f"`{n.setting}` left out: libtpu refused it ({n.why})",
}

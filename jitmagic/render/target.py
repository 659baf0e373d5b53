"""``--target TOPOLOGY``: the report of a comparison compiled for a TPU, never run."""

from __future__ import annotations

import math
from collections.abc import Iterator

from ..backends.target import calibration
from ..model.comparison import Comparison
from ..model.notes import said as notes_said
from ..model.progress import Crashed, Failed, TimedOut
from ..model.rows import VARIANTS
from ..model.stats.cold import cold_only
from ..model.stats.rule import INCONCLUSIVE, SAME, Difference, difference, median
from ..model.stats.units import counted, fmt_bytes, fmt_ratio, fmt_s
from ..model.stats.witness import CPU, WALL, Clock, on
from ..model.target import (
    ONE_DEVICE,
    REPLICATED,
    STAGES,
    TargetCompile,
    TopologyRefused,
    compile_difference,
    stage_difference,
    to_compiled,
    waited_share,
)
from .blocks import (
    Block,
    Cell,
    Code,
    Details,
    Heading,
    Html,
    Para,
    Pre,
    Table,
    answer_first,
    provenance,
    sampled_line,
)
from .format import PHASE_LABELS, median_cell
from .verdicts import OUTCOME, interval_ends, judged, undecided_reason, waited

#: What the table says where a figure needs the device.
NOT_MEASURABLE = "not measurable: nothing runs without the TPU"


def headline(c: Comparison, t: TargetCompile) -> str:
    """The verdict on compile time for the target, in one sentence."""
    flat, nested = c.flat.samples, c.nested.samples
    what = f"Compiling for {t.topology} (trace + lower + XLA compile)"
    if not flat.get("compile_s") and c.stopped:
        return f"{what}: {c.stopped}, before any compile finished."
    if not nested.get("trace_s"):
        return f"{what}: nothing to nest, so flat alone was compiled."
    d, clock = c.verdict.difference, c.verdict.clock  # the record's: the one rule's
    said = judged(f"{what} with nesting", d, clock)
    if d.kind == INCONCLUSIVE:
        said += (f" after {counted(d.runs, 'run')}; "
                 f"{undecided_reason(d, c.repeats_ended, c.stopped)}")
    share = waited_share([flat, nested])
    if clock == CPU and share is not None:  # as every comparison says a busy machine
        said += f"; CPU time decides: the machine was busy, its threads {waited(share)}"
    return f"{said}."


def _ratio(d: Difference) -> str:
    if math.isnan(d.ratio):
        return "—"
    if not d.enough_data:
        return f"{fmt_ratio(d.ratio)} (one run)"
    flag = {INCONCLUSIVE: f" {OUTCOME[INCONCLUSIVE]}", SAME: " same"}.get(d.kind, "")
    return f"{fmt_ratio(d.ratio)} ({interval_ends(d.low, d.high)}){flag}"


def _rows(c: Comparison, t: TargetCompile, clock: Clock) -> list[list[str | Cell]]:
    flat, nested = (cold_only(v.samples, "tpu") for v in (c.flat, c.nested))
    tail = ", CPU time" if clock == CPU else ""
    rows: list[list[str | Cell]] = []
    for stage in STAGES:
        label = PHASE_LABELS[stage] + (f" for {t.device_kind}" if stage == "compile_s" else "")
        rows.append([label + tail, median_cell(on(flat, stage, clock)),
                     median_cell(on(nested, stage, clock)),
                     _ratio(stage_difference(flat, nested, stage, clock))])
    rows.append(["trace + lower + compile" + tail, median_cell(to_compiled(flat, clock)),
                 median_cell(to_compiled(nested, clock)),
                 _ratio(compile_difference(flat, nested, clock))])
    return rows


def _table(c: Comparison, t: TargetCompile) -> Table:
    rows = _rows(c, t, WALL)
    rows += [[PHASE_LABELS[p], NOT_MEASURABLE, "", ""] for p in ("first_call_s", "execute_s")]
    if c.flat.samples.get("compile_cpu_s"):
        rows += _rows(c, t, CPU)
    return Table(("phase", "flat", "nested", "flat/nested"), rows)


def host_lines(t: TargetCompile) -> list[str]:
    """Whose seconds these are, and how far they are from the TPU host's."""
    lines = [f"seconds of this host ({t.host}), compiling with libtpu {t.libtpu or '?'} for "
             f"{counted(t.devices, f'{t.device_kind} device')}, not the TPU "
             "host's"]
    found = calibration(t.topology, t.host)
    kind = (found or t).topology.partition(":")[0]
    if found is None:
        lines.append(f"calibration: none for this host ({t.host}) and {kind} yet, so how far these "
                     "seconds are from the TPU host's is not known (docs/benchmarks.md)")
    else:
        lines.append(f"calibration ({found.measured}; {kind}, measured on {found.topology}, wall "
                     f"time on a quiet machine): the TPU host took {fmt_ratio(found.low)} to "
                     f"{fmt_ratio(found.high)} this host's compile seconds, by program (median "
                     f"{fmt_ratio(found.tpu_over_here)}), so no one factor turns these seconds "
                     f"into the TPU's; the discussion's example compiled "
                     f"{fmt_ratio(found.nesting_here)} faster nested here and "
                     f"{fmt_ratio(found.nesting_tpu)} on the TPU: a verdict here says which way "
                     "nesting goes there, not by how much")
    return lines


def placement_line(t: TargetCompile) -> str:
    """How the call's arguments were placed on the topology's devices."""
    if t.placement == ONE_DEVICE:
        said = "arguments: on the topology's one device"
    elif t.placement == REPLICATED:
        said = (f"arguments: replicated over the {t.devices} devices (none carried a sharding "
                f"over {t.devices} devices; give them a NamedSharding over a mesh of "
                f"{t.devices} devices to compile yours)")
    else:
        said = f"arguments: your shardings, over the topology's {t.devices} devices"
    return "; ".join((said, *notes_said(t.placement_notes)))


def memory_lines(c: Comparison, t: TargetCompile) -> Iterator[str]:
    """Each variant's program: its size, XLA's cost analysis and its memory per device."""
    for name in VARIANTS:
        v, m = c.variants[name], t.memory.get(name)
        if not v.samples.get("compile_s"):
            continue
        each = " per device" if t.devices > 1 else ""  # XLA's analyses of one device's part
        said = (f"{name}: {v.stablehlo_bytes or 0:,} StableHLO bytes, {v.compiled_ops or 0:,} "
                f"instructions after XLA, {v.compiled_flops or 0:,} flops and "
                f"{v.compiled_bytes_accessed or 0:,} bytes accessed{each} (XLA's cost analysis)")
        if m is not None:
            fits = t.fits(name)
            hbm = "" if t.hbm_bytes is None else \
                f" of {fmt_bytes(t.hbm_bytes)} HBM: {'fits' if fits else 'does NOT fit'}"
            said += (f"; per device {fmt_bytes(m.total_bytes) or '0 B'} (arguments "
                     f"{fmt_bytes(m.argument_bytes) or '0 B'}, outputs "
                     f"{fmt_bytes(m.output_bytes) or '0 B'}, temporaries "
                     f"{fmt_bytes(m.temp_bytes) or '0 B'}, code {fmt_bytes(m.code_bytes) or '0 B'})"
                     f"{hbm}")
        yield said


def program_lines(c: Comparison) -> list[str]:
    """Whether XLA built one program for both variants for the target (and what it means)."""
    if c.same_compiled is None:
        return []
    if c.same_compiled:
        return ["XLA compiled both variants to the same program for the target, instruction "
                "by instruction: nesting changed the compile's work, not the program the TPU "
                "would run"]
    return ["XLA compiled the variants to DIFFERENT programs for the target (the "
            "instructions and flops above): what each costs to run on the TPU may differ, "
            "and nothing here runs them, so a faster compile is not a faster program"]


def warm_lines(t: TargetCompile) -> list[str]:
    """The runs whose compile was not cold, by the cold check."""
    return [f"not cold: the {name} variant's compile in run{'s' * (len(runs) > 1)} "
            f"{', '.join(str(r + 1) for r in runs)} fell under 0.7 of its first run's on "
            "both clocks (libtpu's compiler kept work between compiles): left out of "
            "the medians and the verdict, as in every comparison" for name, runs in t.warm.items()]


def effort_lines(t: TargetCompile) -> list[str]:
    """``--effort``: each setting's XLA compile for the target against the default's."""
    default = t.effort.get("default")
    if default is None:
        return []
    rounds = len(default.compile_s)
    said = [f"XLA's effort for {t.topology} (--effort): the flat program compiled again at "
            f"each setting, {counted(rounds, 'round')}; the default's XLA compile "
            f"{fmt_s(median(list(default.compile_s)))}"]
    for name, row in t.effort.items():
        if name == "default":
            continue
        if row.error:
            said.append(f"`{name}`: failed ({row.error.splitlines()[0][:200]})")
            continue
        d = difference(list(default.compile_s), list(row.compile_s))
        said.append(f"{judged(f'`{name}` ({row.line}): its XLA compile', d)}; what a call "
                    "costs at it is not measurable without the TPU (on a TPU v5e O0 made a "
                    "call of a 24-layer MLP 0.75× as fast: docs/effort.md)")
    return [*said, *notes_said(t.effort_notes)]


def answer(c: Comparison, t: TargetCompile) -> list[Block]:
    """What ``--target`` asks, first: the verdict, the placement, whose figures (where the
    compiler remembers), a misfit, a stop, an error."""
    runs = len(c.flat.samples.get("compile_s", []))
    out: list[Block] = [
        Heading(("jitcompare --target ", Code(t.topology), ": ", Code(c.entry),
                 f" ({counted(runs, 'cold compile')} a variant, none run)")),
        Para([headline(c, t)], bold=True), Para([placement_line(t)])]
    out += [Para([session], "note")] if (session := sampled_line(c)) else []
    out += [Para([f"stopped: {c.stopped}"], "warning")] if c.stopped else []
    misfits = [name for name in VARIANTS if name in t.memory and t.fits(name) is False]
    out += [Para([f"{name}: does NOT fit one device's {fmt_bytes(t.hbm_bytes or 0)} HBM"
                  for name in misfits], "warning")] if misfits else []
    return out + [Pre(f"error: {v.error}", "error") for v in c.variants.values() if v.error]


def details(c: Comparison, t: TargetCompile) -> list[Block]:
    """The rest, behind ``-v`` or a click: stages, whose seconds, size, memory, jaxprs."""
    out: list[Block] = [_table(c, t), Para([*host_lines(t),
                                            *memory_lines(c, t), *program_lines(c),
                                            *warm_lines(t), _helpers(c)])]
    out += [Para(effort_lines(t))] if t.effort else []
    out += [Para([("warning: ", w)], "warning") for w in c.warnings]
    out += provenance(c, sampled=False)  # said in the answer
    return out + [Details((f"jaxpr, {name} ({counted(v.jaxpr_eqns or 0, 'equation')})",),
                          v.jaxpr_text) for name, v in c.variants.items() if v.jaxpr_text]


#: What the report folds (in HTML) or shows only with ``-v`` (in text).
FOLDED = "the stages' table, whose seconds these are, the programs' size and memory"


def section(c: Comparison, t: TargetCompile, verbose: bool = False) -> tuple[str, Html]:
    """The report as (text, HTML): :func:`answer` first, then :func:`details`."""
    return answer_first(answer(c, t), details(c, t), FOLDED, verbose)


def _helpers(c: Comparison) -> str:
    return "nested helpers: " + (", ".join(
        f"{h} ({counted(c.nested.helper_calls.get(h, 0), 'jit call')})" for h in c.nested.helpers)
        or "none (nothing to nest)")


def refused(r: TopologyRefused) -> str:
    """``--target``'s first compile did not finish: libtpu's reason; this process lives on."""
    end, start = r.end, f"--target {r.topology}"
    if isinstance(end, Crashed):
        said = f": {end.fatal}" if end.fatal else ""
        return (f"{start}: libtpu killed the process compiling for it ({end.signal_name})"
                f"{said}; it was a child process, checking the topology first, so this one "
                "lives on: write another topology")
    if isinstance(end, Failed):
        first = (end.message.strip().splitlines() or [""])[0]
        return f"{start}: libtpu refused it: {end.error_type}: {first}"
    if isinstance(end, TimedOut):
        return (f"{start}: libtpu compiled nothing for it within {fmt_s(end.seconds)} (a "
                "child process, checking the topology first; killed)")
    return f"{start}: cannot check the topology in a child process: {end}"

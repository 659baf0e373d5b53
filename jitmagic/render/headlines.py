"""The verdict sentences of whole records: comparisons, sweeps and orderings."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..model.causes.cause import Compared
from ..model.comparison import Comparison
from ..model.orderings import TOGGLED, Orderings
from ..model.rows import VARIANTS, OrderingRow
from ..model.shown import register
from ..model.stats.rule import INCONCLUSIVE, SAME, Difference, median
from ..model.stats.units import counted, fmt_s
from ..model.stats.verdicts import BUDGET, Verdict
from ..model.stats.witness import CPU, FIRST_CALL, WALL, Clock, on
from ..model.sweep import Sweep
from ..model.target import target_of
from .target import headline as target_headline
from .verdicts import (
    OUTCOME,
    inconclusive_part,
    interval,
    say,
    times,
    undecided_reason,
    verb,
    with_interval,
)

#: The stages that explain a first call, with the words the verdict uses for them.
STAGES = (("trace_s", "trace"), ("lower_s", "lower"), ("compile_s", "XLA compile"))


def other_clock(c: Compared, first: Difference) -> str:
    """What the clock that did not decide the first call says, where it must be said."""
    if c.clock_of(FIRST_CALL) == CPU:
        wall = c.difference(FIRST_CALL, WALL)
        undecided = f"{say(wall)}, " if wall.kind == INCONCLUSIVE else ""  # its verdict first
        return f"wall{':' * (not wall.significant)} {undecided}{with_interval(wall)}, " \
            "on a busy machine"
    cpu = c.difference(FIRST_CALL, CPU)
    if first.significant and cpu.significant and cpu.kind != first.kind:
        return f"CPU time points the other way: {with_interval(cpu, CPU)}"
    return ""


def comparison_text(c: Compared, first: Difference) -> str:
    """The verdict on a :class:`~.comparison.Comparison`: first call, then the stages."""
    if not (c.flat.ok and c.nested.ok):
        return "Only one variant ran; see its error below."
    if nothing_measured(c):
        return "Stopped before any cold run finished: nothing was measured."
    if not_run(c):
        return "Stopped before the nested variant finished a run: nothing to compare."
    if not c.nested.helpers:
        return _nothing_nested(c)
    if math.isnan(first.ratio):
        return "The first call was not measured: cannot compare cold starts."
    helpers, clock = helpers_named(c), c.clock_of(FIRST_CALL)
    flat, nested = (median(on(c.judged(name).samples, FIRST_CALL, clock)) for name in VARIANTS)
    numbers = f"{fmt_s(flat)} flat, {fmt_s(nested)} nested{' CPU time' * (clock == CPU)}"
    stages = by_stage(c)
    other = other_clock(c, first)
    if first.kind == INCONCLUSIVE:
        lead = (f"Nested jit on {helpers}: {say(first)}, the first call {times(first, clock)} "
                f"{interval(first, numbers)} after {_runs_read(c, first)}; "
                f"{undecided_reason(first, c.repeats_ended, c.stopped)}{_more_costs(c)}"
                f"{'; ' + other if other else ''}")
        return f"{lead}.{' ' + stages[0].upper() + stages[1:] + '.' if stages else ''}"
    said = (f" makes the first call{' take' * (clock == CPU)} {times(first, clock)}"
            if first.significant else f": {times(first, clock)} in the first call")
    lead = f"Nested jit on {helpers}{said} {_numbers(first, numbers, _runs_read(c, first))}"
    return f"{lead}{'; ' + other if other else ''}{'; ' + stages if stages else ''}."


def _nothing_nested(c: Compared) -> str:
    """The verdict where the nested variant nested no helper (none found, or none could be)."""
    if not c.nested.inline:
        return (f"`{c.entry}` calls no helper of yours, so both variants are the same program: "
                "nothing to nest.")
    n = len(c.nested.inline)
    found = f"{n} helpers of yours were" if n > 1 else "A helper of yours was"
    if changed := program_change(c):
        return (f"{found} found but no jit call of {'them' if n > 1 else 'it'} was "
                f"recognised in the nested program (see the notes), though nesting "
                f"changed that program: {changed}.")
    return (f"{found} found but none could be nested (see the notes), so both variants "
            "are the same program.")


def _more_costs(c: Compared) -> str:
    """What one more ``-r auto`` run would cost where the budget ended it (a clause)."""
    if c.repeats_ended != BUDGET:
        return ""
    cold = sum(median(v.samples.get(FIRST_CALL, [])) for v in (c.flat, c.nested))
    if math.isnan(cold):
        return ""
    return (f" (each further run takes at least {fmt_s(cold)} of wall time, flat and nested: "
            f"a larger --budget, in seconds, lets -r auto take more)")


def program_change(c: Compared) -> str:
    """How the nested program's structure differs from the flat one's ("" where not)."""
    pairs = ((getattr(c.flat, field, None), getattr(c.nested, field, None), word)
             for field, word in (("jaxpr_eqns", "jaxpr equation"), ("nested_calls", "jit call")))
    return ", ".join(f"{counted(nested, word)} against {flat}" for flat, nested, word in pairs
                     if flat is not None and nested is not None and flat != nested)


def comparison_headline(c: Compared, first: Difference) -> str:
    """The comparison's verdict in one line: ``Nested jit on `f`: first call 3.2× faster…``."""
    if not (c.flat.ok and c.nested.ok) or not_run(c) or not c.nested.helpers \
            or math.isnan(first.ratio):
        return ""
    lead, clock = f"Nested jit on {helpers_named(c)}:", c.clock_of(FIRST_CALL)
    other = other_clock(c, first)
    if first.kind == INCONCLUSIVE:
        said = (f"{say(first)}, first call "
                f"{inconclusive_part(first, c.repeats_ended, clock, c.stopped)}")
    elif first.kind == SAME:
        said = f"{times(first, clock)} in the first call {interval(first)}, " \
            f"{_runs_read(c, first)}"
    else:
        said = f"first call {with_interval(first, clock)}, {_runs_read(c, first)}"
    return f"{lead} {said}{'; ' + other if other else ''}"


def sweep_headline(name: str, values: Sequence[object], points: Sequence[Compared],
                   most: int = 20) -> str:
    """A sweep's verdict in one line, value by value (at most ``most`` named)."""
    parts = [f"{value!r} → {_point_said(point)}"
             for value, point in list(zip(values, points, strict=True))[:most]]
    left = len(points) - most
    more = f"; {left} more value{'s' * (left != 1)}" if left > 0 else ""
    return f"Nested jit, first call by {name}: " + "; ".join(parts) + more


def _point_said(c: Compared) -> str:
    """One value's first-call verdict in a few words."""
    first = c.verdict.difference
    if not comparison_headline(c, first):  # not compared: nothing nested, failed, stopped
        return "nothing to nest" if c.flat.ok and not c.nested.helpers else "not compared"
    if first.kind == INCONCLUSIVE:
        spread = interval(first)[1:-1] if first.enough_data else counted(first.runs, "run")
        return f"{say(first)} ({times(first)}, {spread})"
    return with_interval(first)


def _runs_read(c: Compared, first: Difference) -> str:
    """``6 runs``, or ``7 flat and 6 nested runs`` where the verdict read more of one."""
    flat, nested = (len(v.samples.get(FIRST_CALL, ())) for v in (c.flat, c.nested))
    return counted(first.runs, "run") if flat == nested else f"{flat} flat and {nested} nested runs"


def helpers_named(c: Compared) -> str:
    return ", ".join(f"`{h}`" for h in c.nested.helpers)


def _numbers(d: Difference, numbers: str, runs_said: str | None = None) -> str:
    """``(2.1×–4.0×; 2.4 s flat, 450 ms nested, 3 runs)``."""
    return interval(d, f"{numbers}, {runs_said or counted(d.runs, 'run')}")


def nothing_measured(c: Compared) -> bool:
    """Whether measuring stopped before any cold run finished (no figure to show)."""
    return not_run(c) and not c.flat.samples.get("first_call_s")


def not_run(c: Compared) -> bool:
    """Whether measuring stopped before the nested variant finished one trace."""
    return bool(c.stopped) and c.nested.ok and not c.nested.samples.get("trace_s")


def by_stage(c: Compared) -> str:
    """The stages that explain the first call: those that differ, then those that do not."""
    measured = [(phase, label, d) for phase, label in STAGES
                if not math.isnan((d := c.difference(phase)).ratio)]
    if not measured:
        return ""
    changed = [f"{label} {with_interval(d, c.clock_of(phase))}"
               for phase, label, d in measured if d.significant]
    if not changed:  # on a busy machine a wall-time stage may differ: name the clock
        on_cpu = " in CPU time" * all(c.clock_of(phase) == CPU for phase, _, _ in measured)
        return (f"no stage ({', '.join(label for _, label, _ in measured)}) differs "
                f"measurably{on_cpu}")
    rest = [f"{', '.join(labels)}: {OUTCOME[kind]}" for kind in (SAME, INCONCLUSIVE)
            if (labels := [label for _, label, d in measured if d.kind == kind])]
    return "; ".join([f"by stage: {', '.join(changed)}", *rest])


def orderings_text(chosen: OrderingRow, other: OrderingRow, per_call: Difference,
                   same_program: bool | None, clock: Clock = WALL) -> str:
    """The verdict on ordering ``chosen`` against ``other``, per call, with its medians."""
    if math.isnan(per_call.ratio):
        return f"{chosen.name}: per-call time against {other.name} was not measured."
    chosen_s, other_s = (median(on(row.samples, "execute_s", clock)) for row in (chosen, other))
    numbers = f"{fmt_s(chosen_s)} against {fmt_s(other_s)}{' CPU time' * (clock == CPU)}"
    if per_call.significant:
        speed = (f"{chosen.name} {verb(clock)} {times(per_call, clock)} per call than {other.name} "
                 f"{_numbers(per_call, numbers)}")
    elif per_call.kind == SAME:
        speed = (f"{chosen.name} and {other.name}: {times(per_call, clock)} per call "
                 f"{_numbers(per_call, numbers)}")
    else:
        bounds = interval(per_call)[1:-1]
        speed = (f"{chosen.name} against {other.name}: {say(per_call)}, {times(per_call, clock)} "
                 f"per call ({bounds + '; ' if bounds else ''}{numbers}) after "
                 f"{counted(per_call.runs, 'run')}; {undecided_reason(per_call, None)}")
    program = {None: "their XLA programs were not compared",
               False: "they compile to different XLA programs"}.get(
        same_program, "both compile to the same program" + (
            "; the difference is Python dispatch (vmap(jit(f)) batches in Python on every call)"
            if per_call.significant else ""))
    return f"{speed}; {program}."


def orderings_headline(chosen: OrderingRow, other: OrderingRow, per_call: Difference,
                       clock: Clock = WALL) -> str:
    """``jit(vmap(f)) against vmap(jit(f)): 2× faster per call (1.9×–2.1×), 5 runs``."""
    if math.isnan(per_call.ratio):
        return ""
    lead = f"{chosen.name} against {other.name}:"
    said = f"{times(per_call, clock)} per call {interval(per_call)}"
    if per_call.kind == INCONCLUSIVE:
        return (f"{lead} {say(per_call)}, {said} after {counted(per_call.runs, 'run')}; "
                f"{undecided_reason(per_call, None)}").replace("  ", " ")
    return f"{lead} {said}, {counted(per_call.runs, 'run')}".replace("  ", " ")


def first_sentence(text: str) -> str:
    """A verdict's text cut to its first sentence: its headline where none of its own."""
    return text.split(". ")[0].rstrip(".") + "."


def comparison_summary(c: Comparison) -> str:
    """``<Comparison g: nested 2.9× faster first call (…), 3 runs>``: the one-line repr."""
    taken = max((len(v.samples.get(FIRST_CALL, [])) for v in c.variants.values()), default=0)
    first, cpu = c.difference(FIRST_CALL), c.clock_of(FIRST_CALL) == CPU
    read = _runs_read(c, first) if c.nested.samples.get(FIRST_CALL) else counted(taken, "run")
    if not c.nested.helpers:
        said = "nothing nested"
    elif math.isnan(first.ratio):
        said = "first call not measured"
    elif first.kind == SAME:
        said = f"{OUTCOME[SAME]} in first call{' CPU time' * cpu} " \
               f"{interval(first)}".rstrip()
    else:
        said = (f"nested first call {times(first, CPU)} {interval(first)}"  # its clock
                if cpu else f"nested {times(first)} first call {interval(first)}").rstrip()
        said = f"{say(first)}, {said}" if first.kind == INCONCLUSIVE else said
    return f"<Comparison {c.entry}: {said}, {read}>"


def _ordering_pair(v: Verdict) -> tuple[Orderings, OrderingRow, OrderingRow]:
    o: Orderings = v.subject
    other = TOGGLED[1] if v.chosen == TOGGLED[0] else TOGGLED[0]
    return o, o.rows[v.chosen], o.rows[other]


def _orderings_verdict(v: Verdict) -> str:
    o, chosen, other = _ordering_pair(v)
    return orderings_text(chosen, other, v.difference, o.rows[TOGGLED[1]].same_program,
                          v.clock)


def _target_verdict(v: Verdict) -> str | None:
    """A ``--target`` comparison's verdict, on the compile for the target (None: not one)."""
    t = target_of(v.subject.env)
    return None if t is None else target_headline(v.subject, t)


def register_headlines() -> None:
    """Word the records' verdicts here (text, line, summary, headline)."""
    register("verdict", Comparison,
             lambda v: _target_verdict(v) or comparison_text(v.subject, v.difference))
    register("verdict line", Comparison,
             lambda v: _target_verdict(v) or comparison_headline(v.subject, v.difference)
             or first_sentence(comparison_text(v.subject, v.difference)))
    register("summary", Comparison, comparison_summary)
    register("verdict", Orderings, _orderings_verdict)
    register("verdict line", Orderings,
             lambda v: orderings_headline(*_ordering_pair(v)[1:], v.difference, v.clock)
             or first_sentence(_orderings_verdict(v)))
    register("headline", Sweep, lambda s: sweep_headline(s.name, s.values, s.points))

"""Verdicts: one sentence on what the user feels, derived from raw samples.

A comparison's verdict leads with the *first call* (the cold start the user
waits for) and explains it through the stages; an orderings verdict is about
the time *per call*. Both decide with the one rule, :func:`.rule.difference`,
so "faster", "slower", "no measurable difference" and "inconclusive" mean the
same everywhere, and every ratio they give carries its interval. Derived on
demand, never stored as the source of truth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .rule import INCONCLUSIVE
from .rule import MAX_PAIRS
from .rule import MAX_PAIRS_BUSY
from .rule import SAME
from .rule import Difference
from .rule import json_number
from .rule import median
from .units import counted
from .units import fmt_s
from .units import ratio_figures
from .witness import CPU
from .witness import FIRST_CALL
from .witness import WALL
from .witness import on

#: The stages that explain a first call, with the words the verdict uses for them.
STAGES = (("trace_s", "trace"), ("lower_s", "lower"), ("compile_s", "XLA compile"))
#: Why ``-r auto`` stopped taking rounds (``Comparison.repeats_ended``): the rule decided,
#: the most rounds it takes, or its time budget ran out. The strings are saved in reports
#: (``"most pairs"`` from when a round was called a pair), so they never change.
DECIDED, MOST_ROUNDS, BUDGET = "decided", "most pairs", "budget"


@dataclass(frozen=True)
class Verdict:
    """What a verdict decided (``key``: ``"first_call"`` or ``"per_call"``), its text, and
    its one-line form (``line``; empty: the text's first sentence)."""

    key: str
    difference: Difference
    text: str
    line: str = ""

    @property
    def kind(self) -> str:
        return self.difference.kind

    @property
    def headline(self) -> str:
        """The verdict in one line, shown first (under the title) by every front end."""
        return self.line or self.text.split(". ")[0].rstrip(".") + "."

    def to_dict(self) -> dict[str, Any]:
        d = self.difference
        return {self.key: self.kind, "ratio": json_number(d.ratio),
                "ratio_low": json_number(d.low), "ratio_high": json_number(d.high),
                "text": self.text}


def times(d: Difference, clock: str = WALL) -> str:
    """``15.9× faster`` / ``1.4× slower`` (the gap seen, decided or not) / ``no
    measurable difference`` / ``1.00×`` (an undecided ratio that rounds to 1: no side).
    On the CPU clock: ``1.4× less CPU time`` / ``1.4× more CPU time`` / ``no measurable
    difference in CPU time``."""
    cpu = clock == CPU
    if d.kind == SAME:
        return f"{d.kind} in CPU time" if cpu else d.kind
    if _level(d):
        return f"{ratio_figures(1.0)}×{' CPU time' * cpu}"
    if d.ratio > 1:
        return f"{ratio_figures(d.ratio)}× {'less CPU time' if cpu else 'faster'}"
    return f"{ratio_figures(1 / d.ratio)}× {'more CPU time' if cpu else 'slower'}"


def verb(clock: str, past: bool = False) -> str:
    """The verb before :func:`times`' words of a difference: "is 2× faster", "takes 2× less
    CPU time" (``past``: "was", "took")."""
    if clock == CPU:
        return "took" if past else "takes"
    return "was" if past else "is"


def stated(what: str, d: Difference, clock: str = WALL, past: bool = False,
           wall_named: bool = False) -> str:
    """The rule's verdict on ``what`` as a sentence, with its interval: ``the first call
    is 2× faster (1.5×–3.0×)``, ``... takes 2× less CPU time (...)``, ``... shows no
    measurable difference in CPU time (...)``; ``past``: "was", "took", "showed";
    ``wall_named``: a wall-time verdict says so ("2× faster in wall time"), where it
    stands among figures of CPU time. The one place a verdict follows its subject, so
    that none reads "is no measurable difference"."""
    if d.kind == SAME:
        said = f"{what} {'showed' if past else 'shows'} {times(d, clock)}"
    else:
        said = f"{what} {verb(clock, past)} {times(d, clock)}"
    said += " in wall time" * (wall_named and clock == WALL)
    return f"{said} {interval(d)}".rstrip()


def _level(d: Difference) -> bool:
    """An undecided ratio that rounds to 1.00: said with no side, its interval unturned."""
    return not d.significant and ratio_figures(d.ratio) == ratio_figures(1.0)


def interval(d: Difference) -> str:
    """``(2.1×–4.0×)``: the interval, turned as :func:`times` turns the ratio ("slower"
    reads as 1/ratio); empty where there is none (one run a side)."""
    if math.isnan(d.low) or math.isnan(d.high):
        return ""
    turned = d.kind != SAME and d.ratio < 1 and not _level(d)
    low, high = (1 / d.high, 1 / d.low) if turned else (d.low, d.high)
    return f"({_end(low)}×–{_end(high)}×)"


def _end(x: float) -> str:
    """An end of an interval, with as many decimals as it takes to show which side of 1 it
    lies (``1.004``, ``0.99996``) where two would round it to 1.00: whether an interval
    leaves 1 out is what decides a verdict."""
    digits = 2
    while x != 1 and round(x, digits) == 1 and digits < 6:
        digits += 1
    return ratio_figures(x) if digits == 2 else f"{x:.{digits}f}"


def with_interval(d: Difference, clock: str = WALL) -> str:
    """``3.2× faster (2.1×–4.0×)``."""
    return f"{times(d, clock)} {interval(d)}".rstrip()


def runs(n: int) -> str:
    """``1 run`` / ``3 runs``."""
    return counted(n, "run")


def undecided_reason(d: Difference, ended: str | None) -> str:
    """Why an inconclusive gap was left undecided: from ``Comparison.repeats_ended``
    (None: a fixed ``-r N``)."""
    if not d.enough_data:
        return "one run a side has no spread to judge by: use -r 3 or more, or -r auto"
    if ended == BUDGET:
        return "the time budget ran out"
    if ended == MOST_ROUNDS:
        # past MAX_PAIRS only on a busy machine, which the headline says once, after this
        return f"{MAX_PAIRS_BUSY if d.runs > MAX_PAIRS else MAX_PAIRS} runs is the most " \
               "-r auto takes"
    if d.runs < MAX_PAIRS:
        return f"-r auto or a larger -r (say -r {max(2 * d.runs, MAX_PAIRS)}) may tell"
    return f"a larger -r (say -r {2 * d.runs}) or a quieter machine may tell"


def inconclusive_part(d: Difference, ended: str | None, clock: str = WALL) -> str:
    """``1.9× faster (0.9×–3.9×) after 3 runs; the time budget ran out``."""
    return f"{with_interval(d, clock)} after {runs(d.runs)}; {undecided_reason(d, ended)}"


def other_clock(c: Any, first: Difference) -> str:
    """What the clock that did not decide the first call says, where the report must
    say it (a clause, "" where not): on a busy machine, wall time beside the CPU time
    that decided; on a quiet one, CPU time where it decided the other way."""
    if c.clock_of(FIRST_CALL) == CPU:
        wall = c.difference(FIRST_CALL, WALL)
        kind = "" if wall.significant else \
            ", no measurable difference," if wall.kind == SAME else ", inconclusive,"
        return f"wall {with_interval(wall)}{kind} on a busy machine"
    cpu = c.difference(FIRST_CALL, CPU)
    if first.significant and cpu.significant and cpu.kind != first.kind:
        return f"CPU time points the other way: {with_interval(cpu, CPU)}"
    return ""


def comparison_text(c: Any, first: Difference) -> str:
    """The verdict on a :class:`~.comparison.Comparison`: first call, then the stages."""
    if not (c.flat.ok and c.nested.ok):
        return "Only one variant ran; see its error below."
    if not_run(c):
        if not c.flat.samples.get("first_call_s"):
            return "Stopped before any cold run finished: nothing was measured."
        return "Stopped before the nested variant ran: nothing to compare."
    if not c.nested.helpers and c.nested.inline:
        n = len(c.nested.inline)
        found = f"{n} helpers of yours were" if n > 1 else "A helper of yours was"
        changed = program_change(c)
        if changed:
            return (f"{found} found but no jit call of {'them' if n > 1 else 'it'} was "
                    f"recognised in the nested program (see the notes), though nesting "
                    f"changed that program: {changed}.")
        return (f"{found} found but none could be nested (see the notes), so both variants "
                "are the same program.")
    if not c.nested.helpers:
        return (f"`{c.entry}` calls no helper of yours, so both variants are the same program: "
                "nothing to nest.")
    if math.isnan(first.ratio):
        return "The first call was not measured: cannot compare cold starts."
    helpers, clock = _helpers(c), c.clock_of(FIRST_CALL)
    numbers = _first_calls(c, clock)
    stages = by_stage(c)
    other = other_clock(c, first)
    if first.kind == INCONCLUSIVE:
        bounds = interval(first)[1:-1]
        lead = (f"Nested jit on {helpers}: inconclusive, the first call {times(first, clock)} "
                f"({bounds + '; ' if bounds else ''}{numbers}) after {runs(first.runs)}; "
                f"{undecided_reason(first, c.repeats_ended)}{_more_costs(c)}"
                f"{'; ' + other if other else ''}")
        return f"{lead}.{' ' + stages[0].upper() + stages[1:] + '.' if stages else ''}"
    take = " take" if clock == CPU else ""
    if first.significant:
        lead = (f"Nested jit on {helpers} makes the first call{take} {times(first, clock)} "
                f"{_numbers(first, numbers)}")
    else:
        lead = (f"Nested jit on {helpers}: {times(first, clock)} in the first call "
                f"{_numbers(first, numbers)}")
    return f"{lead}{'; ' + other if other else ''}{'; ' + stages if stages else ''}."


def _more_costs(c: Any) -> str:
    """Where the time budget ended ``-r auto``, what one more run would cost (a clause):
    at least the two cold first calls' medians, in wall time, which ``--budget`` bounds."""
    if c.repeats_ended != BUDGET:
        return ""
    cold = sum(median(v.samples.get(FIRST_CALL, [])) for v in (c.flat, c.nested))
    if math.isnan(cold):
        return ""
    return (f" (each further run takes at least {fmt_s(cold)} of wall time, flat and nested: "
            f"a larger --budget, in seconds, lets -r auto take more)")


def program_change(c: Any) -> str:
    """How the nested program's structure differs from the flat one's (``36 jaxpr
    equations against 89, 5 jit calls against 0``); "" where it does not, or was not
    counted: a nesting that changed the program is never called the same program."""
    parts = []
    for field, word in (("jaxpr_eqns", "jaxpr equation"), ("nested_calls", "jit call")):
        flat, nested = getattr(c.flat, field, None), getattr(c.nested, field, None)
        if flat is not None and nested is not None and flat != nested:
            parts.append(f"{counted(nested, word)} against {flat}")
    return ", ".join(parts)


def _first_calls(c: Any, clock: str) -> str:
    """``2.4 s flat, 450 ms nested`` (medians), in CPU time where that decided."""
    flat, nested = (median(on(v.samples, FIRST_CALL, clock)) for v in (c.flat, c.nested))
    return f"{fmt_s(flat)} flat, {fmt_s(nested)} nested{' CPU time' * (clock == CPU)}"


def comparison_headline(c: Any, first: Difference) -> str:
    """The comparison's verdict in one line: ``Nested jit on `f`: first call 3.2× faster
    (2.1×–4.0×), 5 runs``; for anything else, the first sentence of its text."""
    if not (c.flat.ok and c.nested.ok) or not_run(c) or not c.nested.helpers \
            or math.isnan(first.ratio):
        return ""
    lead, clock = f"Nested jit on {_helpers(c)}:", c.clock_of(FIRST_CALL)
    other = other_clock(c, first)
    if first.kind == INCONCLUSIVE:
        said = f"inconclusive, first call {inconclusive_part(first, c.repeats_ended, clock)}"
    elif first.kind == SAME:
        said = f"{times(first, clock)} in the first call {interval(first)}, {runs(first.runs)}"
    else:
        said = f"first call {with_interval(first, clock)}, {runs(first.runs)}"
    return f"{lead} {said}{'; ' + other if other else ''}"


def sweep_headline(name: str, values: Any, points: Any, most: int = 20) -> str:
    """A sweep's verdict in one line, value by value (at most ``most`` named):
    ``Nested jit, first call by n: 2 → inconclusive (1.07× slower, 0.75×–1.53×);
    8 → 3.20× faster (2.04×–4.10×)``."""
    parts = [f"{value!r} → {_point_said(point)}"
             for value, point in list(zip(values, points, strict=True))[:most]]
    left = len(points) - most
    more = f"; {left} more value{'s' * (left != 1)}" if left > 0 else ""
    return f"Nested jit, first call by {name}: " + "; ".join(parts) + more


def _point_said(c: Any) -> str:
    """One value's first-call verdict in a few words."""
    first = c.verdict.difference
    if not comparison_headline(c, first):  # not compared: nothing nested, failed, stopped
        return "nothing to nest" if c.flat.ok and not c.nested.helpers else "not compared"
    if first.kind == INCONCLUSIVE:
        spread = interval(first)[1:-1] if first.enough_data else runs(first.runs)
        return f"inconclusive ({times(first)}, {spread})"
    return with_interval(first)


def _helpers(c: Any) -> str:
    return ", ".join(f"`{h}`" for h in c.nested.helpers)


def _numbers(d: Difference, numbers: str) -> str:
    """``(2.1×–4.0×; 2.4 s flat, 450 ms nested, 3 runs)``."""
    return f"({interval(d)[1:-1]}; {numbers}, {runs(d.runs)})"


def not_run(c: Any) -> bool:
    """Whether measuring stopped before the nested variant finished one trace (its
    helpers are then those it was to nest, not the ones a trace of it nested)."""
    return bool(c.stopped) and c.nested.ok and not c.nested.samples.get("trace_s")


def by_stage(c: Any) -> str:
    """The stages that explain the first call (a clause, empty where none was measured):
    those that differ, then those that do not (or cannot yet be told apart)."""
    measured = [(phase, label, d) for phase, label in STAGES
                if not math.isnan((d := c.difference(phase)).ratio)]
    if not measured:
        return ""
    changed = [f"{label} {with_interval(d, c.clock_of(phase))}"
               for phase, label, d in measured if d.significant]
    if not changed:
        return f"no stage ({', '.join(label for _, label, _ in measured)}) differs measurably"
    rest = [f"{', '.join(labels)}: {words}" for words, kinds in
            (("no measurable difference", (SAME,)), ("undecided", (INCONCLUSIVE,)))
            if (labels := [label for _, label, d in measured if d.kind in kinds])]
    return "; ".join([f"by stage: {', '.join(changed)}", *rest])


def orderings_text(chosen: Any, other: Any, per_call: Difference, same_program: bool | None,
                   clock: str = WALL) -> str:
    """The verdict on one ordering (``chosen``, a row) against ``other``, per call, on
    ``clock``, with the medians it was decided on."""
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
        speed = (f"{chosen.name} against {other.name}: inconclusive, {times(per_call, clock)} "
                 f"per call ({bounds + '; ' if bounds else ''}{numbers}) after "
                 f"{runs(per_call.runs)}; {undecided_reason(per_call, None)}")
    if same_program is None:
        program = "their XLA programs were not compared"
    elif not same_program:
        program = "they compile to different XLA programs"
    elif per_call.significant:
        program = ("both compile to the same program; the difference is Python dispatch "
                   "(vmap(jit(f)) batches in Python on every call)")
    else:
        program = "both compile to the same program"
    return f"{speed}; {program}."


def orderings_headline(chosen: Any, other: Any, per_call: Difference, clock: str = WALL,
                       ) -> str:
    """``jit(vmap(f)) against vmap(jit(f)): 2× faster per call (1.9×–2.1×), 5 runs``; on
    the CPU clock ``2× less CPU time per call``."""
    if math.isnan(per_call.ratio):
        return ""
    lead = f"{chosen.name} against {other.name}:"
    said = f"{times(per_call, clock)} per call {interval(per_call)}"
    if per_call.kind == INCONCLUSIVE:
        return (f"{lead} inconclusive, {said} after {runs(per_call.runs)}; "
                f"{undecided_reason(per_call, None)}").replace("  ", " ")
    return f"{lead} {said}, {runs(per_call.runs)}".replace("  ", " ")

"""Verdicts: one sentence on what the user feels, derived from raw samples.

A comparison's verdict leads with the *first call* (the cold start the user
waits for) and explains it through the stages; an orderings verdict is about
the time *per call*. Both decide with the one rule, :func:`.stats.difference`,
so "faster", "slower" and "no measurable difference" mean the same everywhere.
Derived on demand, never stored as the source of truth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .stats import FASTER, MAX_REPEATS, SLOWER, Difference, json_number
from .units import fmt_s

#: The stages that explain a first call, with the words the verdict uses for them.
STAGES = (("trace_s", "trace"), ("lower_s", "lower"), ("compile_s", "XLA compile"))


@dataclass(frozen=True)
class Verdict:
    """What a verdict decided (``key``: ``"first_call"`` or ``"per_call"``) and its text."""

    key: str
    difference: Difference
    text: str

    @property
    def kind(self) -> str:
        return self.difference.kind

    @property
    def headline(self) -> str:
        """The verdict in one line, shown first (under the title) by every front end."""
        return self.text.split(". ")[0].split("; ")[0].rstrip(".") + "."

    def to_dict(self) -> dict[str, Any]:
        ratio = json_number(self.difference.ratio)
        return {self.key: self.kind, "ratio": ratio, "text": self.text}


def times(d: Difference) -> str:
    """``15.9× faster`` / ``1.4× slower`` / ``no measurable difference``."""
    if d.kind == FASTER:
        return f"{d.ratio:.3g}× faster"
    if d.kind == SLOWER:
        return f"{1 / d.ratio:.3g}× slower"
    return d.kind


def noise_note(d: Difference, what: str) -> str:
    """A sentence on why a difference could not be judged, with the ``-r`` that would help."""
    if d.runs == 1:
        return (f" From one run each there is no spread to judge the {what} by: "
                "-r 3 or more can tell a difference from noise.")
    if not d.unresolved:
        return ""
    gap = f"{max(d.ratio, 1 / d.ratio):.2g}×"
    told = (f"even -r {MAX_REPEATS} would not tell, a quieter machine might"
            if d.repeats_to_resolve is None else
            f"-r {d.repeats_to_resolve} would tell a gap this size at this spread")
    return (f" The machine was too noisy to tell whether the {gap} gap in the {what} is real "
            f"from {d.runs} runs: {told}.")


def comparison_text(c: Any, first: Difference) -> str:
    """The verdict on a :class:`~.comparison.Comparison`: first call, then the stages."""
    if not (c.flat.ok and c.nested.ok):
        return "Only one variant ran; see its error below."
    if not_run(c):
        return "Stopped before the nested variant ran: nothing to compare."
    if not c.nested.helpers and c.nested.inline:
        n = len(c.nested.inline)
        found = f"{n} helpers of yours were" if n > 1 else "A helper of yours was"
        return (f"{found} found but none could be nested (see the notes), so both variants "
                "are the same program.")
    if not c.nested.helpers:
        return (f"`{c.entry}` calls no helper of yours, so both variants are the same program: "
                "nothing to nest.")
    if math.isnan(first.ratio):
        return "The first call was not measured: cannot compare cold starts."
    helpers = ", ".join(f"`{h}`" for h in c.nested.helpers)
    numbers = f"{fmt_s(c.flat.first_call_s)} flat, {fmt_s(c.nested.first_call_s)} nested"
    if first.significant:
        lead = f"Nested jit on {helpers} makes the first call {times(first)} ({numbers})"
    else:
        lead = f"Nested jit on {helpers}: no measurable difference in the first call ({numbers})"
    return f"{lead}{by_stage(c)}.{noise_note(first, 'first call')}"


def not_run(c: Any) -> bool:
    """Whether measuring stopped before the nested variant finished one trace (its
    helpers are then those it was to nest, not the ones a trace of it nested)."""
    return bool(c.stopped) and c.nested.ok and not c.nested.samples.get("trace_s")


def by_stage(c: Any) -> str:
    """The stages that explain the first call: those that differ, then those that do not."""
    measured = [(label, d) for phase, label in STAGES
                if not math.isnan((d := c.difference(phase)).ratio)]
    changed = [f"{label} {times(d)}" for label, d in measured if d.significant]
    same = [label for label, d in measured if not d.significant]
    if not measured:
        return ""
    if not changed:
        return f"; no stage ({', '.join(same)}) differs measurably"
    rest = f" ({', '.join(same)}: no measurable difference)" if same else ""
    return f"; by stage: {', '.join(changed)}{rest}"


def orderings_text(chosen: Any, other: Any, per_call: Difference, same_program: bool | None,
                   ) -> str:
    """The verdict on one ordering (``chosen``, a row) against ``other``, per call."""
    if math.isnan(per_call.ratio):
        return f"{chosen.name}: per-call time against {other.name} was not measured."
    if per_call.significant:
        speed = f"{chosen.name} is {times(per_call)} per call than {other.name}"
    else:
        speed = f"{chosen.name} and {other.name}: no measurable difference per call"
    speed += f" ({fmt_s(chosen.execute_s)} against {fmt_s(other.execute_s)})"
    if same_program is None:
        program = "their XLA programs were not compared"
    elif not same_program:
        program = "they compile to different XLA programs"
    elif per_call.significant:
        program = ("both compile to the same program; the difference is Python dispatch "
                   "(vmap(jit(f)) batches in Python on every call)")
    else:
        program = "both compile to the same program"
    return f"{speed}; {program}.{noise_note(per_call, 'per-call time')}"

"""One cell under several JAX releases (``--jax``), in words: the answer, then the stages."""

from __future__ import annotations

import math

from ...model.comparison import Comparison
from ...model.diff import LARGER, SMALLER, StageDiff, StructureDiff, diff
from ...model.progress import CouldNotStart, Crashed, Failed, TimedOut
from ...model.reports.releases import Bisection, Change, NotInstalled, ReleaseResult, Releases
from ...model.rows import PHASES
from ...model.stats.rule import INCONCLUSIVE, SAME
from ...model.stats.units import fmt_bytes, fmt_s
from ..blocks import Image, Pre, aligned, as_html
from ..bundle import page
from ..drawing import releases_png
from ..format import PHASE_LABELS
from ..verdicts import OUTCOME, cpu_mark, interval, say, stage_said, times, with_interval

#: The program's figures the table shows under the stages, by their record's name.
FIGURES = {"compiled_peak_bytes": "compile memory (XLA peak)",
           "stablehlo_bytes": "program size (StableHLO)"}
#: How a change names a profiled compile's parts besides its passes.
PART_NAMES = {"before_passes_s": "before the passes", "codegen_s": "code generation"}
#: Said after a name the child did not find: with --jax, the file or cell is all it has.
UNDEFINED = (" (under --jax the cell or file is all a release's Python has: define it, its "
             "imports and its arguments there)")
#: The row of each release's flat/nested verdict.
NESTING = "nested vs flat, first call"


def text(r: Releases | Bisection, verbose: bool = False) -> str:
    """The report: at a glance, or with ``verbose`` in full; a bisection's answer first."""
    answer = bisected(r) if isinstance(r, Bisection) else None
    r = r.measured if isinstance(r, Bisection) else r
    said = [*changes(r), *findings(r)]
    lines = [*(answer or [headline(r)]), *table(r)]
    if verbose:
        lines += [f"  {s}" for s in [*said, *map(each_stage, r.changes)]]
        lines += [f"{x.release}: {c.verdict.headline}" for x in r.results
                  if (c := x.measured) is not None]
        lines += [f"{x.release}: {x.folder}" for x in r.results if x.folder]
    elif rest := [line for line in said if line not in lines]:
        lines.append(f"  -v shows {len(rest)} more line{'s' * (len(rest) > 1)} of changes "
                     "and findings")
    stop = ["stopped by Ctrl-C: the releases above are those measured before it"]
    return "\n".join([*lines, *stop * r.stopped, f"environments: {r.cache} (made once, reused)"])


def html_document(r: Releases | Bisection) -> str:
    """The report as a self-contained page: the text in full, then the stages' bars."""
    png = releases_png(r.measured if isinstance(r, Bisection) else r)
    return page("jitcompare --jax", as_html(
        [Pre(text(r, verbose=True)), Image(png, "the flat program's stages under each release")]))


def bisected(b: Bisection) -> list[str]:
    """``first slower in 0.10.0, of 0.9.0 to 0.10.2: …`` per stage found."""
    r, ends = b.measured, f"{b.walked[0]} to {b.walked[-1]}"
    first = r.results[0]
    said = []
    for phase, label in b.found:
        x = next(x for x in r.results if x.release == label)
        if x.measured is None or first.measured is None:
            said.append(f"first slower in {label}, of {ends}: {finding(x)}")
            continue
        change = Change(first.release, label, diff(first.measured, x.measured, force=True))
        said.append(f"first slower in {label}, of {ends}: "
                    f"{_change(change, change.diff.stage('flat', phase))}")
    measured = ", ".join(x.release for x in r.results)
    if not said:
        said = [f"nothing to halve, no stage is slower by the rule: {headline(r)}"]
    return [*said, f"measured {len(r.results)} of the {len(b.walked)} releases from {ends}, "
                   f"by halving: {measured}"]


def headline(r: Releases) -> str:
    """The answer: the first finding, else the largest change, else that there is none."""
    if found := findings(r):
        return found[0]
    if ranked := sorted(_changed(r), key=lambda pair: -abs(math.log(pair[1].judged.ratio))):
        return _change(*ranked[0])
    names = ", ".join(x.release for x in r.results)
    if not r.changes:
        return f"measured under jax {names}: name two releases or more to compare them"
    if all(s.kind == SAME for c in r.changes for s in c.diff.stages if s.variant == "flat"):
        return f"no stage differs by the rule between jax {names} (-v: each stage)"
    return (f"the rule called no stage faster or slower between jax {names}: some are "
            "inconclusive, where more runs (-r 9) may tell (-v: each stage)")


def each_stage(change: Change) -> str:
    """``0.9.0 → 0.10.2, each stage: trace 2.75× faster (…); ...``: the flat program."""
    said = "; ".join(f"{PHASE_LABELS[s.phase]} {_verdict(s)}"
                     for s in change.diff.stages if s.variant == "flat")
    return f"{change.old} → {change.new}, each stage: {said}"


def _verdict(s: StageDiff) -> str:
    """``3.06× less CPU time (…)``, ``inconclusive: …``; or why it is not judged."""
    if not s.measured or s.not_judged:
        return stage_said(s)
    said = with_interval(s.judged, s.clock)
    return f"{OUTCOME[INCONCLUSIVE]}: {said}" if s.kind == INCONCLUSIVE else said


def changes(r: Releases) -> list[str]:
    """The significant changes between consecutive releases, then each figure that changed."""
    sized = [_sized(change, f) for change in r.changes for f in change.diff.structure
             if f.variant == "flat" and f.figure in FIGURES and f.kind in (LARGER, SMALLER)]
    return [*(_change(change, stage) for change, stage in _changed(r)),
            *(said for said in sized if said), *(_passes(c) for c in r.changes if c.passes)]


def _passes(change: Change) -> str:
    """``XLA's parts that moved most from 0.9.0 to 0.10.2 (…): SimplifyFPConversions …``."""
    moved = ", ".join(f"{PART_NAMES.get(name, name)} {fmt_s(a)} → {fmt_s(b)}"
                      for name, a, b in change.passes)
    return (f"XLA's parts that moved most from {change.old} to {change.new} (one profiled "
            f"compile each, --xla): {moved}")


def _sized(change: Change, f: StructureDiff) -> str:
    """``program size (StableHLO) 1.30× larger in 0.8.0 than in 0.7.0 (…)``; "" near 1.00."""
    times = f"{max(f.new_over_old, 1 / f.new_over_old):.2f}"
    return "" if times == "1.00" else (f"{FIGURES[f.figure]} {times}× {f.kind} in {change.new} "
                                       f"than in {change.old} ({_bytes(f.old)} → "
                                       f"{_bytes(f.new)})")


def _changed(r: Releases) -> list[tuple[Change, StageDiff]]:
    return [(change, s) for change in r.changes for s in change.diff.stages
            if s.variant == "flat" and s.significant]


def _change(change: Change, stage: StageDiff) -> str:
    """``XLA compile 1.58× slower in 0.10.2 than in 0.9.0 (…)``, on the judging clock."""
    d = stage.judged
    bounds = interval(d)[1:-1]
    medians = f"{fmt_s(stage.old_s)} → {fmt_s(stage.new_s)}{cpu_mark(stage.clock)}"
    return (f"{PHASE_LABELS[stage.phase]} {times(d, stage.clock)} in {change.new} than in "
            f"{change.old} ({bounds + '; ' if bounds else ''}{medians})")


def _bytes(x: float | None) -> str:
    return fmt_bytes(None if x is None else int(x))


def findings(r: Releases) -> list[str]:
    """What each release that gave no comparison found instead, and backends that differ."""
    return [said for x in r.results if (said := finding(x))] + backends(r)


def backends(r: Releases) -> list[str]:
    """Where the releases ran on different backends: one line saying so and what to do."""
    ran = {x.release: c.env.get("backend") for x in r.results if (c := x.measured)}
    if len(set(ran.values())) < 2:
        return []
    each = ", ".join(f"{release} on {backend}" for release, backend in ran.items())
    return [f"the releases ran on different backends ({each}): a release's environment "
            "holds jax and jaxlib alone; set JAX_PLATFORMS=cpu to compare like with like"]


def finding(x: ReleaseResult) -> str:
    """A release's hang, crash, failure, missing install or early stop ("" where none)."""
    end = x.outcome
    if isinstance(end, Comparison):
        return f"under jax {x.release}: {end.stopped}; its column holds what was measured" \
            if end.stopped_anywhere else ""
    stage, at = _stage(getattr(end, "stage", None))
    if isinstance(end, NotInstalled):
        return f"jax {x.release} could not be installed: {end.reason}"
    if isinstance(end, TimedOut):
        return f"did not finish in {end.seconds:g} s under jax {x.release}{at}"
    if isinstance(end, Crashed):
        fatal = f": {end.fatal}" if end.fatal else ""
        return f"{stage or 'the measurement'} crashed ({end.signal_name}) under jax " \
               f"{x.release}{fatal}"
    if isinstance(end, Failed):
        return f"failed under jax {x.release}{at}: {end.error_type}: {end.message}" + \
            (UNDEFINED if "not defined" in end.message else "")
    if isinstance(end, CouldNotStart):
        return f"jax {x.release}: {end.python} could not start ({end.reason})"
    return ""


def _stage(position: str | None) -> tuple[str, str]:
    """``jitcompare g: flat 2/3 · XLA compile`` and `` (in XLA compile, flat 2/3)``."""
    if not position:
        return "", ""
    if " · " not in position:  # "jitcompare: finding helpers"
        stage = position.partition(": ")[2] or position
        return stage, f" (in {stage})"
    where, _, stage = position.rpartition(" · ")
    row = where.rpartition(": ")[2]
    return stage, f" (in {stage}{', ' + row if row else ''})"


def table(r: Releases) -> list[str]:
    """The stages, the program's figures and the nesting verdict, a column a release."""
    measured = [x.measured for x in r.results]
    return aligned([["flat, wall time", *(x.release + " (none)" * (x.measured is None)
                                          for x in r.results)],
                    *([PHASE_LABELS[p], *(_cell(c, p) for c in measured)] for p in PHASES),
                    *([label, *(_figure(c, f) for c in measured)] for f, label in FIGURES.items()),
                    [NESTING, *(say(c.verdict.difference, c.verdict.clock) if c else "—"
                                for c in measured)]], left=1, indent="  ")


def _cell(c: Comparison | None, phase: str) -> str:
    if c is None or "flat" not in c.variants:
        return "—"
    value = c.flat.median(phase)
    return "—" if math.isnan(value) else fmt_s(value)


def _figure(c: Comparison | None, figure: str) -> str:
    value = getattr(c.flat, figure, None) if c is not None and "flat" in c.variants else None
    return "—" if value is None else _bytes(value)

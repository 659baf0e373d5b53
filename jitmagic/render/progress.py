"""A running measurement's progress as one line, and how a process measuring ended."""

from __future__ import annotations

import signal

from ..model.progress import (
    CouldNotStart,
    Crashed,
    EndedEarly,
    Failed,
    Finished,
    Progress,
    TimedOut,
)
from ..model.shown import register
from ..model.stats.units import fmt_s
from ..model.target import TopologyRefused
from .target import refused


def line(p: Progress) -> str:
    """``jitcompare g: flat 2/3 · XLA compile · 4.1 s elapsed, ~6 s left``."""
    if p.done:
        return f"{_head(p)}: measured in {p.elapsed_s:.1f} s"
    left = ""
    if p.left_s is not None:
        of_part = f" of the {p.what}" if p.later else ""
        sooner = ", less if it decides sooner" if p.at_most_left else ""
        left = f", ~{p.left_s:.0f} s left{of_part}{sooner}"
    if p.later:
        left += f", then {', '.join(p.later)}"
    return f"{position(p, '≤' if p.at_most else '')} · {p.elapsed_s:.1f} s elapsed{left}"


def _head(p: Progress) -> str:
    return f"jitcompare {p.entry}".rstrip() + (f" [{p.point}]" if p.point else "")


def position(p: Progress, most: str = "") -> str:
    """Where a measurement is: ``jitcompare g: flat 2/3 · XLA compile``."""
    where = p.what if p.what != "comparison" else ""
    if p.row is not None:
        where = f"{where} {p.row}".strip() + (f" {p.round}/{most}{p.rounds}" if p.rounds else "")
    return f"{_head(p)}: {' · '.join(x for x in (where, p.stage) if x)}"


def register_progress() -> None:
    """Word a progress record, and how a child process ended, here."""
    register("line", Progress, line)
    ends = ((Finished, lambda e: "finished"),
            (Failed, lambda e: f"raised {e.error_type}: {e.message}"),
            (EndedEarly, lambda e: f"ended with status {e.status} before its end"),
            (TimedOut, lambda e: f"ran past its {fmt_s(e.seconds)} and was killed"))
    for kind, said in ends:  # a child process's end, as its str()
        register("text", kind, lambda e, said=said: f"the child process {said(e)}"
                 + (f" (while {e.stage})" if e.stage else ""))
    register("text", Crashed, lambda e: f"the child process was killed by {e.signal_name}"
             + (f" during {e.stage}" if e.stage else "") + (f": {e.fatal}" if e.fatal else ""))
    register("text", CouldNotStart, lambda e: f"could not start {e.python}: {e.reason}")
    register("text", TopologyRefused, refused)


#: The signals native code ends a process by as it crashes (the rest come from outside).
NATIVE = (signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT)
#: What a measurement that did not finish leaves: the command's, and the watch's.
MEASURED_LOST = "nothing was measured or saved"
WATCHED_LOST = "no ledger was made or saved, so no gate could judge it"


def _at(stage: str | None, unstaged: str) -> str:
    return f" at {stage}" if stage else unstaged


def crash_report(end: Crashed, lost: str = MEASURED_LOST,
                 unstaged: str = " before the measurement began") -> str:
    """The command's line where its measuring process was killed by a signal, and what to do."""
    where = f"{end.signal_name}{_at(end.stage, unstaged)}"
    if end.signal == signal.SIGKILL:
        return (f"killed by {where}: out of memory (the kernel's out-of-memory killer), or "
                f"another process killed it; {lost}")
    if end.signal not in NATIVE:
        return f"ended by signal {where} (sent by another process: a timeout, kill); {lost}"
    said = f" ({end.fatal})" if end.fatal else ""
    alone = (("that step of that variant alone (flat: `jax.jit` on the function compared; "
              "nested: each helper under a `jax.jit` of its own too)") if end.in_variant else
             "your file alone (python FILE.py)")
    return (f"killed by {where}{said}: native code (XLA, libtpu, or an extension your code "
            f"calls) crashed the process; {lost} (Python's traceback is above). To "
            f"reproduce it without jitmagic, run {alone}; where it crashes there too, "
            "report it with the file at https://github.com/jax-ml/jax/issues")


def measured_again(end: Crashed) -> str:
    """The command's line where native code crashed its process in a variant and it measures
    again, each cold sample in a fresh process."""
    return (f"killed by {end.signal_name}{_at(end.stage, '')}: native code crashed the process; "
            "measuring again with each cold sample in a fresh process, where a crash in a "
            "sample is its variant's finding")


def ended_early(end: EndedEarly, lost: str = MEASURED_LOST, unstaged: str = "") -> str:
    """The command's line where its process ended with a status before it finished."""
    return (f"the process ended with status {end.status}{_at(end.stage, unstaged)} before it "
            f"had finished (your code, or a library it calls, ended it: os._exit); {lost}")

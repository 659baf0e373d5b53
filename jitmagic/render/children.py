"""How a child process ended (:mod:`jitmagic.model.children`), in one sentence each."""

from __future__ import annotations

from ..model.children import CouldNotStart
from ..model.children import Crashed
from ..model.children import Failed
from ..model.children import Finished
from ..model.children import TimedOut
from ..model.shown import register
from ..model.stats.units import fmt_s
from ..model.target import TopologyRefused
from .target import refused


def _while(stage: str | None) -> str:
    return f" (while {stage})" if stage else ""


def crashed(end: Crashed) -> str:
    """``the child process was killed by SIGSEGV during XLA compile: Check failed: …``."""
    during = f" during {end.stage}" if end.stage else ""
    said = f": {end.fatal}" if end.fatal else ""
    return f"the child process was killed by {end.signal_name}{during}{said}"


def register_children() -> None:
    """Register each end's sentence as its ``str()``."""
    register("text", Finished, lambda e: f"the child process finished{_while(e.stage)}")
    register("text", Failed, lambda e: f"the child process raised {e.error_type}: "
                                       f"{e.message}{_while(e.stage)}")
    register("text", Crashed, crashed)
    register("text", TimedOut, lambda e: f"the child process ran past its {fmt_s(e.seconds)} "
                                         f"and was killed{_while(e.stage)}")
    register("text", CouldNotStart, lambda e: f"could not start {e.python}: {e.reason}")
    register("text", TopologyRefused, refused)


def crash_report(end: Crashed) -> str:
    """The command's line where its measuring process was killed by a signal: where it
    was, what native code said, and what to do."""
    where = f" at {end.stage}" if end.stage else " before the measurement began"
    said = f" ({end.fatal})" if end.fatal else ""
    return (f"killed by {end.signal_name}{where}{said}: native code (XLA, libtpu, or an "
            "extension your code calls) crashed the process; nothing was measured or saved "
            "(Python's traceback is above). To reproduce it without jitmagic, run that step "
            "of that variant alone (flat is jax.jit(f)); report it with the file at "
            "https://github.com/jax-ml/jax/issues")

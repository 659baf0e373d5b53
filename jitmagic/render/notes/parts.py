"""The sentences of the parts' notes (``--effort``, ``--xla``, ``--cache``, ``--lines``,
the big constants): one renderer per kind of :mod:`jitmagic.model.notes.parts`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...model.notes import Note
from ...model.notes import parts as p
from ...model.notes.variants import StaysInline
from ...model.stats.units import fmt_bytes
from .comparison import fixed

#: What a captured value that is not an array of numbers is, by its kind.
_NOT_ARRAY = {"tracer": "a tracer (a value leaked from another trace)",
              "objects": "a NumPy array of Python objects (dtype object)"}


def _captured_not_array(n: p.CapturedNotArray) -> str:
    what = _NOT_ARRAY.get(n.what, f"a `{n.type_name}` object")
    return (f"the program captures {what}, which is not an array of numbers: it is left "
            "captured and not measured as an argument")


def _other_threads_cached(n: p.OtherThreadsCached) -> str:
    many = n.compiles != 1
    return (f"{n.compiles} compile{'s' * many} of another thread used JAX's persistent cache "
            f"while the second start measured: JAX's cache folder is the process's, so "
            f"{'they' if many else 'it'} went to jitmagic's folder (removed after), not to "
            "your own cache")


#: Why a per-line table has no hits, calls or time, by the note's ``why``.
_NO_HOOK = {
    "not_asked": "no line hook was asked for",
    "no_tool_id": "every sys.monitoring tool id was taken, and a sys.settrace hook would "
                  "make the trace 2-5x slower",
    "no_monitoring": "Python {} has no sys.monitoring (3.12+), and a sys.settrace hook "
                     "would make the trace 2-5x slower",
}


def _no_line_hook(n: p.NoLineHook) -> str:
    return "hits, calls and time per line not measured: " + _NO_HOOK[n.why].format(n.python)


def _constant_stuck(n: p.ConstantStuck) -> str:
    return (f"a constant of {fmt_bytes(n.nbytes)} is read inside a `{n.stuck_in}` (through a "
            "jit call there): left captured")


def _small_constants(n: p.SmallConstants) -> str:
    return (f"{fmt_bytes(n.small)} of the {fmt_bytes(n.total)} of constants are in constants "
            f"under {fmt_bytes(n.lift)} each: those stay captured")


def _constants_still_captured(n: p.ConstantsStillCaptured) -> str:
    return (f"{n.variant}: the passed program still captures {n.count} constants "
            f"({n.nbytes:,} bytes), not the {n.expected} left after passing the others")


#: How the reason the out-of-line row of ``--effort`` was not measured begins.
NOT_MEASURED = "out of line was not measured"


def _none_kept(n: p.OutOfLineNoneKept) -> str:
    why = "; ".join(f"`{r.helper}` {r.why}" for r in n.refused if isinstance(r, StaysInline))
    return f"{NOT_MEASURED}: no helper could be kept out of line ({why or 'no call of a helper'})"


#: The renderer of each of these kinds, by its type.
SAID: dict[type[Note], Callable[[Any], str]] = {
    p.SettingAlreadyOn: lambda n: f"`{n.setting}` left out: your jit already compiles with it",
    p.SettingRefused: lambda n: (f"`{n.setting}` left out: this backend ({n.backend}) refused "
                                 f"it ({n.why})"),
    p.XlaVariantFailed: lambda n: (f"not measured: the {n.variant} variant failed in the "
                                   "comparison"),
    p.XlaRaised: lambda n: f"not measured: {n.error}: {n.message}",
    p.OtherThreadsCached: _other_threads_cached,
    p.NoLineHook: _no_line_hook,
    p.CapturedNotArray: _captured_not_array,
    p.ConstantStuck: _constant_stuck,
    p.SmallConstants: _small_constants,
    p.ConstantsUnmatched: lambda n: (f"{n.variant}: its inputs could not be matched to the "
                                     "call's arguments"),
    p.NoConstantPassed: lambda n: f"{n.variant}: no constant could be passed as an argument",
    p.ConstantsStillCaptured: _constants_still_captured,
    p.OutOfLineNoHelper: fixed(f"{NOT_MEASURED}: the comparison nests no helper"),
    p.OutOfLineNoNested: fixed(f"{NOT_MEASURED}: the comparison has no nested variant"),
    p.OutOfLineRaised: lambda n: f"{NOT_MEASURED}: tracing it raised {n.error}: {n.message}",
    p.OutOfLineNoneKept: _none_kept,
}

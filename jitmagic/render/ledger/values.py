"""A reason in words (``shape of `x`: f32[3] → f32[4]``), and a recompile's live line."""

from __future__ import annotations

from ...model.ledger import Ledger
from ...model.ledger.compiles import (
    EAGER,
    KEYWORD,
    NEW_FUNCTION,
    PYTREE,
    SHARDING,
    UNEXPLAINED,
    Compile,
)
from ...model.ledger.rows import ReasonRow, histories, reason_row
from ...model.saved.schema import printable
from ...model.stats.units import counted
from .words import KIND_WORDS, MAX_VALUES, clip, place


def reason_words(reason: ReasonRow) -> str:
    """``weak type of `lr`: f32[] (weak) → f32[]``, then every other difference named."""
    what = {UNEXPLAINED: "recompiled; why, below" if reason.text or reason.noted else
            "recompiled; JAX gave no reason", EAGER: "eager op on new shapes or dtypes",
            NEW_FUNCTION: "a new function object each time"}.get(reason.kind,
                                                              KIND_WORDS[reason.kind])
    if reason.kind == SHARDING and not reason.argument:
        what = "sharding or devices of the arguments (the same types: JAX reused its trace)"
    what += change_words(reason.kind, reason.argument, reason.values, reason.pairs)
    for also in reason.also[:MAX_VALUES]:
        changed = change_words(also.kind, also.argument, also.values)
        what += f"; and {KIND_WORDS[also.kind]}{changed}"
    hidden = reason.more - len(reason.also[:MAX_VALUES])
    if hidden > 0:
        what += f"; and {counted(hidden, 'more difference')} JAX named (its words, in a saved " \
                "ledger's text)"
    return what


#: JAX's top-level pytree paths of a jitted call's (positional, keywords), in words.
TOP_PATHS = {"[0]": "the positional arguments", "[1]": "the keyword arguments"}


def change_words(kind: str, argument: str | None, values: tuple[str, ...],
                  pairs: tuple[tuple[str, str], ...] = ()) -> str:
    """`` of `x`: f32[3] → f32[4]``: where a difference is and the values it took."""
    what = ""
    if argument and kind == PYTREE:  # JAX's own path, unchecked here
        what += f" at {TOP_PATHS[argument]}" if argument in TOP_PATHS else \
            f" at `{clip(argument, 60)}` (as JAX names the path)"
    elif argument:  # "keyword argument `train`", "shape of `x`"
        what += f"{'' if kind == KEYWORD else ' of'} `{clip(argument, 60)}`"
    width = 60 if kind == PYTREE else 40  # "… (keys {'train'} differ)"
    runs = histories(pairs) if pairs else [values] if values else []
    shown = [values_said(run, width) + (f" → … ({len(run)} values)" if len(run) > MAX_VALUES
                                    else "") for run in runs[:MAX_VALUES]]
    if len(runs) > MAX_VALUES:
        shown.append(f"… ({len(runs)} changes)")
    return what + (f": {'; '.join(shown)}" if shown else "")


def values_said(values: tuple[str, ...], width: int = 40) -> str:
    """``f32[3] → f32[4]``: the values as :func:`stretched` shows them."""
    return " → ".join(stretched(values, width))


def stretched(values: tuple[str, ...], width: int = 40) -> tuple[str, ...]:
    """Each value whole where all are short, else its stretch around where they differ."""
    shown = tuple(printable(v) for v in values[:MAX_VALUES])
    if all(len(v) <= width for v in shown):
        return tuple(clip(v, width) for v in shown)
    first = shown[0]
    starts = [next((i for i, (a, b) in enumerate(zip(v, first, strict=False)) if a != b),
                   min(len(v), len(first))) for v in shown[1:]]
    lo = _word_start(first, max(0, min(starts, default=0) - width // 2))
    return tuple(_stretch(v, lo, width) for v in shown)


#: Where a value's shown stretch may begin: after one of these (never inside a word).
BREAKS = " (,[{.="


def _word_start(value: str, at: int) -> int:
    """``at`` moved to just after a nearby break, past any spaces."""
    if at <= 10:
        return 0
    back = max(value.rfind(c, 0, at + 1) for c in BREAKS)
    ahead = [i for c in BREAKS if 0 <= (i := value.find(c, at)) <= at + 20]
    lo = back + 1 if back >= 0 and at - back <= 20 else min(ahead) + 1 if ahead else at
    return len(value) - len(value[lo:].lstrip(" "))


def _stretch(value: str, lo: int, width: int) -> str:
    """``value`` from ``lo``, about ``width`` long; "…" marks what is left out."""
    hi = len(value) if len(value) - (lo + width) <= 10 else lo + width
    return ("…" if lo else "") + value[lo:hi] + ("…" if hi < len(value) else "")


def live_line(c: Compile, again: int, run: int, source_file: str | None = None) -> str:
    """``jitwatch: `step` compiles again (recompile 1 here) at line 9, shape of `x`: …``."""
    where = Ledger((c,), 0.0, source_file=source_file)
    called_at = place(c.call_site, where)
    at = f" at {printable(called_at)}" if called_at else ""
    thread = f" on thread {printable(c.thread)}" if c.thread != "MainThread" else ""
    count = f"recompile {again:,} here" if run == again else \
        f"its recompile {again:,}; {run:,} in the run"
    return (f"jitwatch: `{printable(clip(c.function, 60))}` compiles again ({count})"
            f"{at}{thread}: {printable(reason_words(reason_row([c])))}")

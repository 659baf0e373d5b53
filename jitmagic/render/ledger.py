"""A :class:`~jitmagic.model.ledger.Ledger` in words: the answer first, then one row per
function, then why each compiled again with what to do, as text and as HTML.

Every name and line here came from the user's code or a report: each goes through
:func:`~jitmagic.model.saved.schema.printable` for a terminal and ``html.escape`` for a
page. The seconds are wall seconds, JAX's own compile events, and the answer says so.
"""

from __future__ import annotations

import ast
import base64
import html
import os
import re
from collections.abc import Iterable
from collections.abc import Sequence
from contextlib import suppress

from ..model.ledger import AGAIN
from ..model.ledger import CONTEXT
from ..model.ledger import DTYPE
from ..model.ledger import EAGER
from ..model.ledger import FIRST
from ..model.ledger import NEW_FUNCTION
from ..model.ledger import OTHER
from ..model.ledger import PYTREE
from ..model.ledger import SHAPE
from ..model.ledger import SHARDING
from ..model.ledger import STATIC
from ..model.ledger import UNEXPLAINED
from ..model.ledger import WEAK_TYPE
from ..model.ledger import Broken
from ..model.ledger import Compile
from ..model.ledger import EagerLine
from ..model.ledger import FunctionRow
from ..model.ledger import Ledger
from ..model.ledger import ReasonRow
from ..model.ledger import histories
from ..model.ledger import reason_row
from ..model.ledger.diff import LedgerDiff
from ..model.saved.schema import printable
from ..usercode import user_file
from .bundle import page
from .bundle import with_note
from .format import fmt_s

#: Functions shown in the table and the reasons; the rest are counted in one line.
MAX_ROWS = 12
#: Reasons shown per function, and call lines per reason.
MAX_REASONS, MAX_LINES = 6, 3
#: Values of a changing argument shown (``f32[3] → f32[4] → …``).
MAX_VALUES = 4
CLOCK = "wall time, from JAX's own compile events"
#: What ``%%jitwatch`` and ``%jitwatch`` watch: the ledgers that can offer a ``%jitcompare``.
MAGIC_SOURCES = ("the cell", "the statement")

#: What to do about each kind of reason (``{arg}``: the argument it names, or "it"): only
#: fixes shown (``tests/test_watch_fixes.py``) to remove the recompile and keep the result,
#: each on a loop shaped as users write them; the seconds beside it are measured.
FIXES = {
    WEAK_TYPE: "a Python scalar (weakly typed) became an array, or the other way: give {arg} "
               "one type from the start, e.g. `jnp.float32(0.1)` rather than `0.1`",
    SHAPE: "pad a short batch to the full size with a mask that keeps the padded rows out "
           "of the result (for a mean: `jnp.sum(jnp.where(mask, err, 0)) / jnp.sum(mask)`), "
           "or expect one compile per shape",
    DTYPE: "give {arg} one dtype on every call (`.astype(...)` before the call)",
    STATIC: "a static value (a static argument, an Equinox static field, a hashable `self`) "
            "is part of what JAX compiles for: each new value compiles again; where it only "
            "feeds arithmetic, pass it as an array instead; where it steers Python (a loop "
            "count, an `if`, Flax's `deterministic`), keep it static and expect one compile "
            "per value, or write the branch with `jax.lax.cond` or `jax.lax.fori_loop`",
    NEW_FUNCTION: "the function is made anew on each pass: hoist the `jax.jit(...)` (or the "
                  "`lambda`/`partial` it wraps) out of the loop and reuse it, passing what it "
                  "reads from the loop as arguments (hoisted, it keeps the values it closed "
                  "over when it was first traced)",
    PYTREE: "keep the arguments' structure the same on every call: the same keys and fields "
            "each time (an all-ones mask rather than no mask, an array rather than None)",
    SHARDING: "place {arg} once, before the loop, where the jitted function's output comes "
              "back (`jax.device_put(x, NamedSharding(mesh, P()))` for a replicated "
              "parameter), so that every call sees the same devices and sharding; or fix "
              "them on the jit (`in_shardings=`, `out_shardings=`)",
}
#: What to do about a pytree reason that is a Flax NNX module's graph (its argument JAX's
#: ``._graphdef``): a static attribute that ``model.train()``/``model.eval()`` set.
GRAPH_FIX = ("the module's static attributes are part of its graph, which JAX compiles for "
             "(`model.train()` and `model.eval()` set Dropout's `deterministic` and "
             "BatchNorm's `use_running_average`): jit one function per mode, each its own "
             "`def` under `@nnx.jit` and called only in its mode (a `train_step` after "
             "`model.train()`, an `eval_step` after `model.eval()`): each compiles once")
#: What is said where no fix was shown to remove the recompile and keep the result.
NOTES = {
    CONTEXT: "a config value or context manager changed between calls: JAX compiles once "
             "per setting, and the setting is part of what the call computes",
    EAGER: "an op outside any jit compiles once per new shape or dtype of its inputs (set-up "
           "code does so once); inside a jit it would compile once per shape as well (a "
           "mean over a growing list compiles at each length either way)",
}
#: What to do about an eager ``lax.scan`` (``cond``, ``while_loop``) whose function is made
#: anew on each pass (``{arg}``: the function).
EAGER_ANEW_FIX = ("define {arg} once, before the loop, and pass what it reads from the loop "
                  "as its arguments (a scan's carry or `xs`, a cond's operands, a "
                  "while_loop's value): defined once, it is traced once, and a value it "
                  "closes over keeps what it was at that first trace")


def answer(ledger: Ledger) -> str:
    """The ledger in one sentence: how many compiles, their seconds of the run's, how
    many compiled again and where most of those seconds went."""
    where = f"{ledger.source}'s {fmt_s(ledger.wall_s)}"
    others = _others(ledger)
    if ledger.count == 0:
        return (f"No compiles in {ledger.source} ({fmt_s(ledger.wall_s)}): nothing was "
                "traced or compiled (its jitted functions were compiled before, or it "
                f"called no jit){others}.")
    threads = {c.thread for c in ledger.watched}
    summed = f", summed over {len(threads)} threads" if len(threads) > 1 else ""
    head = (f"{_n(ledger.count, 'compile')} took {fmt_s(ledger.seconds)} of {where} "
            f"({CLOCK}{summed})")
    if ledger.again == 0:
        return f"{head}; none compiled again: each function compiled once{others}."
    rows = [r for r in ledger.functions() if r.again]
    mine = [r for r in rows if not r.eager]
    top = max(mine or rows, key=lambda r: _again_seconds(r))
    eager = sum(r.again for r in rows if r.eager)
    said = (f"{top.again:,} of those recompiled `{printable(top.function)}`"
            f"{_defined(top, ledger)}") if mine else \
        f"all of them eager ops (jnp calls outside any jit), `{printable(top.function)}` most"
    if mine and eager:
        said += (f"; {eager:,} {'was an eager op' if eager == 1 else 'were eager ops'} (jnp "
                 "calls outside any jit)")
    return (f"{head}; {ledger.again:,} of them compiled again "
            f"({fmt_s(ledger.again_seconds)}), {said}{others}.")


def _others(ledger: Ledger) -> str:
    """What threads running before the run compiled meanwhile, said where they did."""
    n = len(ledger.other_threads)
    return f" (and {_n(n, 'compile')} on threads that ran before it, below)" if n else ""


def _again_seconds(row: FunctionRow) -> float:
    return sum(r.seconds for r in row.reasons if r.kind != FIRST)


def text(ledger: Ledger) -> str:
    """The whole ledger for a terminal."""
    return "\n".join(_lines(ledger))


def _lines(ledger: Ledger) -> Iterable[str]:
    yield f"jitwatch: {answer(ledger)}"
    if ledger.stopped:
        yield "Stopped by Ctrl-C: the ledger holds what ran before it."
    if ledger.error:
        raised = printable(ledger.error).rstrip().rstrip(".")  # "... (5,).: the ledger"
        yield f"The run raised {raised}: the ledger holds what ran before it."
    rows = ledger.functions()
    if rows:
        yield ""
        yield from _table(rows, ledger)
    again = sorted((r for r in rows if r.again and not r.eager),
                   key=lambda r: -_again_seconds(r))
    eager = ledger.eager_again()
    if again or eager:
        yield ""
        yield "Why each compiled again (the seconds: what a cache hit would have saved):"
        for row in again[:MAX_ROWS]:
            yield from _why(row, ledger)
        yield from _eager_why(eager, ledger)
    yield from _stale(ledger)
    for omitted in ledger.omitted:
        yield (f"`{printable(omitted.function)}`: {omitted.count:,} more compiles "
               f"({fmt_s(omitted.seconds)}) are counted in the table, their reasons not kept "
               f"(past the first {len(ledger.compiles):,} compiles, kept whole)")
    if ledger.explained_until_s is not None:
        yield (f"JAX's explanations were turned off {fmt_s(ledger.explained_until_s)} into "
               "the run, after so many misses (JAX compares each miss with every earlier "
               "one, so explaining grows slower as misses add up): later recompiles are "
               "counted, their reasons not known")
    others = ledger.other_threads
    if others:
        yield ""
        yield (f"Other threads compiled {_n(len(others), 'time')} meanwhile "
               f"({fmt_s(sum(c.seconds for c in others))}), not counted above:")
        for row in ledger.functions(others)[:MAX_ROWS]:
            threads = sorted({c.thread for c in others if c.function == row.function})
            yield (f"  `{printable(row.function)}` on {', '.join(map(printable, threads))}: "
                   f"{_n(row.compiles, 'compile')}, {fmt_s(row.seconds)}")
    yield from _gate(ledger)


def _stale(ledger: Ledger) -> Iterable[str]:
    """The values jit kept from a trace that changed since
    (:class:`~jitmagic.model.ledger.Stale`)."""
    if not ledger.stale:
        return
    yield ""
    yield ("Values jit kept from the trace, changed since (calls made after the change "
           "still computed with the value traced; no recompile says so):")
    for v in ledger.stale[:MAX_ROWS]:
        place = _place(v.line, ledger)
        at = f" at {printable(place)}" if place else ""
        defined = _users_place(v.defined_at, ledger)
        of = f" (defined at {printable(defined)})" if defined else ""
        yield (f"  `{printable(_clip(v.function, 60))}`{of} read the {v.scope} "
               f"`{printable(v.name)}`{at}: {printable(_clip(v.traced, 40))} when traced, "
               f"{printable(_clip(v.now, 40))} now")
    if len(ledger.stale) > MAX_ROWS:
        yield f"  … and {len(ledger.stale) - MAX_ROWS} more"


def _table(rows: list[FunctionRow], ledger: Ledger) -> Iterable[str]:
    head = ("function", "defined at", "compiles", "again", "trace", "lower", "XLA compile",
            "total")
    body = [(_clip(r.function), _clip(_users_place(r.defined_at, ledger) or
                                      ("eager op" if r.eager else "—")),
             str(r.compiles), str(r.again),
             *(_stage(r, s) for s in ("trace_s", "lower_s", "compile_s")),
             fmt_s(r.seconds)) for r in rows[:MAX_ROWS]]
    yield from columns(head, body, left=2)
    if len(rows) > MAX_ROWS:
        rest = rows[MAX_ROWS:]
        yield (f"… and {_n(len(rest), 'more function')}: "
               f"{_n(sum(r.compiles for r in rest), 'compile')}, "
               f"{fmt_s(sum(r.seconds for r in rest))}")


def _stage(row: FunctionRow, stage: str) -> str:
    """A row's seconds in one stage; "—" where some of its compiles were only counted (past
    the kept ones: their stages are not known, only their total)."""
    return "—" if row.omitted or stage not in row.stage_seconds else \
        fmt_s(row.stage_seconds[stage])


def _why(row: FunctionRow, ledger: Ledger) -> Iterable[str]:
    again_s = sum(r.seconds for r in row.reasons if r.kind != FIRST)
    yield (f"`{printable(row.function)}`{_defined(row, ledger)}: compiled again "
           f"{_n(row.again, 'time')}, {fmt_s(again_s)}")
    again = [r for r in row.reasons if r.kind in AGAIN]
    for reason in again[:MAX_REASONS]:
        threads = [t for t in reason.threads if t != ledger.thread]
        on = f" (on {', '.join(_clip(t) for t in threads)})" if threads else ""
        yield f"  - {reason_words(reason)}: {reason.count}×, {fmt_s(reason.seconds)}{on}"
        for site, said, n in reason.lines[:MAX_LINES]:
            code = f"  {_clip(said, 100)}" if said else ""
            yield f"      at {_clip(_place(site, ledger) or site, 100)}{code}" + \
                  (f" ({n}×)" if n > 1 else "")
        if reason.kind == PYTREE and (reason.argument or "").endswith("._graphdef"):
            yield f"      fix: {GRAPH_FIX}"
        elif reason.kind in FIXES:
            arg = f"`{_clip(reason.argument, 40)}`" if reason.argument else "it"
            yield f"      fix: {FIXES[reason.kind].format(arg=arg)}"
        elif reason.kind in NOTES:
            yield f"      note: {NOTES[reason.kind]}"
        if reason.kind == OTHER and reason.text:
            yield f"      JAX: {_clip(' '.join(reason.text.split()), 300)}"
        elif reason.kind == UNEXPLAINED and reason.text:
            yield f"      {_clip(' '.join(reason.text.split()), 300)}"
    if len(again) > MAX_REASONS:
        yield f"  … and {len(again) - MAX_REASONS} more reasons"
    bridge = jitcompare_line(row) if ledger.source in MAGIC_SOURCES else None
    if bridge:
        yield f"  is one compile of it slow? {printable(bridge)} measures it flat against nested"


def _eager_why(eager: list[EagerLine], ledger: Ledger) -> Iterable[str]:
    """The eager operations that compiled again, once for all of them, by the line that
    called them: one line (``x - x.mean(0)``) compiles several, each had its own bullet.
    A line whose ``lax.scan`` (``cond``, ``while_loop``) took a function made anew on each
    pass says so, with its own fix; the others compiled for new shapes or dtypes."""
    if not eager:
        return
    yield (f"eager ops (jnp/lax calls outside any jit): compiled again "
           f"{_n(sum(x.count for x in eager), 'time')}, "
           f"{fmt_s(sum(x.seconds for x in eager))}")
    for x in eager[:MAX_ROWS]:
        code = f"  {_clip(x.call_text, 100)}" if x.call_text else ""
        where = _clip(_place(x.call_site, ledger) or x.call_site or "an unknown line", 100)
        names = ", ".join(f"`{_clip(f)}`" for f in x.functions[:MAX_VALUES])
        names += f" and {len(x.functions) - MAX_VALUES} more" * (len(x.functions) > MAX_VALUES)
        made = ", ".join(f"`{_clip(f)}`" for f in x.made_anew[:MAX_VALUES])
        why = f"a new function object each time ({made}, made anew on each pass)" \
            if x.made_anew else "on new shapes or dtypes"
        yield f"  - {names}: {x.count}×, {fmt_s(x.seconds)}: {why}"
        yield f"      at {where}{code}"
    if len(eager) > MAX_ROWS:
        yield f"  … and {len(eager) - MAX_ROWS} more lines"
    anew = [x for x in eager if x.made_anew]
    if anew:
        arg = f"`{_clip(anew[0].made_anew[0])}`" if len(anew) == 1 and \
            len(anew[0].made_anew) == 1 else "each function made anew"
        yield f"  fix{', where made anew' if len(anew) < len(eager) else ''}: " \
              f"{EAGER_ANEW_FIX.format(arg=arg)}"
    if len(anew) < len(eager):
        yield f"  note{', on new shapes or dtypes' if anew else ''}: {NOTES[EAGER]}"


def columns(head: tuple[str, ...], body: Sequence[tuple[str, ...]], left: int) -> list[str]:
    """``head`` and ``body`` as aligned columns, the first ``left`` flush left, the rest
    (figures) flush right."""
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]
    return ["  ".join(x.ljust(w) if i < left else x.rjust(w)
                      for i, (x, w) in enumerate(zip(line, widths, strict=True))).rstrip()
            for line in (head, *body)]


def reason_words(reason: ReasonRow) -> str:
    """``weak type of `lr`: f32[] (weak) → f32[]``: the kind, the argument, its values;
    then every other difference JAX named at once, each so."""
    what = {UNEXPLAINED: "recompiled; why, below" if reason.text else
            "recompiled; JAX gave no reason", EAGER: "eager op on new shapes or dtypes",
            NEW_FUNCTION: "a new function object each time"}.get(reason.kind, reason.kind)
    if reason.kind == SHARDING and not reason.argument:
        what = "sharding or devices of the arguments (the same types: JAX reused its trace)"
    what += _change_words(reason.kind, reason.argument, reason.values, reason.pairs)
    for also in reason.also[:MAX_VALUES]:
        what += f"; and {also.kind}{_change_words(also.kind, also.argument, also.values)}"
    hidden = reason.more - len(reason.also[:MAX_VALUES])
    if hidden > 0:
        what += f"; and {_n(hidden, 'more difference')} JAX named (its words, in a saved " \
                "ledger's text)"
    return what


#: JAX's top-level pytree paths, in words: a jitted call's arguments are the pair
#: (positional, keywords).
TOP_PATHS = {"[0]": "the positional arguments", "[1]": "the keyword arguments"}


def _change_words(kind: str, argument: str | None, values: tuple[str, ...],
                  pairs: tuple[tuple[str, str], ...] = ()) -> str:
    """`` of `x`: f32[3] → f32[4]``: where a difference is and the values it took, as
    the histories its compiles' pairs make (``f32[3] → f32[4]; f32[4]({}) → f32[2,2]({})``
    where they do not join into one)."""
    what = ""
    if argument and kind == PYTREE:  # JAX's own path, unchecked here
        what += f" at {TOP_PATHS[argument]}" if argument in TOP_PATHS else \
            f" at `{_clip(argument, 60)}` (as JAX names the path)"
    elif argument:
        what += f" of `{_clip(argument, 60)}`"
    width = 60 if kind == PYTREE else 40  # "… (keys {'train'} differ)"
    runs = histories(pairs) if pairs else [values] if values else []
    shown = [_values(run, width) + (f" → … ({len(run)} values)" if len(run) > MAX_VALUES
                                    else "") for run in runs[:MAX_VALUES]]
    if len(runs) > MAX_VALUES:
        shown.append(f"… ({len(runs)} changes)")
    return what + (f": {'; '.join(shown)}" if shown else "")


def _values(values: tuple[str, ...], width: int = 40) -> str:
    """``f32[3] → f32[4]``: each value whole where all are short, else each one's stretch
    around where they first differ (an Equinox module's static fields hold long
    reprs: ``…MLP[(Missing, 2)]… → …MLP[(Missing, 3)]…``)."""
    shown = values[:MAX_VALUES]
    if all(len(v) <= width for v in shown):
        return " → ".join(_clip(v, width) for v in shown)
    first = shown[0]
    starts = [next((i for i, (a, b) in enumerate(zip(v, first, strict=False)) if a != b),
                   min(len(v), len(first))) for v in shown[1:]]
    lo = _word_start(first, max(0, min(starts, default=0) - width // 2))
    return " → ".join(_stretch(v, lo, width) for v in shown)


#: Where a value's shown stretch may begin: after one of these (never inside a word).
BREAKS = " (,[{.="


def _word_start(value: str, at: int) -> int:
    """``at``, moved to just after a break near it (``Config(...)``, not ``…g(...)``):
    back where one is near, else forward, past any spaces; to the start where that is
    near."""
    if at <= 10:
        return 0
    back = max(value.rfind(c, 0, at + 1) for c in BREAKS)
    ahead = [i for c in BREAKS if 0 <= (i := value.find(c, at)) <= at + 20]
    lo = back + 1 if back >= 0 and at - back <= 20 else min(ahead) + 1 if ahead else at
    return len(value) - len(value[lo:].lstrip(" "))


def _stretch(value: str, lo: int, width: int) -> str:
    """``value`` from ``lo``, about ``width`` long, to its end where that is near; "…"
    marks what is left out."""
    hi = len(value) if len(value) - (lo + width) <= 10 else lo + width
    return ("…" if lo else "") + value[lo:hi] + ("…" if hi < len(value) else "")


def live_line(c: Compile, again: int, source_file: str | None = None) -> str:
    """One recompile, said as it happens (``again``: the run's recompiles so far, this one
    included): ``jitwatch: `step` compiles again (recompile 1 here) at line 9, shape of
    `x`: f32[32,8] → f32[4,8]``; ``source_file``: the watched cell's, whose lines read
    ``line N``."""
    where = Ledger((c,), 0.0, source_file=source_file)
    place = _place(c.call_site, where)
    at = f" at {printable(place)}" if place else ""
    thread = f" on thread {printable(c.thread)}" if c.thread != "MainThread" else ""
    return (f"jitwatch: `{printable(_clip(c.function, 60))}` compiles again (recompile "
            f"{again:,} here){at}{thread}: {printable(reason_words(reason_row([c])))}")


def jitcompare_line(row: FunctionRow) -> str | None:
    """The ``%jitcompare`` line that measures the function as the user called it, read
    off the line of its first call (None where that line holds no call of it)."""
    if not row.call_text or row.eager:
        return None
    try:
        tree = ast.parse(row.call_text.strip().rstrip(":"), mode="exec")
    except SyntaxError:
        return None
    name = row.function.rsplit(".", 1)[-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node.func) == name:
            return f"%jitcompare {ast.unparse(node)}"
    return None


def _called(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _gate(ledger: Ledger) -> Iterable[str]:
    if not ledger.gate.any:
        return
    if ledger.error or ledger.stopped:  # checked only on a run that ended as written
        yield ""
        yield (f"Gate not checked: the run {'raised' if ledger.error else 'was stopped'} "
               "before its end, and the gate judges a run that ends as written.")
        return
    broken = ledger.over_gate()
    if not broken:
        yield ""
        yield f"Gate held: {_gate_words(ledger)}."
        return
    yield ""
    yield f"Gate FAILED, where {_gate_words(ledger)}:"
    for sentence in gate_failures(ledger):
        yield f"  {sentence}"


def gate_failures(ledger: Ledger) -> list[str]:
    """One sentence for each way the run broke its gate."""
    return [_broken_words(b, ledger) for b in ledger.over_gate()]


def _broken_words(b: Broken, ledger: Ledger) -> str:
    if b.function is None:
        rows = sorted(ledger.functions(), key=lambda r: -r.compiles)
        named = ", ".join(f"`{printable(r.function)}` {r.compiles}" for r in rows[:MAX_LINES])
        rest = sum(r.compiles for r in rows[MAX_LINES:])
        named += f", {rest} more" if rest else ""
        top = f": {named}" if rows else ""
        return (f"{b.compiles} compiles, more than the {b.allowed} allowed "
                f"(max_compiles={b.allowed}){top}")
    if b.first_late is None:  # counted past the kept compiles: no reason to name
        return (f"`{printable(b.function)}` compiled {_n(b.compiles, 'time')} here, "
                f"{b.compiles - b.allowed} after its warm-up of {b.allowed}")
    reason = b.first_late.reason
    said = {FIRST: "for its first compile", UNEXPLAINED: "with no reason from JAX",
            NEW_FUNCTION: "for a new function object", EAGER: "for an eager op",
            OTHER: "for another reason (JAX's words in the ledger)"}.get(
        reason.kind, f"for a {reason.kind}" + (
            "" if reason.argument is None else f" of `{printable(reason.argument)}`"))
    site = _place(b.first_late.call_site, ledger)
    where = f" at {printable(site)}" if site else ""
    late = b.compiles - b.allowed
    return (f"`{printable(b.function)}` compiled {_n(b.compiles, 'time')} here, {late} after "
            f"its warm-up of {b.allowed}: the first of them {said}{where}")


def _gate_words(ledger: Ledger) -> str:
    parts = []
    if ledger.gate.fail_after_warmup is not None:
        parts.append(f"each function compiles at most "
                     f"{_n(ledger.gate.fail_after_warmup, 'time')} here, its warm-up (what "
                     "compiled before the watch is not counted: warmed up already, allow 0), "
                     "eager ops not counted")
    if ledger.gate.max_compiles is not None:
        parts.append(f"at most {_n(ledger.gate.max_compiles, 'compile')} in all, eager ops "
                     "included")
    return " and ".join(parts)


def _defined(row: FunctionRow, ledger: Ledger) -> str:
    place = _users_place(row.defined_at, ledger)
    return f" (defined at {printable(place)})" if place else ""


_SITE = re.compile(r"^(?P<file>.*?):(?P<line>\d+)(?::\d+)?(?P<rest>(?: \(.*\))?)$")


def _place(site: str | None, ledger: Ledger) -> str | None:
    """``file:line`` as a reader wants it: ``line 3`` in the watched cell, a path
    relative to the working folder where it is below it."""
    found = _SITE.match(site or "")
    if found is None:
        return site or None
    filename, line = found["file"], found["line"]
    if ledger.source_file is not None and filename == ledger.source_file:
        return f"line {line}"
    if os.path.isabs(filename):
        with suppress(ValueError):
            rel = os.path.relpath(filename)
            filename = filename if rel.startswith("..") else rel
    return f"{filename}:{line}"


def _users_place(site: str | None, ledger: Ledger) -> str | None:
    """:func:`_place` of a place in the user's code; None for a library's (JAX names
    ``equinox.filter_jit``'s own file as where a function it wraps was defined)."""
    found = _SITE.match(site or "")
    if found is None or not user_file(found["file"]):
        return None
    return _place(site, ledger)


def _n(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _clip(s: str, width: int = 40) -> str:
    s = printable(s)
    return s if len(s) <= width else s[:width - 1] + "…"


# -- HTML -------------------------------------------------------------------------------


def html_body(ledger: Ledger, chart_png: str | None = None) -> str:
    """The ledger as an HTML fragment: the answer, the chart (a base64 PNG, where one was
    drawn), the table and the reasons (one ``<pre>``, as the text says them)."""
    esc = html.escape
    parts = [f"<p><b>jitwatch:</b> {esc(answer(ledger))}</p>"]
    if chart_png:
        parts.append(f'<img alt="compile seconds per function, by reason" '
                     f'src="data:image/png;base64,{chart_png}"/>')
    lines = list(_lines(ledger))[1:]
    if lines:
        parts.append(f"<pre>{esc(chr(10).join(lines).strip(chr(10)))}</pre>")
    return "<div class='jitmagic-ledger'>" + "".join(parts) + "</div>"


def bundle(ledger: Ledger, plot: bool = True) -> dict[str, str]:
    """``{"text/plain", "text/html"}``: what ``%%jitwatch`` shows and a ledger displays."""
    png = None
    if plot:
        from .charts.ledger import png as chart

        drawn = chart(ledger)
        png = base64.b64encode(drawn).decode("ascii") if drawn else None
    return {"text/plain": text(ledger), "text/html": html_body(ledger, png)}


def html_document(ledger: Ledger, plot: bool = True, note: str | None = None) -> str:
    """A self-contained HTML page of the ledger (its chart embedded; nothing fetched);
    ``note`` (a PARTIAL line) follows it."""
    data = bundle(ledger, plot)
    body = (with_note(data, note) if note else data)["text/html"]
    source = printable(ledger.source)
    return page(f"jitwatch: {source}",
                f"<h1>jitwatch: every compile of {html.escape(source)}, and why</h1>\n{body}")


def diff_text(d: LedgerDiff) -> str:
    """Two ledgers' compiles per function, OLD → NEW, the functions that recompile more
    first."""
    head = ("function", "defined at", "compiles", "again", "seconds (wall, one run each)")
    rows = sorted(d.rows, key=lambda r: (-(r.new_again - r.old_again), r.function))
    body = [(_clip(r.function), _clip(_place(r.defined_at, d.new if r.new_compiles else d.old)
                                      or "—"),
             f"{r.old_compiles} → {r.new_compiles}", f"{r.old_again} → {r.new_again}",
             f"{_seconds(r.old_seconds, r.old_compiles)} → "
             f"{_seconds(r.new_seconds, r.new_compiles)}") for r in rows[:MAX_ROWS]]
    lines = [f"jitwatch diff: {d.old.again} → {d.new.again} compiles again, "
             f"{d.old.count} → {d.new.count} compiles in all, "
             f"{fmt_s(d.old.seconds)} → {fmt_s(d.new.seconds)} compiling ({CLOCK})"]
    worse = d.more_again
    lines.append(f"NEW compiles again more often in {len(worse)} function"
                 f"{'' if len(worse) == 1 else 's'}: "
                 + ", ".join(f"`{_clip(r.function)}`" for r in worse) if worse else
                 "No function compiles again more often in NEW.")
    lines.append("")
    lines += columns(head, body, left=2)
    if len(rows) > MAX_ROWS:
        lines.append(f"… and {_n(len(rows) - MAX_ROWS, 'more function')}")
    return "\n".join(lines)


def _seconds(s: float, compiles: int) -> str:
    """Seconds of a function's compiles; ``—`` where it did not compile."""
    return fmt_s(s) if compiles else "—"

"""A ledger in words, as text and HTML; its gate; two ledgers side by side."""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import replace

from ...model.ledger import Broken, Ledger, LedgerDiff
from ...model.ledger.compiles import AGAIN, EAGER, FIRST, NEW_FUNCTION, OTHER, UNEXPLAINED, Noted
from ...model.ledger.rows import EagerLine, FunctionRow
from ...model.saved.schema import printable
from ...model.shown import register
from ...model.stats.units import counted, fmt_s
from ..blocks import Block, Image, Para, Strong, aligned, as_html
from ..bundle import page, with_note
from .bridge import jitcompare_line
from .fixes import EAGER_ANEW_FIX, NOTED, NOTES, advice, explained
from .values import reason_words, stretched
from .words import (
    CLOCK,
    KIND_WORDS,
    MAGIC_SOURCES,
    MAX_LINES,
    MAX_REASONS,
    MAX_ROWS,
    MAX_VALUES,
    clip,
    clip_place,
    defined,
    defined_place,
    explanations,
    place,
    shown,
)


def answer(ledger: Ledger) -> str:
    """The ledger in a sentence or two: what compiled again first, then all compile seconds."""
    where = f"{ledger.source}'s {fmt_s(ledger.wall_s)}"
    n = len(ledger.other_threads)  # what threads running before the run compiled meanwhile
    others = f" (and {counted(n, 'compile')} on threads that ran before it, below)" if n else ""
    if ledger.count == 0:
        return (f"No compiles in {ledger.source} ({fmt_s(ledger.wall_s)}): nothing was "
                "traced or compiled (its jitted functions were compiled before, or it "
                f"called no jit){others}.")
    threads = {c.thread for c in ledger.watched}
    summed = f", summed over {len(threads)} threads" if len(threads) > 1 else ""
    total = (f"{counted(ledger.count, 'compile')} took {fmt_s(ledger.seconds)} of {where} "
             f"({CLOCK}{summed})")
    if ledger.again == 0:
        return f"none compiled again: each function compiled once; {total}{others}."
    return (f"{_again_said(ledger)}: why, and what to do, below. In all, {total}, each "
            f"function's first compile included{others}.")


def _again_said(ledger: Ledger) -> str:
    """``step` (…) compiled again 3 times (310 ms); …``: the costliest first."""
    rows = [r for r in ledger.functions() if r.again]
    mine = sorted((r for r in rows if not r.eager), key=lambda r: -_again_seconds(r))
    eager = sum(r.again for r in rows if r.eager)
    if not mine:
        top = max(rows, key=_again_seconds)
        return (f"eager ops (jnp calls outside any jit) compiled again "
                f"{counted(eager, 'time')} ({fmt_s(ledger.again_seconds)}), "
                f"`{printable(shown(top.function, top.call_text))}` most")
    top, rest = mine[0], mine[1:]
    said = (f"`{printable(top.function)}`{defined(top.defined_at, ledger)} compiled again "
            f"{counted(top.again, 'time')} ({fmt_s(_again_seconds(top))})")
    if rest:
        said += (f"; {counted(len(rest), 'other function')} "
                 f"{counted(sum(r.again for r in rest), 'time')}")
    if eager:
        said += f"; eager ops (jnp calls outside any jit) {counted(eager, 'time')}"
    return said


def _again_seconds(row: FunctionRow) -> float:
    return sum(r.seconds for r in row.reasons if r.kind != FIRST)


def text(ledger: Ledger, verbose: bool = False) -> str:
    """The ledger for a terminal: answer, recompiles and fix, table (``verbose``: every row)."""
    return "\n".join(_lines(ledger, verbose))


def _lines(ledger: Ledger, verbose: bool = False, folded_said: bool = True) -> Iterable[str]:
    yield f"jitwatch: {answer(ledger)}"
    if ledger.stopped:
        yield "Stopped by Ctrl-C: the ledger holds what ran before it."
    if ledger.error:
        raised = printable(ledger.error).rstrip().rstrip(".")  # "... (5,).: the ledger"
        yield f"The run raised {raised}: the ledger holds what ran before it."
    rows = ledger.functions()
    yield from _again_lines(rows, ledger)
    kept, folded = (rows, []) if verbose else _folded(rows)
    if kept or folded:
        yield ""
    if kept:
        yield from _table(kept, ledger)
    if folded and folded_said:
        yield folded_line(folded) + ": -v shows them"
    yield from (f"note: {said}" for said in explanations(kept[:MAX_ROWS]))
    yield from _stale(ledger)
    yield from (f"note: `{printable(c.function)}` {NOTED[Noted.CLEARED_BY_JITMAGIC]}"
                for c in ledger.cleared if verbose)
    yield from _not_kept(ledger)
    yield from gate_lines(ledger)


def _again_lines(rows: list[FunctionRow], ledger: Ledger) -> Iterable[str]:
    """Why each function compiled again, the costliest first, with what to do."""
    again = sorted((r for r in rows if r.again and not r.eager),
                   key=lambda r: -_again_seconds(r))
    eager = ledger.eager_again()
    if again or eager:
        yield ""
        yield "Why each compiled again (the seconds: what a cache hit would have saved):"
        for row in again[:MAX_ROWS]:
            yield from _why(row, ledger)
        yield from _eager_why(eager, ledger)


def _folded(rows: list[FunctionRow]) -> tuple[list[FunctionRow], list[FunctionRow]]:
    """(the rows shown, the eager ops that compiled once, folded unless asked for)."""
    return ([r for r in rows if not r.eager or r.again],
            [r for r in rows if r.eager and not r.again])


def folded_line(folded: list[FunctionRow]) -> str:
    """``… and 6 eager ops that compiled once (212 ms, jnp calls outside any jit)``."""
    return (f"… and {counted(len(folded), 'eager op')} that compiled once "
            f"({fmt_s(sum(r.seconds for r in folded))}, jnp calls outside any jit)")


def _not_kept(ledger: Ledger) -> Iterable[str]:
    """What the ledger counts but could not explain."""
    for omitted in ledger.omitted:
        yield (f"`{printable(omitted.function)}`: {omitted.count:,} more compiles "
               f"({fmt_s(omitted.seconds)}) are counted in the table, their reasons not kept "
               f"(past the first {len(ledger.compiles):,} compiles, kept whole)")
    if ledger.explained_until_s is not None:
        yield (f"JAX's explanations were turned off {fmt_s(ledger.explained_until_s)} into "
               "the run, after so many misses (JAX compares each miss with every earlier "
               "one, so explaining grows slower as misses add up): later recompiles are "
               "counted, their reasons not known")
    if others := ledger.other_threads:
        yield ""
        yield (f"Other threads compiled {counted(len(others), 'time')} meanwhile "
               f"({fmt_s(sum(c.seconds for c in others))}), not counted above:")
        for row in ledger.functions(others)[:MAX_ROWS]:
            threads = sorted({c.thread for c in others if c.function == row.function})
            yield (f"  `{printable(row.function)}` on {', '.join(map(printable, threads))}: "
                   f"{counted(row.compiles, 'compile')}, {fmt_s(row.seconds)}")


def _stale(ledger: Ledger) -> Iterable[str]:
    """The values jit kept from a trace that changed since."""
    if not ledger.stale:
        return
    yield ""
    yield ("Values jit kept from the trace, changed since (calls made after the change "
           "still computed with the value traced; no recompile says so):")
    for v in ledger.stale[:MAX_ROWS]:
        read_at = place(v.line, ledger)
        at = f" at {printable(read_at)}" if read_at else ""
        version = f", its program for inputs {printable(v.inputs)}," if v.inputs else ""
        helper = f" in its helper `{printable(clip(v.helper, 60))}`" if v.helper else ""
        traced, now = stretched((v.traced, v.now))
        yield (f"  `{printable(clip(v.function, 60))}`{defined(v.defined_at, ledger)}"
               f"{version} read the {v.scope} "
               f"`{printable(v.name)}`{helper}{at}: {traced} when traced, {now} now")
    if len(ledger.stale) > MAX_ROWS:
        yield f"  … and {len(ledger.stale) - MAX_ROWS} more"


def _table(rows: list[FunctionRow], ledger: Ledger) -> Iterable[str]:
    head = ("function", "defined at", "compiles", "again", "trace", "lower", "XLA compile",
            "total")
    body = [(clip(shown(r.function, r.call_text) if r.eager else r.function),
             clip_place(defined_place(r.defined_at, ledger, r.eager)),
             str(r.compiles), str(r.again),
             *("—" if r.omitted or s not in r.stage_seconds else fmt_s(r.stage_seconds[s])
               for s in ("trace_s", "lower_s", "compile_s")),  # "—": some only counted
             fmt_s(r.seconds)) for r in rows[:MAX_ROWS]]
    yield from aligned((head, *body), left=2)
    if len(rows) > MAX_ROWS:
        rest = rows[MAX_ROWS:]
        yield (f"… and {counted(len(rest), 'more function')}: "
               f"{counted(sum(r.compiles for r in rest), 'compile')}, "
               f"{fmt_s(sum(r.seconds for r in rest))}")


def _why(row: FunctionRow, ledger: Ledger) -> Iterable[str]:
    yield (f"`{printable(row.function)}`{defined(row.defined_at, ledger)}: compiled again "
           f"{counted(row.again, 'time')}, {fmt_s(_again_seconds(row))}")
    again = [r for r in row.reasons if r.kind in AGAIN]
    for reason in again[:MAX_REASONS]:
        threads = [t for t in reason.threads if t != ledger.thread]
        on = f" (on {', '.join(clip(t) for t in threads)})" if threads else ""
        yield f"  - {reason_words(reason)}: {reason.count}×, {fmt_s(reason.seconds)}{on}"
        for site, said, n in reason.lines[:MAX_LINES]:
            code = f"  {clip(said, 100)}" if said else ""
            yield f"      at {clip(place(site, ledger) or site, 100)}{code}" + \
                  (f" ({n}×)" if n > 1 else "")
        if said := advice(reason):
            yield f"      {said}"
        if reason.kind == OTHER and reason.text:
            yield f"      JAX: {clip(' '.join(reason.text.split()), 300)}"
        elif reason.kind == UNEXPLAINED and explained(reason):
            yield f"      {clip(' '.join(explained(reason).split()), 300)}"
    if len(again) > MAX_REASONS:
        yield f"  … and {len(again) - MAX_REASONS} more reasons"
    if ledger.source in MAGIC_SOURCES and (bridge := jitcompare_line(row, ledger.source_file)):
        yield f"  is one compile of it slow? {printable(bridge)} measures it flat against nested"


def _eager_why(eager: list[EagerLine], ledger: Ledger) -> Iterable[str]:
    """The eager operations that compiled again, by the line that called them."""
    if not eager:
        return
    yield (f"eager ops (jnp/lax calls outside any jit): compiled again "
           f"{counted(sum(x.count for x in eager), 'time')}, "
           f"{fmt_s(sum(x.seconds for x in eager))}")
    for x in eager[:MAX_ROWS]:
        code = f"  {clip(x.call_text, 100)}" if x.call_text else ""
        where = clip(place(x.call_site, ledger) or x.call_site or "an unknown line", 100)
        names = ", ".join(f"`{clip(shown(f, x.call_text))}`" for f in x.functions[:MAX_VALUES])
        names += f" and {len(x.functions) - MAX_VALUES} more" * (len(x.functions) > MAX_VALUES)
        made = ", ".join(f"`{clip(f)}`" for f in x.made_anew[:MAX_VALUES])
        why = f"a new function object each time ({made}, made anew on each pass)" \
            if x.made_anew else "on new shapes or dtypes"
        yield f"  - {names}: {x.count}×, {fmt_s(x.seconds)}: {why}"
        yield f"      at {where}{code}"
    if len(eager) > MAX_ROWS:
        yield f"  … and {len(eager) - MAX_ROWS} more lines"
    if anew := [x for x in eager if x.made_anew]:
        arg = f"`{clip(anew[0].made_anew[0])}`" if len(anew) == 1 and \
            len(anew[0].made_anew) == 1 else "each function made anew"
        yield f"  fix{', where made anew' if len(anew) < len(eager) else ''}: " \
              f"{EAGER_ANEW_FIX.format(arg=arg)}"
    if len(anew) < len(eager):
        yield f"  note{', on new shapes or dtypes' if anew else ''}: {NOTES[EAGER]}"


def html_body(ledger: Ledger, chart_png: bytes | None = None, verbose: bool = False) -> str:
    """The ledger as an HTML fragment of the blocks every report is made of."""
    blocks: list[Block] = [Para([(Strong("jitwatch:"), " " + answer(ledger))]),
                           Image(chart_png, "compile seconds per function, by reason")]
    said = "\n".join(list(_lines(ledger, verbose, folded_said=False))[1:]).strip("\n")
    folded = [] if verbose else _folded(ledger.functions())[1]
    fold = (f"<details><summary>{html.escape(folded_line(folded))}</summary><pre>"
            f"{html.escape(chr(10).join(_table(folded, ledger)))}</pre></details>"
            if folded else "")
    return (f"<div class='jitmagic-ledger'>{as_html(blocks)}"
            + (f"<pre>{html.escape(said)}</pre>" if said else "") + fold + "</div>")


def bundle(ledger: Ledger, plot: bool = True, verbose: bool = False) -> dict[str, str]:
    """``{"text/plain", "text/html"}`` of a ledger (``verbose``: chart with eager ops)."""
    png = None
    if plot:
        from ..charts.ledger import png as chart

        folded = set() if verbose else {r.function for r in _folded(ledger.functions())[1]}
        drawn = replace(ledger, compiles=tuple(
            c for c in ledger.compiles if not (c.eager and c.function in folded)))
        png = chart(drawn, KIND_WORDS)  # the legend names each kind as the text does
    return {"text/plain": text(ledger, verbose), "text/html": html_body(ledger, png, verbose)}


def html_document(ledger: Ledger, plot: bool = True, note: str | None = None) -> str:
    """A self-contained HTML page of the ledger; ``note`` (a PARTIAL line) follows it."""
    data = bundle(ledger, plot)
    body = (with_note(data, note) if note else data)["text/html"]
    source = printable(ledger.source)
    return page(f"jitwatch: {source}",
                f"<h1>jitwatch: every compile of {html.escape(source)}, and why</h1>\n{body}")


def register_ledger() -> None:
    """Word the ledger's records' ``repr``."""
    register("summary", Ledger, lambda x: f"<Ledger: {x.count} compiles, {x.again} again>")
    register("summary", LedgerDiff,
             lambda d: f"<LedgerDiff: {d.old.again} → {d.new.again} compiles again>")


def gate_lines(ledger: Ledger) -> Iterable[str]:
    if not ledger.gate.any:
        return
    if ledger.error or ledger.stopped:  # checked only on a run that ended as written
        yield ""
        yield (f"Gate not checked: the run {'raised' if ledger.error else 'was stopped'} "
               "before its end, and the gate judges a run that ends as written.")
        return
    broken = ledger.over_gate()
    yield ""
    yield gate_sentence(ledger, broken)
    yield from (f"  {_broken_words(b, ledger)}" for b in broken)


def gate_sentence(ledger: Ledger, broken: list[Broken]) -> str:
    """The gate in one plain sentence: what was allowed, what happened, what to do."""
    allowed = _allowed(ledger)
    if not broken:
        return f"Gate held: allowed {allowed}; {_held(ledger)}."
    over = [f"`{printable(b.function)}` compiled {counted(b.compiles, 'time')}"
            for b in broken if b.function is not None]
    named = over[:MAX_LINES] + ([f"{len(over) - MAX_LINES} more functions did"]
                                if len(over) > MAX_LINES else [])
    named += [f"{ledger.count} compiles ran" for b in broken if b.function is None]
    todo = ("see why each compiled again above, or raise the limit" if over
            else "compile fewer programs, or raise the limit")
    return f"Gate FAILED: allowed {allowed}, but {' and '.join(named)}; {todo}."


def _allowed(ledger: Ledger) -> str:
    """What the gate allowed: ``1 compile per function (…) and 4 compiles in all``."""
    parts = []
    if (warm := ledger.gate.fail_after_warmup) is not None:
        parts.append(f"{counted(warm, 'compile')} per function (eager ops not counted)")
    if (cap := ledger.gate.max_compiles) is not None:
        parts.append(f"{counted(cap, 'compile')} in all")
    return " and ".join(parts)


def _held(ledger: Ledger) -> str:
    """What happened within a gate that held: the most any function compiled, the total."""
    parts = []
    if ledger.gate.fail_after_warmup is not None:
        most = max((ledger.gated(r) for r in ledger.functions() if not r.eager), default=0)
        parts.append(f"no function compiled more than {counted(most, 'time')}" if most
                     else "no function compiled")
    if ledger.gate.max_compiles is not None:
        parts.append(f"{counted(ledger.count, 'compile')} ran")
    return " and ".join(parts)


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
        return (f"`{printable(b.function)}` compiled {counted(b.compiles, 'time')} here, "
                f"{b.compiles - b.allowed} after its warm-up of {b.allowed}")
    reason = b.first_late.reason
    said = {FIRST: "for its first compile", UNEXPLAINED: "with no reason from JAX",
            NEW_FUNCTION: "for a new function object", EAGER: "for an eager op",
            OTHER: "for another reason (JAX's words in the ledger)"}.get(
        reason.kind, f"for a {KIND_WORDS[reason.kind]}" + (
            "" if reason.argument is None else f" of `{printable(reason.argument)}`"))
    site = place(b.first_late.call_site, ledger)
    where = f" at {printable(site)}" if site else ""
    late = b.compiles - b.allowed
    return (f"`{printable(b.function)}` compiled {counted(b.compiles, 'time')} here, {late} after "
            f"its warm-up of {b.allowed}: the first of them {said}{where}")


def diff_text(d: LedgerDiff) -> str:
    """Two ledgers' compiles per function, OLD → NEW, the functions that recompile more first."""
    head = ("function", "defined at", "compiles", "again", "seconds (wall, one run each)")
    rows = sorted(d.rows, key=lambda r: (-(r.new_again - r.old_again), r.function))
    body = [(clip(r.function), clip_place(defined_place(r.defined_at, d.new if r.new_compiles
                                                        else d.old, r.eager)),
             f"{r.old_compiles} → {r.new_compiles}", f"{r.old_again} → {r.new_again}",
             f"{_seconds(r.old_seconds, r.old_compiles)} → "
             f"{_seconds(r.new_seconds, r.new_compiles)}") for r in rows[:MAX_ROWS]]
    lines = [f"jitwatch diff: {d.old.again} → {d.new.again} compiles again, "
             f"{d.old.count} → {d.new.count} compiles in all, "
             f"{fmt_s(d.old.seconds)} → {fmt_s(d.new.seconds)} compiling ({CLOCK})"]
    worse = d.more_again
    lines.append(f"NEW compiles again more often in {len(worse)} function"
                 f"{'' if len(worse) == 1 else 's'}: "
                 + ", ".join(f"`{clip(r.function)}`" for r in worse) if worse else
                 "No function compiles again more often in NEW.")
    lines.append("")
    lines += aligned((head, *body), left=2)
    if len(rows) > MAX_ROWS:
        lines.append(f"… and {counted(len(rows) - MAX_ROWS, 'more function')}")
    return "\n".join(lines)


def _seconds(s: float, compiles: int) -> str:
    """Seconds of a function's compiles; ``—`` where it did not compile."""
    return fmt_s(s) if compiles else "—"

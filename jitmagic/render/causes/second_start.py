"""Text and HTML for ``--cache``: a second start with a warm persistent compilation cache."""

from __future__ import annotations

from ...model.causes.second_start import (
    NO_FOLDER,
    SWITCHED_OFF,
    CacheRow,
    SecondStart,
    cache_unset,
    samples,
)
from ...model.stats.rule import FASTER, INCONCLUSIVE, SAME, SLOWER, Difference, median
from ...model.stats.units import fmt_s
from ...model.stats.witness import CPU, FIRST_CALL, Clock, on
from .. import comparison
from ..blocks import Block, Cell, Heading, Para, Pre, Table, as_text, part_section
from ..format import marked_ratio, median_cell
from ..verdicts import cpu_mark, interval, times, verb, with_interval

#: What a warm start that saw no cache hit measured instead of a read.
NOT_READ = "the cache was not read"
TITLE = "Second start (persistent compilation cache)"
COLUMNS = ("variant", "no cache", "first start (writes the cache)", "warm",
           "warm/no cache")
#: What a warm first call still does: the trace and lowering run in full on every start.
KEPT = "a warm cache saves only the XLA compile; the trace and lowering run in full on every start"
#: Why JAX may have read no entry although the folder was set for every program.
WHY_UNREAD = ("JAX writes no entry for a program with host callbacks, such as `jax.debug.print`")


def blocks(s: SecondStart) -> list[Block]:
    """The second start as blocks, built once for the text and the HTML."""
    rows = [row_cells(r) for r in s.rows.values()]
    out: list[Block] = [Heading((TITLE,)), Para([intro(s)]), *comparison.partial(s.stopped),
                        Table(COLUMNS, rows, css="jitcompare-cache"),
                        Para(sentences(s))]
    out += [Para([("warning: ", w)], "warning") for w in s.warnings]
    out += [Pre(r.error, "error") for r in s.rows.values() if r.error]
    return out


def text(s: SecondStart) -> str:
    """The second start as plain text."""
    return as_text(blocks(s))


def intro(s: SecondStart) -> str:
    """What no cache, first start and warm mean here, and how many rounds the medians are of."""
    rounds = max((len(r.cold) for r in s.rows.values()), default=0)
    of = f"medians of {rounds} rounds [min–max]" if rounds > 1 else f"{rounds} round"
    return ("no cache: a first call with JAX's persistent cache off, as the comparison's; "
            "first start: the next, with the cache in an emptied folder (it compiles and "
            "writes the entry); warm: the next first call, after `jax.clear_caches()`, "
            f"which reads it; {of}")


def row_cells(r: CacheRow) -> list[Cell]:
    """One variant's row: medians and min–max, each on the clock its ratio is judged on."""
    clock, d = r.clock(), r.difference
    before, warm = r.seconds_on(clock)
    mark = cpu_mark(clock, "")  # the clock, where it is CPU time
    if not r.warm:
        warm_cell, ratio = Cell("not measured"), Cell("—")
    elif not r.read:
        warm_cell, ratio = Cell(NOT_READ), Cell("—")
    else:
        warm_cell = median_cell(warm, mark)
        ratio = Cell(marked_ratio(1 / d.ratio, d), ", ".join(
            n for n in ("against the first start" * (not r.no_cache), mark) if n))
    if not r.no_cache:
        return [Cell(r.name), Cell("not measured"), median_cell(before, mark), warm_cell, ratio]
    first = r.writing_clock()
    return [Cell(r.name), median_cell(before, mark),
            median_cell(on(samples(r.cold), FIRST_CALL, first), cpu_mark(first, "")), warm_cell,
            ratio]


def sentences(s: SecondStart) -> list[str]:
    """What the samples support, in words: per variant, nesting, the user's settings."""
    out = [saving(r) for r in s.rows.values() if r.cold]
    # what writing the entry cost, only where one was written: the warm starts read it
    out += [writing(r) for r in s.rows.values() if r.no_cache and r.cold and r.read]
    out += [remains(r) for r in s.rows.values() if r.read]
    if any(r.read for r in s.rows.values()):
        out.append(remainder(s))
    if len(s.rows) > 1:
        out.append(nesting(s))
    out += user_settings(s)
    busy = [r.name for r in s.rows.values() if r.read and r.clock() == CPU]  # the rest: wall
    quiet = [r.name for r in s.rows.values() if r.read and r.clock() != CPU]
    rest = f"; {' and '.join(quiet)} on wall time" if quiet else ""
    return out + [f"the machine was busy: {' and '.join(busy)} compared and shown on the "
                  f"process's CPU time, seconds and ratio alike{rest} (what remains warm, and "
                  "its share, are JAX's events: wall time)"] * bool(busy)


def saving(r: CacheRow) -> str:
    """What a warm cache did to ``r``'s first call, against the first call with no cache."""
    if not r.warm:
        return f"{r.name}: no warm first call was measured"
    if not r.read:
        return (f"{r.name}: {NOT_READ}: {r.unread} of {len(r.warm)} warm first calls saw "
                f"no cache hit, so no warm figure is shown ({WHY_UNREAD})")
    d, clock = r.difference, r.clock()
    before, warm = r.medians_on(clock)  # the ratio's clock, named where it is CPU time
    against, short = (("with no cache", "with no cache") if r.no_cache else
                      ("on the first start (which writes the cache)", "on the first start"))
    # each figure said with its start: "the first start, which writes the cache: 100 ms
    # instead of 900 ms" read as the first start's own figure
    figures = f"{fmt_s(warm)} warm against {fmt_s(before)} {short}{cpu_mark(clock, ', ')}"
    return _by_rule(d, clock, {
        FASTER: "{name}: with a warm cache the first call {verb} {said} than {against}: {figures}",
        SAME: "{name}: a warm cache makes {said} to the first call ({figures})",
        SLOWER: "{name}: the warm first call {verbed} {times} than the first call "
                "{against}{interval} ({figures})",
        "": "{name}: inconclusive whether a warm cache speeds the first call: {said} "
            "({figures}); more runs might tell"}, name=r.name, against=against, figures=figures)


def writing(r: CacheRow) -> str:
    """What the first start, which writes the entry, cost against no cache."""
    d, clock = r.writing, r.writing_clock()
    cold, none = (median(on(samples(x), FIRST_CALL, clock)) for x in (r.cold, r.no_cache))
    figures = f"{fmt_s(cold)} against {fmt_s(none)}{cpu_mark(clock, ', ')}"
    return _by_rule(d, clock, {
        SAME: "{subject} shows {times} from {versus}{interval} ({figures})",
        INCONCLUSIVE: "{subject} against {versus} is inconclusive: {said} ({figures}); more "
                      "runs might tell",
        "": "{subject} {verb} {times} than {versus}{interval} ({figures})"},
        subject=f"{r.name}: the first start, which also writes the cache,", figures=figures,
        versus="the first call with no cache")


def _by_rule(d: Difference, clock: Clock, said: dict[str, str], **words: str) -> str:
    """The sentence ``said`` holds for ``d``'s kind ("" for any other), its fields filled."""
    rule = {"times": times(d, clock), "interval": f" {interval(d)}".rstrip(),
            "said": with_interval(d, clock), "verb": verb(clock),
            "verbed": verb(clock, past=True)}
    return said.get(d.kind, said[""]).format(**rule, **words)


def remains(r: CacheRow) -> str:
    """What ``r``'s median warm first call still spends, in the parts JAX's events time in it."""
    start = r.middle_warm()
    assert start is not None  # said only of a row that was read
    trace, lower, read = start.trace_s, start.lower_s, start.compile_s
    parts = [f"trace {_s(trace)}", f"lower {_s(lower)}", f"reading the entry {_s(read)}"]
    if trace is not None and lower is not None and read is not None:
        parts.append(f"the rest {fmt_s(max(start.seconds - trace - lower - read, 0.0))}")
    which = "median" if len(r.warm) % 2 else "middle"
    _, warm = r.seconds_on(CPU)  # the table's warm figures, where it compares CPU time
    cpu = (f"; compared above on CPU time, whose median warm is {fmt_s(median(warm))}"
           if r.clock() == CPU and warm else "")
    return (f"{r.name}, what remains warm: its {which} warm first call, {fmt_s(start.seconds)} "
            f"of wall time (the clock of JAX's events{cpu}): {', '.join(parts)}")


def python_share(r: CacheRow) -> float | None:
    """The share of ``r``'s median warm first call spent tracing and lowering (None: unread)."""
    start = r.middle_warm()
    if start is None or start.trace_s is None or start.lower_s is None or not start.seconds:
        return None
    return (start.trace_s + start.lower_s) / start.seconds


def remainder(s: SecondStart) -> str:
    """What a warm cache leaves: trace and lowering ("mostly" only where at least half)."""
    shares = {r.name: python_share(r) for r in s.rows.values() if r.read}
    known = {n: x for n, x in shares.items() if x is not None}
    if not known:
        return KEPT
    said = ", ".join(f"{x:.0%} {n}" for n, x in known.items())
    shrunk = s.python_nesting
    nesting = (f", which nesting shrinks here: {times(shrunk)} {interval(shrunk)}".rstrip()
               if shrunk.kind == FASTER else "")
    if all(x >= 0.5 for x in known.values()) and len(known) == len(shares):
        return (f"{KEPT} and are most of a warm first call ({said} of its wall time): "
                f"Python work{nesting}")
    return f"{KEPT} ({said} of a warm first call's wall time){nesting}"


def _s(x: float | None) -> str:
    return "not read" if x is None else fmt_s(x)


def nesting(s: SecondStart) -> str:
    """Whether nesting still pays on a second start, by the rule on the warm starts."""
    if unread := [r.name for r in s.rows.values() if not r.read]:
        return (f"whether nesting pays on a second start: not measured ({NOT_READ} for "
                f"{' and '.join(unread)})")
    return _by_rule(s.nesting, s.clock(), {
        FASTER: "on a second start nesting still pays: nested's warm first call {verb} {times} "
                "than flat's{interval}",
        SLOWER: "on a second start nesting costs: nested's warm first call {verb} {times} than "
                "flat's{interval}",
        SAME: "on a second start nesting makes {said}",
        "": "whether nesting still pays on a second start is inconclusive: {said}; more runs "
            "might tell"})


def user_settings(s: SecondStart) -> list[str]:
    """Where the user's own JAX would not cache this program, and the setting to change."""
    return [f"{why}: {fix}" for why, fix in cache_fixes(s)]


def cache_fixes(s: SecondStart) -> list[tuple[str, str]]:
    """What keeps the user's JAX from caching this program, and the setting to change."""
    return [_cache_fix(s, unset) for unset in cache_unset(s)]


def _cache_fix(s: SecondStart, unset: str) -> tuple[str, str]:
    if unset == SWITCHED_OFF:
        return ("your JAX's persistent cache is switched off "
                "(`jax_enable_compilation_cache` is False)",
                "set `jax_enable_compilation_cache` to True")
    if unset == NO_FOLDER:
        return ("your JAX caches nothing between starts: `jax_compilation_cache_dir` is not set",
                "set `jax_compilation_cache_dir` to a folder "
                "(`jax.config.update(\"jax_compilation_cache_dir\", \"/path/to/cache\")`)")
    slow = s.uncached()
    measured = [n for n, r in s.rows.items() if s.compile_s.get(n, r.compile_s) is not None]
    what = "this program" if len(slow) == len(measured) else \
        f"the {' and '.join(slow)} variant{'s' * (len(slow) > 1)}"
    how = " and ".join(f"{fmt_s(sec)}{f' {n}' * (len(s.rows) > 1)}" for n, sec in slow.items())
    return (f"your JAX would not cache {what}: it compiles in {how} of wall time (as "
            f"JAX times it), under `jax_persistent_cache_min_compile_time_secs` "
            f"({float(s.user.min_compile_s)!r} s)",
            "set `jax_persistent_cache_min_compile_time_secs` to 0")

section = part_section("second_start", lambda s, _: blocks(s), lambda *_: [], "")

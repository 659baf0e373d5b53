"""The one table of options (:data:`OPTION_SPECS`), from which every parser, ``JITMAGIC_WATCH`` and
the docs' lists are made, so they agree; defaults live on :class:`~jitmagic.options.Options`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ..backends import ACCELERATOR_BUDGET_S, CPU, FRESH_BUDGET_S
from ..model.parts import PARTS
from ..model.stats.rule import MAX_PAIRS, MAX_PAIRS_BUSY, MIN_PAIRS
from . import values

#: The tools (each with its command and Python function) and where one takes an option.
COMPARE, WATCH = "jitcompare", "jitwatch"
MAGIC, COMMAND = "magic", "command"
#: What ``{result}`` in an option's help reads as, for each tool.
RESULTS = {COMPARE: "the result", WATCH: "the ledger"}


@dataclasses.dataclass(frozen=True, slots=True)
class OptionSpec:
    """One option as every front end spells it (``type``: None for a switch; ``check``
    normalises)."""

    flags: tuple[str, ...]
    help: str
    type: Callable[[str], Any] | None = None
    metavar: str | None = None
    check: Callable[[OptionSpec, Any], Any] | None = None
    tools: frozenset[str] = frozenset({COMPARE})
    places: frozenset[str] = frozenset({MAGIC, COMMAND})

    @property
    def name(self) -> str:
        """The :class:`~jitmagic.options.Options` field (``dest``): ``--in-axes`` → ``in_axes``."""
        return self.flags[-1].lstrip("-").replace("-", "_")

    @property
    def label(self) -> str:
        return "/".join(self.flags)

    def help_for(self, tool: str = COMPARE) -> str:
        return self.help.replace("{result}", RESULTS[tool])

    def parser_keywords(self, tool: str = COMPARE, default: Any = None) -> dict[str, Any]:
        """``add_argument`` keywords (argparse's, IPython's ``magic_arguments``)."""
        kind = {"action": "store_true", "default": bool(default)} if self.type is None else \
            {"type": self.type, "default": default, "metavar": self.metavar}
        return {**kind, "help": self.help_for(tool)}


def specs_for(tool: str, place: str) -> tuple[OptionSpec, ...]:
    """The options ``tool`` takes in ``place``, in the order their help lists them."""
    return tuple(s for s in OPTION_SPECS if tool in s.tools and place in s.places)


#: The options both front ends take, in the order their help lists them.
OPTION_SPECS: tuple[OptionSpec, ...] = (
    OptionSpec(("-r", "--repeat"), f"cold runs per variant, or auto: at least {MIN_PAIRS}, then "
               f"more until the verdict is decided, up to {MAX_PAIRS} ({MAX_PAIRS_BUSY} on a "
               "busy machine) while they fit in --budget (default auto); medians are "
               "reported", values.repeat_count,
               "N|auto", values.repeat),
    OptionSpec(("--budget",), "with -r auto, and in each part after the comparison (--effort, "
               "--cache, ...), the seconds of measuring after which no further run starts "
               f"(default {CPU.budget_s:g} on a CPU, {ACCELERATOR_BUDGET_S:g} on a "
               f"GPU or TPU, where one compile takes seconds; {FRESH_BUDGET_S:g} where each "
               "cold sample is a fresh process)", values.seconds_text, "SECONDS",
               values.seconds),
    OptionSpec(("-n", "--number"), "calls per steady-state timing loop "
               "(default: auto-ranged like %%timeit)", values.whole_text, "N", values.number),
    OptionSpec(("--nest",), "add jit only to these helpers in the nested variant "
               "(default: every helper); a helper by its reported name (mylayers.dense), its "
               "last part (dense) or as your code calls it (L.dense)", str,
               "HELPER[,HELPER...]", values.names),
    OptionSpec(("--mine",), "count these installed modules as your code, so their functions "
               "are helpers to nest and their lines are yours (default: a module an "
               "installed distribution provides is a library's, an editable install "
               "yours)", str, "MODULE[,MODULE...]", values.modules),
    OptionSpec(("--timeout",), "stop after the stage that runs past SECONDS and show what was "
               "measured", values.seconds_text, "SECONDS", values.seconds),
    OptionSpec(("--vmap",), "also compare jit(vmap(f)) with vmap(jit(f)) on a batch",
               check=values.switch),
    OptionSpec(("--batch",), "--vmap on the call's arguments stacked N times along a new first "
               f"axis (default {values.DEFAULT_BATCH})", values.whole_text, "N", values.count),
    OptionSpec(("--in-axes",), "--vmap on arguments that already are a batch, mapped as "
               "jax.vmap's in_axes (e.g. 0,None)", str, "SPEC", values.axes),
    OptionSpec(("--attribute",), "time each helper during the flat variant's trace "
               "(calls, inclusive, own)", check=values.switch),
    OptionSpec(("--advise",), "measure which helpers are worth their own jit: nest each alone "
               f"(needs -r {values.ADVISE_FEWEST}+)", check=values.switch),
    OptionSpec(("--sweep",), "one comparison per value, NAME bound before the code runs "
               "(e.g. n=1,2,4,8); plots "
               "each phase against the value (log-log, with growth exponents)", str,
               "NAME=V1,V2,...", values.sweep),
    OptionSpec(("--lines",), "count jaxpr equations, StableHLO ops, trace hits and Python time "
               "per source line, flat and nested (shown after the table and its causes)",
               check=values.switch),
    OptionSpec(("-q", "--quiet"), "show no progress while measuring", check=values.switch),
    OptionSpec(("--xla",), "after the comparison, one extra profiled cold compile per "
               "variant: where XLA spends it (each HLO pass, code generation)",
               check=values.switch),
    OptionSpec(("--cache",), "then a second start: each variant's first call with JAX's "
               "persistent compilation cache cold, then warm (in a folder of its own; your "
               "settings and cache are left as they were)", check=values.switch),
    OptionSpec(("--effort",), "then XLA's lower effort settings (backend optimization level "
               "0 and 1, JAX's effort and optimization level): the flat program's compile and "
               "call at each against the default, and after how many calls the default pays "
               "back (your config and XLA_FLAGS are left as they were)", check=values.switch),
    OptionSpec(("--why",), "measure every cause of a slow first call jitmagic knows: "
               "--lines, --cache, --xla and --effort together (captured constants of 1 MiB or "
               "more are measured without it); the ranked causes follow the table",
               check=values.switch),
    OptionSpec(("--target",), "compile flat and nested for a TPU slice this machine "
               "does not have (libtpu: pip install \"jitmagic[tpu]\"), never run: e.g. "
               "v5e:1x1, v5e:2x2, v5p:2x2x1; --xla and --effort read the target's compile",
               str, "TOPOLOGY", values.topology),
    OptionSpec(("--jax",), "measure the file or cell under each of these JAX releases, side "
               "by side, each in a fresh process and an environment of its own, made once in "
               "your cache folder (`current`: your own JAX, never changed); docs/releases.md",
               values.releases_text, "RELEASE[,RELEASE...]"),
    OptionSpec(("--bisect",), "walk the JAX releases served from A to B by halving, each measured "
               "as --jax measures it, and name the first where a stage is slower than in A by "
               "the rule", values.bisect_text, "A..B"),
    # New measurement options go here, with a field on Options below.
    OptionSpec(("--fail-after-warmup",), "fail (exit status 1) when any function compiles "
               "more than N times, its warm-up: the 'no retrace after step 1' check",
               int, "N", tools=frozenset({WATCH})),
    OptionSpec(("--max-compiles",), "fail (exit status 1) when it compiles more than N "
               "times in all", int, "N", tools=frozenset({WATCH})),
    OptionSpec(("--save",), "write {result} as JSON to PATH (jitmagic.load reads it back; "
               "jitmagic diff compares two)", str, "PATH", tools=frozenset({COMPARE, WATCH})),
    OptionSpec(("--baseline",), "compare with the report saved at PATH and show what changed, "
               "stage by stage, under the verdict", str, "PATH"),
    OptionSpec(("--html",), "write {result} as a self-contained HTML page to PATH (charts "
               "embedded, opens offline)", str, "PATH", tools=frozenset({COMPARE, WATCH})),
    OptionSpec(("--trace",), "write the stages as Chrome trace events to PATH (.json; Perfetto and "
               "speedscope open it): a track per variant, per release with --jax, per value "
               "with --sweep", str, "PATH"),
    OptionSpec(("-o", "--output"), "return {result} (like %%timeit -o)",
               tools=frozenset({COMPARE, WATCH}), places=frozenset({MAGIC})),
    OptionSpec(("-v", "--verbose"), "show {result} in full (every row, note and section); "
               "by default the answer comes first and briefly", tools=frozenset({COMPARE, WATCH})),
    OptionSpec(("--no-plot",), "leave the chart out", tools=frozenset({COMPARE, WATCH}),
               places=frozenset({MAGIC})),
    OptionSpec(("--processes",), "measure in N processes on this machine, in lockstep under "
               "jax.distributed (CPU collectives through gloo); process 0 shows the report "
               "(docs/distributed.md)", int, "N", places=frozenset({COMMAND})),
)


#: The magic's own options, which the command does not take.
MAGIC_ONLY = ("-o", "--output", "--no-plot")
#: The options (``Options`` fields) that keep a command's cold samples in its own process
#: where the backend remembers: a part after the comparison (it measures this process's
#: programs) or what asks for one, a sweep, a target.
IN_ONE_PROCESS = (*dict.fromkeys(n for p in PARTS for n in p.asked_by), "why", "batch",
                  "in_axes", "sweep", "target")


def cold_command(words: list[str]) -> tuple[list[str], list[str]]:
    """A command line's options less the magic's own and those of :data:`IN_ONE_PROCESS`
    with their values (the comparison alone, whose cold samples the command takes in fresh
    processes), the script's arguments after ``--`` as given; and the flags left out."""
    specs = {flag: spec for spec in OPTION_SPECS for flag in spec.flags}
    kept, left_out, value_next = [], [], False
    cut = words.index("--") if "--" in words else len(words)  # the script's own after it
    for word in words[:cut]:
        flag = word.split("=", 1)[0] if word.startswith("--") else word
        spec = None if value_next else specs.get(flag)
        if value_next or word in MAGIC_ONLY:
            value_next = False
        elif spec is not None and spec.name in IN_ONE_PROCESS:
            left_out.append(flag)
            value_next = spec.type is not None and flag == word
        else:
            kept.append(word)
    return kept + words[cut:], left_out


#: Where the docs hold each tool's :func:`as_markdown` list, in ``<!-- options: TOOL -->``.
DOCS = {COMPARE: "docs/options.md", WATCH: "docs/watch.md"}


def as_markdown(tool: str) -> str:
    """The options ``tool`` takes as the docs list them: a Markdown table."""
    rows = ["| option | in | meaning |", "|---|---|---|"]
    for spec in OPTION_SPECS:
        if tool not in spec.tools:
            continue
        flags = ", ".join(f"`{flag}{' ' + spec.metavar if spec.metavar else ''}`"
                          for flag in spec.flags)
        where = " and ".join(p for p in (MAGIC, COMMAND) if p in spec.places)
        said = spec.help_for(tool).replace("%%", "%")
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in (flags, where, said))
                    + " |")
    return "\n".join(rows)

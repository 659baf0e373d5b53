"""Every option of every front end, specified once, and the :class:`Options` they make.

:data:`OPTION_SPECS` is the one list: flags, type, metavar, help and check of each
option the magic and the command share. The magic's ``magic_arguments`` and the
command's ``argparse`` parser are both generated from it (so ``%jitcompare?``
and ``python -m jitmagic --help`` agree), and :class:`Options` runs its checks,
so ``jitmagic.compare(..., nest="layer")`` means what ``--nest layer`` means.
Defaults live on :class:`Options`' fields. Standard library only.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import dataclasses
import difflib
import importlib.util
import keyword
import math
import numbers
import os
import re
import textwrap
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any
from typing import NamedTuple
from typing import cast

from ._compat import option_strings
from .backends import ACCELERATOR_BUDGET_S
from .backends import CPU
from .backends import target as tpu
from .errors import InputError
from .model.stats.rule import MAX_PAIRS
from .model.stats.rule import MAX_PAIRS_BUSY
from .model.stats.rule import MIN_PAIRS
from .usercode import STACK

SWEEP_USAGE = "--sweep NAME=V1,V2,... (e.g. --sweep n=1,2,4,8,16)"
#: ``-r auto``: repeat until the significance rule decides (``jitmagic.measure.sampling.rounds``).
AUTO = "auto"
#: ``--advise`` compares spreads: fewer cold runs than this give none to judge by.
ADVISE_FEWEST = 3
#: ``--batch``'s default: how many times ``--vmap`` stacks the call's arguments.
DEFAULT_BATCH = 64


#: The tools: ``%%jitcompare`` (with ``python -m jitmagic`` and ``jitmagic.compare``) and
#: ``%%jitwatch`` (with ``python -m jitmagic watch``, ``JITMAGIC_WATCH``,
#: ``jitmagic.watch`` and its pytest marker).
COMPARE, WATCH = "jitcompare", "jitwatch"
#: Where a tool takes an option: its magic, its command.
MAGIC, COMMAND = "magic", "command"
#: What ``{result}`` in an option's help reads as, for each tool.
RESULTS = {COMPARE: "the result", WATCH: "the ledger"}


@dataclasses.dataclass(frozen=True, slots=True)
class OptionSpec:
    """One option as every front end spells it.

    ``type`` is what argparse converts the text to (``None``: an on/off switch);
    ``check(option, value)`` returns the value normalised (text where a structure
    is meant is parsed as on the command line) or raises ``InputError``. ``tools``:
    the tools that take it (:data:`COMPARE`, :data:`WATCH`); ``places``: where
    (:data:`MAGIC`, :data:`COMMAND`). ``{result}`` in ``help`` reads as the tool's
    (:data:`RESULTS`).
    """

    flags: tuple[str, ...]
    help: str
    type: Callable[[str], Any] | None = None
    metavar: str | None = None
    check: Callable[[OptionSpec, Any], Any] | None = None
    tools: frozenset[str] = frozenset({COMPARE})
    places: frozenset[str] = frozenset({MAGIC, COMMAND})

    @property
    def name(self) -> str:
        """The :class:`Options` field (and argparse ``dest``): ``--in-axes`` → ``in_axes``."""
        return self.flags[-1].lstrip("-").replace("-", "_")

    @property
    def label(self) -> str:
        """How messages name it: ``-r/--repeat``."""
        return "/".join(self.flags)

    def help_for(self, tool: str = COMPARE) -> str:
        """The help text as ``tool`` says it."""
        return self.help.replace("{result}", RESULTS[tool])

    def parser_keywords(self, tool: str = COMPARE) -> dict[str, Any]:
        """``add_argument`` keywords (for argparse and IPython's ``magic_arguments.argument``)."""
        field = _fields().get(self.name) if tool == COMPARE else None
        default = None if field is None else field.default
        if self.type is None:
            return {"action": "store_true", "default": bool(default),
                    "help": self.help_for(tool)}
        return {"type": self.type, "default": default, "metavar": self.metavar,
                "help": self.help_for(tool)}


def specs_for(tool: str, place: str) -> tuple[OptionSpec, ...]:
    """The options ``tool`` takes in ``place`` (its magic, its command), in the order
    their help lists them."""
    return tuple(s for s in OPTION_SPECS if tool in s.tools and place in s.places)


def _fields() -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(Options)}


# --------------------------------------------------------------------------- checks


def _count(option: OptionSpec, value: Any) -> int:
    """A whole number of at least 1 (repeats, loop calls, batch size)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"{option.label} must be a whole number, not {value!r}")
    if value < 1:
        raise InputError(f"{option.label} must be at least 1, not {value}")
    return int(value)


def repeat_count(text: str) -> int | str:
    """``-r``'s text as argparse reads it: ``auto`` or a whole number (checked later)."""
    if text.strip().lower() == AUTO:
        return AUTO
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected `auto` or a whole number of cold runs (e.g. -r 5), not {text!r}") from None


def seconds_text(text: str) -> float | int:
    """A number of seconds as argparse reads it (checked later), a whole one kept whole
    (so that ``--budget 20`` is echoed as written, not ``20.0``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds (e.g. 30 or 2.5), not {text!r}") from None
    return int(value) if value.is_integer() else value


def whole_text(text: str) -> int:
    """A whole number as argparse reads it (checked later)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number (e.g. 8), not {text!r}") \
            from None


#: The most cold runs a variant ``-r N`` takes: each is a compile from cleared caches.
MAX_REPEAT = 100


def _repeat(option: OptionSpec, value: Any) -> int | str:
    """``"auto"`` or a whole number from 1 to :data:`MAX_REPEAT`."""
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return AUTO
    if isinstance(value, str):  # as on the command line: "5"
        try:
            value = int(value.strip())
        except ValueError:
            raise InputError(f"{option.label} is `auto` or a whole number of cold runs "
                             f"(e.g. 5), not {value!r}") from None
    count = _count(option, value)
    if count > MAX_REPEAT:
        raise InputError(f"{option.label} is at most {MAX_REPEAT} cold runs a variant, not "
                         f"{count}: each is a compile from cleared caches; `auto` takes as "
                         "many as the verdict needs")
    return count


def _seconds(option: OptionSpec, value: Any) -> float:
    seconds = cast(float, value)  # any real number, kept as given (an int, a NumPy scalar)
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not seconds > 0:
        raise InputError(f"{option.label} must be a positive number of seconds, not {value!r}")
    return seconds


def _switch(option: OptionSpec, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"{option.label} is on or off: pass True or False, not {value!r}")
    return value


def _as_names(value: Any) -> tuple[Any, ...]:
    """``"a, b"`` or ``["a", "b"]`` → ``("a", "b")``, unchecked; one value alone as one."""
    if isinstance(value, str):
        return split_names(value)
    return tuple(value) if isinstance(value, Iterable) else (value,)


def _names(option: OptionSpec, value: Any) -> tuple[str, ...]:
    """``"a, b"`` or ``["a", "b"]`` → ``("a", "b")``."""
    names = _as_names(value)
    if not all(isinstance(n, str) for n in names):
        raise InputError(f"{option.label} takes helper names, e.g. `--nest layer,norm` "
                         f"or nest=['layer', 'norm'], not {value!r}")
    if not names:
        raise InputError(f"{option.label} names no helper: write the helpers to nest, e.g. "
                         "`--nest layer,norm`, or leave --nest out to nest every helper")
    return names


def _modules(option: OptionSpec, value: Any) -> tuple[str, ...]:
    """``"mylib, other"`` or ``["mylib"]`` → ``("mylib", "other")``: top-level modules
    Python can import here, none of JAX's stack (whose own jit nested fails)."""
    names = _as_names(value)
    if not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise InputError(f"{option.label} takes top-level module names, e.g. `--mine "
                         f"mylib,shared` or mine=['mylib'] (all of a module's code becomes "
                         f"yours), not {value!r}")
    for name in names:
        if name in STACK:
            raise InputError(f"{option.label} cannot make `{name}` yours: it is JAX's stack "
                             "or jitmagic's own, never nested (JAX's own functions under a "
                             "jit of their own fail: 'Recursively calling jit')")
        if importlib.util.find_spec(name) is None:
            raise InputError(f"{option.label} names `{name}`, which Python cannot import "
                             "here: write the top-level module your code imports (`import "
                             "mylib.nn` → --mine mylib)")
    return names


def _axes(option: OptionSpec, value: Any) -> Any:
    return parse_in_axes(value) if isinstance(value, str) else value


def _sweep(option: OptionSpec, value: Any) -> tuple[str, tuple[Any, ...]]:
    """``"n=1,2"`` or ``("n", [1, 2])`` → ``("n", (1, 2))``."""
    if isinstance(value, str):
        value = parse_sweep(value)
    try:
        name, values = value
        values = tuple(values)
    except (TypeError, ValueError):
        raise InputError(f"{option.label} {value!r}: write {SWEEP_USAGE}, "
                         "or sweep=('n', [1, 2, 4])") from None
    check_sweep_name(name)
    if not values:
        raise InputError(f"a sweep needs at least one value: write {SWEEP_USAGE}")
    return name, values


def _topology(option: OptionSpec, value: Any) -> str:
    """A TPU topology name libtpu takes (``v5e:2x2``), or ``InputError`` saying the form."""
    try:
        return tpu.parse(value).name
    except tpu.TopologyError as exc:
        raise InputError(str(exc)) from None


# --------------------------------------------------------------------------- the one list

#: The options both front ends take, in the order their help lists them.
OPTION_SPECS: tuple[OptionSpec, ...] = (
    OptionSpec(("-r", "--repeat"), f"cold runs per variant, or auto: at least {MIN_PAIRS}, then "
               f"more until the verdict is decided, up to {MAX_PAIRS} ({MAX_PAIRS_BUSY} on a "
               "busy machine) while they fit in --budget (default auto); medians are "
               "reported", repeat_count,
               "N|auto", _repeat),
    OptionSpec(("--budget",), "with -r auto, the seconds of measuring after which no further "
               f"run starts (default {CPU.budget_s:g} on a CPU, {ACCELERATOR_BUDGET_S:g} on a "
               "GPU or TPU, where one compile takes seconds)", seconds_text, "SECONDS",
               _seconds),
    OptionSpec(("-n", "--number"), "calls per steady-state timing loop "
               "(default: auto-ranged like %%timeit)", whole_text, "N", _count),
    OptionSpec(("--nest",), "add jit only to these helpers in the nested variant "
               "(default: every helper); a helper by its reported name (mylayers.dense), its "
               "last part (dense) or as your code calls it (L.dense)", str,
               "HELPER[,HELPER...]", _names),
    OptionSpec(("--mine",), "count these installed modules as your code, so their functions "
               "are helpers to nest and their lines are yours (default: a module an "
               "installed distribution provides is a library's, an editable install "
               "yours)", str, "MODULE[,MODULE...]", _modules),
    OptionSpec(("--timeout",), "stop after the stage that runs past SECONDS and show what was "
               "measured", seconds_text, "SECONDS", _seconds),
    OptionSpec(("--vmap",), "also compare jit(vmap(f)) with vmap(jit(f)) on a batch",
               check=_switch),
    OptionSpec(("--batch",), "--vmap on the call's arguments stacked N times along a new first "
               f"axis (default {DEFAULT_BATCH})", whole_text, "N", _count),
    OptionSpec(("--in-axes",), "--vmap on arguments that already are a batch, mapped as "
               "jax.vmap's in_axes (e.g. 0,None)", str, "SPEC", _axes),
    OptionSpec(("--attribute",), "time each helper during the flat variant's trace "
               "(calls, inclusive, own)", check=_switch),
    OptionSpec(("--advise",), "measure which helpers are worth their own jit: nest each alone "
               f"(needs -r {ADVISE_FEWEST}+)", check=_switch),
    OptionSpec(("--sweep",), "one comparison per value, NAME bound before the code runs "
               "(e.g. n=1,2,4,8); plots "
               "each phase against the value (log-log, with growth exponents)", str,
               "NAME=V1,V2,...", _sweep),
    OptionSpec(("--lines",), "count jaxpr equations, StableHLO ops, trace hits and Python time "
               "per source line, flat and nested (shown after the table and its causes)",
               check=_switch),
    OptionSpec(("-q", "--quiet"), "show no progress while measuring", check=_switch),
    OptionSpec(("--xla",), "after the comparison, one extra profiled cold compile per "
               "variant: where XLA spends it (each HLO pass, code generation)", check=_switch),
    OptionSpec(("--cache",), "then a second start: each variant's first call with JAX's "
               "persistent compilation cache cold, then warm (in a folder of its own; your "
               "settings and cache are left as they were)", check=_switch),
    OptionSpec(("--effort",), "then XLA's lower effort settings (backend optimization level "
               "0 and 1, JAX's effort and optimization level): the flat program's compile and "
               "call at each against the default, and after how many calls the default pays "
               "back (your config and XLA_FLAGS are left as they were)", check=_switch),
    OptionSpec(("--why",), "measure every cause of a slow first call jitmagic knows: "
               "--lines, --cache, --xla and --effort together (captured constants of 1 MiB or "
               "more are measured without it); the ranked causes follow the table",
               check=_switch),
    OptionSpec(("--target",), "compile flat and nested for a TPU slice this machine "
               "does not have (libtpu: pip install \"jitmagic[tpu]\"), never run: e.g. "
               "v5e:1x1, v5e:2x2, v5p:2x2x1; --xla and --effort read the target's compile",
               str, "TOPOLOGY", _topology),
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
    OptionSpec(("-o", "--output"), "return {result} (like %%timeit -o)",
               tools=frozenset({COMPARE, WATCH}), places=frozenset({MAGIC})),
    OptionSpec(("--no-plot",), "leave the chart out", tools=frozenset({COMPARE, WATCH}),
               places=frozenset({MAGIC})),
    OptionSpec(("--processes",), "measure in N processes on this machine, in lockstep under "
               "jax.distributed (CPU collectives through gloo); process 0 shows the report "
               "(docs/distributed.md)", int, "N", places=frozenset({COMMAND})),
)


#: The parts ``--why`` turns on: every cause of a slow first call that has an option.
WHY_PARTS = ("lines", "cache", "xla", "effort")


@dataclasses.dataclass(frozen=True)
class Options:
    """What to measure and how: the options of the magic, the command and ``compare``.

    Built from keywords or parsed options, checked on construction (``InputError``
    with what to write instead); text where a structure is meant is parsed as the
    command line parses it (``nest="a,b"``, ``in_axes="0,None"``, ``sweep="n=1,2"``).
    ``vmap`` is on whenever ``batch`` or ``in_axes`` is given, and ``lines``, ``cache``,
    ``xla`` and ``effort`` whenever ``why`` is.
    """

    repeat: int | str = AUTO
    #: None: the running backend's (:data:`jitmagic.backends.Backend.budget_s`).
    budget: float | None = None
    number: int | None = None
    nest: tuple[str, ...] | None = None
    mine: tuple[str, ...] = ()
    timeout: float | None = None
    vmap: bool = False
    batch: int | None = None
    in_axes: Any = None
    attribute: bool = False
    advise: bool = False
    sweep: tuple[str, tuple[Any, ...]] | None = None
    lines: bool = False
    xla: bool = False
    cache: bool = False
    effort: bool = False
    why: bool = False
    quiet: bool = False
    target: str | None = None

    def __post_init__(self) -> None:
        defaults = {f.name: f.default for f in dataclasses.fields(self)}
        for option in OPTION_SPECS:
            if option.name not in defaults:
                continue
            value = getattr(self, option.name)
            if value is None and defaults[option.name] is not None:  # None is not "unset"
                raise InputError(f"{option.label} takes no None: leave it out for its "
                                 f"default ({defaults[option.name]!r})")
            if value is not None and option.check:
                object.__setattr__(self, option.name, option.check(option, value))
        if self.batch is not None or self.in_axes is not None:
            object.__setattr__(self, "vmap", True)
        for name, why in tpu.REFUSED.items() if self.target else ():
            if getattr(self, name) not in (None, False):
                raise InputError(f"--target compiles without running, so it cannot take "
                                 f"--{name.replace('_', '-')}: {why}.")
        if self.why:
            for part in WHY_PARTS:
                object.__setattr__(self, part, True)
        if self.advise and self.repeat != AUTO and int(self.repeat) < ADVISE_FEWEST:
            raise InputError(f"--advise needs at least {ADVISE_FEWEST} cold runs per variant "
                             f"to tell a saving from noise: use -r auto (the default) or -r "
                             f"{ADVISE_FEWEST} or more, not -r {self.repeat}.")

    @classmethod
    def from_namespace(cls, parsed: argparse.Namespace) -> Options:
        """The options a front end's parser read (its own extras, like ``--save``, left out)."""
        return cls(**{name: getattr(parsed, name) for name in _fields()})


def split_options(kwargs: dict[str, Any],
                  options: Options | None = None) -> tuple[Options, dict[str, Any]]:
    """``compare``'s ``**kwargs`` → (``options`` updated by the option keywords, the rest).

    The rest are the entry's own keyword arguments.
    """
    names = _fields()
    for k in kwargs.keys() & FRONT_END_ONLY.keys():
        of = "the command" if k in COMMAND_ONLY else "the magic and the command"
        raise InputError(f"`{k}=` is an option of {of}, not of jitmagic's Python "
                         f"functions: {FRONT_END_ONLY[k]}.")
    chosen = {k: v for k, v in kwargs.items() if k in names}
    rest = {k: v for k, v in kwargs.items() if k not in names}
    return dataclasses.replace(options or Options(), **chosen), rest


class Keywords(NamedTuple):
    """What :func:`keywords_of` split a Python function's ``**kwargs`` into."""

    #: The :class:`Options` the option keywords chose.
    options: Options
    #: The keywords that go to the user's function.
    rest: dict[str, Any]
    #: ``baseline=``: the report to compare with (None: none given).
    baseline: str | os.PathLike | None = None


#: The keyword of jitmagic's Python functions that is no :class:`Options` field:
#: ``baseline=`` (``--baseline``) compares the result with a saved report, so only the
#: functions whose result is a report take it (``compare``, ``sweep``).
BASELINE = "baseline"


def keywords_of(function: str, kwargs: dict[str, Any], options: Options | None = None,
                takes: Iterable[str] | None = None) -> Keywords:
    """The one keyword splitter of jitmagic's Python functions: ``function``'s
    ``**kwargs`` → its :class:`Options`, its ``baseline=``, and the keywords that go to
    the user's function.

    ``takes`` lists the keywords ``function`` uses (None: every option and
    ``baseline``, as ``compare``); an option (or ``baseline=``) it does not use is
    refused with a sentence saying what does, rather than passed to the user's
    function, where it would mean something else. A keyword of the user's own that is
    spelt as an option goes in a ``functools.partial``."""
    known = {*_fields(), BASELINE}
    allowed = set(known if takes is None else takes)
    refused = [k for k in kwargs if k in known and k not in allowed]
    if refused:
        takes_what = ", ".join(f"`{k}=`" for k in sorted(allowed)) or "no options"
        raise InputError(
            f"`jitmagic.{function}` takes {takes_what}, not {_keywords(refused)}: "
            f"{'those are' if len(refused) > 1 else 'that is'} an option of "
            f"`jitmagic.compare` (write `jitmagic.compare(fn, *args, {refused[0]}=...)`). "
            f"A keyword argument of your own function spelt so goes in "
            f"`functools.partial(fn, {refused[0]}=...)`.")
    rest = dict(kwargs)
    baseline = rest.pop(BASELINE, None)
    chosen, rest = split_options(rest, options)
    return Keywords(chosen, rest, baseline)


def options_of(function: str, kwargs: dict[str, Any], options: Options | None = None,
               takes: Iterable[str] | None = None) -> tuple[Options, dict[str, Any]]:
    """:func:`keywords_of` for a function that returns no report, and so takes no
    ``baseline=`` (refused, saying so): (its :class:`Options`, the keywords that go to
    the user's function). ``takes``: the options it uses (None: all of them)."""
    found = keywords_of(function, kwargs, options,
                        takes=_fields() if takes is None else takes)
    return found.options, found.rest


def keywords_said(names: Iterable[str]) -> str:
    """A docstring's list of the keywords ``names`` (:class:`Options` fields, and
    ``baseline``), each with its command-line spelling and that option's help: so that
    ``help(jitmagic.compare)`` says every keyword the command's ``--help`` says."""
    specs = {spec.name: spec for spec in OPTION_SPECS}
    return "\n".join(textwrap.fill(f"``{name}=`` ({specs[name].label}): {specs[name].help}.",
                                   width=88, subsequent_indent="    ") for name in names)


def _keywords(names: list[str]) -> str:
    return ", ".join(f"`{k}=`" for k in names)


#: Options of the magic and the command that the Python functions do not take, with what
#: to write instead (a keyword named so would otherwise go, silently, to the user's function).
#: Those of :data:`FRONT_END_ONLY` that only the command has.
COMMAND_ONLY = ("json", "processes")
FRONT_END_ONLY = {
    "save": "call `jitmagic.save(result, path)` on the result it returns",
    "json": "call `jitmagic.save(result, path)` on the result it returns",
    "output": "the result is already returned",
    "no_plot": "nothing is drawn: `print(result)` shows the tables, a notebook cell ending "
               "in `result` the chart",
    "html": "call `jitmagic.save(result, \"report.html\")` on the result it returns",
    "processes": "measuring in several processes at once is the command line's: "
                 "`python -m jitmagic --processes 2 FILE.py` (each process runs the file)",
}


def misspelt_option(message: str) -> str | None:
    """For ``TypeError: f() got an unexpected keyword argument 'repaet'`` in ``message``:
    ``did you mean `repeat=`?`` when the keyword is close to an option's name."""
    found = re.search(r"unexpected keyword argument '(\w+)'", message)
    if found is None:
        return None
    close = difflib.get_close_matches(found[1], list(_fields()), n=1)
    return f"did you mean `{close[0]}=`? (`{found[1]}=` went to your function)" if close \
        else None


def with_option_hint(message: str, parser: argparse.ArgumentParser) -> str:
    """argparse's error ``message``, and after ``unrecognized arguments: --vamp`` a
    ``Did you mean --vmap (not --vamp)?`` and the options ``parser`` lists (those its help
    shows): the magic and the command say it alike."""
    flags = list(option_strings(parser))
    hint = unknown_option_hint(message, flags)
    return f"{message}. {hint}" if hint else message


def unknown_option_hint(message: str, flags: list[str]) -> str:
    """For argparse's ``unrecognized arguments: --vamp``: ``did you mean --vmap?`` and the
    options there are (empty where ``message`` is another error)."""
    found = re.search(r"unrecognized arguments: (.*)", message)
    if found is None:
        return ""
    hints = []
    for given in found[1].split():
        if given.startswith("-"):
            close = difflib.get_close_matches(given.split("=")[0], flags, n=1, cutoff=0.6)
            if close:
                hints.append(f"Did you mean {close[0]} (not {given})?")
    listed = ", ".join(f for f in flags if f.startswith("--"))
    return " ".join(hints) + (" " if hints else "") + f"The options are: {listed}."


def split_names(text: str) -> tuple[str, ...]:
    """``"a, b,"`` → ``("a", "b")``: the names of ``--nest`` and ``--mine``, without the
    quotes a line magic passes through (``%jitcompare --mine "mylib" f(x)``)."""
    names = (n.strip().strip("'\"").strip() for n in text.split(","))
    return tuple(n for n in names if n)


def parse_in_axes(spec: str) -> int | tuple[int | None, ...]:
    """``--in-axes`` text → ``jax.vmap``'s ``in_axes``: ``"0"`` → 0, ``"0,None"`` → (0, None)."""
    parts = [p.strip() for p in spec.split(",")]
    if spec.strip().endswith(","):
        parts = parts[:-1]
    axes: list[int | None] = []
    for p in parts:
        if p in ("None", "none", "-"):
            axes.append(None)
            continue
        try:
            axes.append(int(p))
        except ValueError:
            raise InputError(
                f"--in-axes {spec!r}: {p!r} is not an axis. Write one integer or None per "
                "positional argument, separated by commas, e.g. `--in-axes 0,None`.") from None
    if len(axes) == 1 and "," not in spec:
        if axes[0] is None:
            raise InputError("--in-axes None maps no argument: name the axis to batch along, "
                             "e.g. `--in-axes 0`.")
        return axes[0]
    return tuple(axes)


def check_sweep_name(name: Any) -> str:
    """Refuse a sweep name that is not a plain variable of the user's: not an
    identifier, a keyword, a builtin (``print``) or a dunder (``__builtins__``)."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise InputError(f"sweep: {name!r} is not a variable name: write {SWEEP_USAGE}")
    if hasattr(builtins, name) or (name.startswith("__") and name.endswith("__")):
        raise InputError(f"sweep: {name!r} is a name Python itself uses, not a variable of "
                         f"yours: sweep a name your code reads, e.g. {SWEEP_USAGE}")
    return name


def parse_sweep(spec: str) -> tuple[str, list[Any]]:
    """``"n=1,2,4"`` → ``("n", [1, 2, 4])``; values are Python literals."""
    name, sep, rest = spec.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise InputError(f"--sweep {spec!r} does not name a variable: write {SWEEP_USAGE}")
    check_sweep_name(name)
    texts = [t.strip() for t in rest.split(",") if t.strip()]
    if not texts:
        raise InputError(f"--sweep {spec!r} has no values: write {SWEEP_USAGE}")
    return name, [_literal(text) for text in texts]


def _literal(text: str) -> Any:
    """A sweep value: a number, string or bool written as a Python literal (JSON can hold it)."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = None
        ok = False
    else:
        ok = isinstance(value, int | float | str) and not (
            isinstance(value, float) and not math.isfinite(value))
    if not ok:
        raise InputError(f"--sweep value {text!r} is not a number or a quoted string: "
                         f"write {SWEEP_USAGE}")
    return value

"""What an option's value may be: the readers of its text, and the checks
:class:`~jitmagic.options.Options` runs however it was given."""

from __future__ import annotations

import argparse
import ast
import builtins
import importlib.util
import keyword
import math
import numbers
import re
from collections.abc import Callable, Iterable
from typing import Any, Protocol, cast

from ..backends import target as tpu
from ..errors import InputError
from ..usercode import STACK


class Named(Protocol):
    """What a check knows of its option: how messages name it (``-r/--repeat``)."""

    @property
    def label(self) -> str: ...

SWEEP_USAGE = "--sweep NAME=V1,V2,... (e.g. --sweep n=1,2,4,8,16)"
#: ``-r auto``: repeat until the significance rule decides (``jitmagic.measure.sampling.rounds``).
AUTO = "auto"
#: ``--advise`` compares spreads: fewer cold runs than this give none to judge by.
ADVISE_FEWEST = 3
#: ``--batch``'s default: how many times ``--vmap`` stacks the call's arguments.
DEFAULT_BATCH = 64


def count(option: Named, value: Any) -> int:
    """A whole number of at least 1 (repeats, loop calls, batch size)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"{option.label} must be a whole number, not {value!r}")
    if value < 1:
        raise InputError(f"{option.label} must be at least 1, not {value}")
    return int(value)


def _read(text: str, convert: Callable[[str], Any], expected: str) -> Any:
    """``convert(text)`` as argparse reads an option (checked later), or what was expected."""
    try:
        return convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, not {text!r}") from None


def repeat_count(text: str) -> int | str:
    """``-r``'s text as argparse reads it: ``auto`` or a whole number (checked later)."""
    if text.strip().lower() == AUTO:
        return AUTO
    return cast(int, _read(text, int, "`auto` or a whole number of cold runs (e.g. -r 5)"))


def seconds_text(text: str) -> float | int:
    """A number of seconds as argparse reads it, a whole one kept whole (echoed as written)."""
    value = cast(float, _read(text, float, "a number of seconds (e.g. 30 or 2.5)"))
    return int(value) if value.is_integer() else value


def whole_text(text: str) -> int:
    return cast(int, _read(text, int, "a whole number (e.g. 8)"))


#: A JAX release as ``--jax`` takes it: ``0.9.0`` (a pre-release ``0.9.0rc1`` too), or ``current``.
RELEASE = re.compile(r"\d+\.\d+\.\d+(\.\d+|\w+\d*)?|current")


def releases_text(text: str) -> tuple[str, ...]:
    """``--jax``'s text: distinct JAX releases separated by commas (``0.9.0,current``)."""
    given = split_names(text)
    wrong = [r for r in given if not RELEASE.fullmatch(r)]
    if wrong or not given:
        raise argparse.ArgumentTypeError(
            f"expected JAX releases separated by commas, each a version such as 0.9.0 or "
            f"`current` (your own), not {wrong[0] if wrong else text!r}")
    if len(set(given)) < len(given):
        raise argparse.ArgumentTypeError(f"each release once, not {text!r}")
    return given


def bisect_text(text: str) -> tuple[str, str]:
    """``--bisect``'s text: two releases ``A..B``, the later one a version or ``current``."""
    low, dots, high = text.partition("..")
    if not dots or not RELEASE.fullmatch(low) or low == "current" or not RELEASE.fullmatch(high):
        raise argparse.ArgumentTypeError(f"expected two JAX releases as A..B, e.g. 0.9.0..0.10.2 "
                                         f"or 0.9.0..current (your own), not {text!r}")
    return low, high


#: The most calls one steady-state timing loop ``-n N`` makes (more run for hours).
MAX_NUMBER = 10_000_000


def number(option: Named, value: Any) -> int:
    """A whole number of calls from 1 to :data:`MAX_NUMBER`."""
    calls = count(option, value)
    if calls > MAX_NUMBER:
        raise InputError(f"{option.label} is at most {MAX_NUMBER:,} calls a timing loop, not "
                         f"{calls}: leave it out to range it automatically, as %%timeit does")
    return calls


#: The most cold runs a variant ``-r N`` takes: each is a compile from cleared caches.
MAX_REPEAT = 100


def repeat(option: Named, value: Any) -> int | str:
    """``"auto"`` or a whole number from 1 to :data:`MAX_REPEAT`."""
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return AUTO
    if isinstance(value, str):  # as on the command line: "5"
        try:
            value = int(value.strip())
        except ValueError:
            raise InputError(f"{option.label} is `auto` or a whole number of cold runs "
                             f"(e.g. 5), not {value!r}") from None
    runs = count(option, value)
    if runs > MAX_REPEAT:
        raise InputError(f"{option.label} is at most {MAX_REPEAT} cold runs a variant, not "
                         f"{runs}: each is a compile from cleared caches; `auto` takes as "
                         "many as the verdict needs")
    return runs


def seconds(option: Named, value: Any) -> float:
    given = cast(float, value)  # any real number, kept as given (an int, a NumPy scalar)
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not given > 0:
        raise InputError(f"{option.label} must be a positive number of seconds, not {value!r}")
    return given


def switch(option: Named, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"{option.label} is on or off: pass True or False, not {value!r}")
    return value


def _as_names(value: Any) -> tuple[Any, ...]:
    if isinstance(value, str):
        return split_names(value)
    return tuple(value) if isinstance(value, Iterable) else (value,)


def names(option: Named, value: Any) -> tuple[str, ...]:
    """``"a, b"`` or ``["a", "b"]`` → ``("a", "b")``."""
    names = _as_names(value)
    if not all(isinstance(n, str) for n in names):
        raise InputError(f"{option.label} takes helper names, e.g. `--nest layer,norm` "
                         f"or nest=['layer', 'norm'], not {value!r}")
    if not names:
        raise InputError(f"{option.label} names no helper: write the helpers to nest, e.g. "
                         "`--nest layer,norm`, or leave --nest out to nest every helper")
    return names


def modules(option: Named, value: Any) -> tuple[str, ...]:
    """``"mylib, other"`` → ``("mylib", "other")``: importable modules, none of JAX's stack."""
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
        if name == "__main__":
            raise InputError(f"{option.label} cannot take `__main__`: the cell's or script's "
                             "own code is yours already; name the modules it imports whose "
                             "code is yours too (`import mylib.nn` → --mine mylib)")
        if not _importable(name):
            raise InputError(f"{option.label} names `{name}`, which Python cannot import "
                             "here: write the top-level module your code imports (`import "
                             "mylib.nn` → --mine mylib)")
    return names


def _importable(name: str) -> bool:
    """Whether Python finds the module ``name`` here (one loaded without a spec: no)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # ValueError: in sys.modules, its __spec__ None
        return False


def axes(option: Named, value: Any) -> Any:
    return parse_in_axes(value) if isinstance(value, str) else value


def sweep(option: Named, value: Any) -> tuple[str, tuple[Any, ...]]:
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


def topology(option: Named, value: Any) -> str:
    """A TPU topology libtpu takes (``v5e:2x2``), else an ``InputError`` saying what to write."""
    try:
        name = tpu.parse(value).name
    except tpu.TopologyError as exc:
        raise InputError(str(exc)) from None
    if not tpu.libtpu_installed():
        raise InputError(tpu.no_libtpu(name))
    return name


def split_names(text: str) -> tuple[str, ...]:
    """``"a, b,"`` → ``("a", "b")``, without the quotes a line magic passes through."""
    names = (n.strip().strip("'\"").strip() for n in text.split(","))
    return tuple(n for n in names if n)


def parse_in_axes(spec: str) -> int | tuple[int | None, ...]:
    """``--in-axes`` text → ``jax.vmap``'s ``in_axes``: ``"0"`` → 0, ``"0,None"`` → (0, None)."""
    axes: list[int | None] = []
    for p in (p.strip() for p in spec.strip().removesuffix(",").split(",")):
        try:
            axes.append(None if p in ("None", "none", "-") else int(p))
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
    """Refuse a sweep name that is no plain variable (a keyword, a builtin, a dunder)."""
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
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = None
    if not isinstance(value, int | float | str) or (isinstance(value, float)
                                                    and not math.isfinite(value)):
        raise InputError(f"--sweep value {text!r} is not a number or a quoted string: "
                         f"write {SWEEP_USAGE}")
    return value

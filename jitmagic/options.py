"""The options every front end takes: checked and parsed in one place."""

from __future__ import annotations

import ast
import math
from typing import Any

from .errors import InputError

SWEEP_USAGE = "--sweep NAME=V1,V2,... (e.g. --sweep n=1,2,4,8,16)"


def check_options(repeat: int, number: int | None = None, timeout: float | None = None) -> None:
    """Refuse loop counts and time limits no measurement can run with, before any runs."""
    if repeat < 1:
        raise InputError(f"-r/--repeat must be at least 1, not {repeat}")
    if number is not None and number < 1:
        raise InputError(f"-n/--number must be at least 1, not {number}")
    if timeout is not None and not timeout > 0:
        raise InputError(f"--timeout must be a positive number of seconds, not {timeout}")


def split_names(text: str) -> tuple[str, ...]:
    """``"a, b,"`` → ``("a", "b")``: the helper list of ``--nest``."""
    return tuple(n.strip() for n in text.split(",") if n.strip())



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


def parse_sweep(spec: str) -> tuple[str, list[Any]]:
    """``"n=1,2,4"`` → ``("n", [1, 2, 4])``; values are Python literals."""
    name, sep, rest = spec.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise InputError(f"--sweep {spec!r} does not name a variable: write {SWEEP_USAGE}")
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

"""Provenance for every front end (what was measured, how, when, by which jitmagic) and
``--baseline``'s diff."""

from __future__ import annotations

import dataclasses
import datetime
import inspect
import os
import shlex
import sys
from typing import Any

from ..errors import InputError
from ..model.comparison import Comparison
from ..model.diff import diff
from ..model.reports.storage import as_comparison
from ..model.saved.schema import ReportSchemaError
from ..model.sweep import Sweep
from ..options import Options
from ..options.table import OPTION_SPECS


def spell(options: Options, **extra: Any) -> str:
    """``options`` as the command line writes them (``-r 3 --nest layer``), ``extra`` by name."""
    default = Options()
    words: list[str] = []
    for spec in OPTION_SPECS:
        value = getattr(options, spec.name, None) if hasattr(options, spec.name) \
            else extra.get(spec.name)
        if value is None or value == getattr(default, spec.name, None) or value is False:
            continue
        words += [spec.flags[0]] if value is True else [spec.flags[0], _word(value)]
    return shlex.join(words)


def _word(value: Any) -> str:
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], tuple) \
            and isinstance(value[0], str):
        return f"{value[0]}={','.join(map(repr, value[1]))}"
    if isinstance(value, tuple | list):
        return ",".join("None" if v is None else str(v) for v in value)
    return str(value)


def entry_source(fn: Any) -> str | None:
    """The entry's source (its wrapped function's, or its class's); None where there is none."""
    target = inspect.unwrap(getattr(fn, "func", fn)) if callable(fn) else fn
    for candidate in (target, type(target)):  # a callable object: its class's source
        try:
            return inspect.getsource(candidate)
        except (OSError, TypeError):
            continue
    return None


def stamp(result: Comparison | Sweep, *, source: str | None, options: str,
          file: str | None = None) -> Comparison | Sweep:
    """``result`` with its provenance recorded (``env["jitmagic"]`` on every point of a sweep)."""
    created = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    version = str(sys.modules[__name__.split(".")[0]].__version__)  # imported: else a cycle

    def versioned(c: Comparison) -> Comparison:
        return dataclasses.replace(c, env={**c.env, "jitmagic": version})

    if isinstance(result, Sweep):
        return dataclasses.replace(result, points=tuple(map(versioned, result.points)),
                                   source=source, file=file, options=options, created=created)
    return dataclasses.replace(versioned(result), source=source, file=file, options=options,
                               created=created)


def read_baseline(path: str | os.PathLike | None) -> Comparison | None:
    """The report ``--baseline`` names (None: none), else an ``InputError`` saying why."""
    if path is None:
        return None
    try:
        return as_comparison(os.fspath(path))
    except (OSError, ReportSchemaError) as exc:  # an OSError's message alone: "no such file"
        said = getattr(exc, "strerror", None) or exc
        raise InputError(f"--baseline {os.fspath(path)}: {said}") from None


def with_baseline(result: Comparison | Sweep, old: Comparison | None) -> Comparison | Sweep:
    """``result`` showing its diff against ``old`` (a sweep: its last point's)."""
    if old is None:
        return result
    target = result.last if isinstance(result, Sweep) else result
    return dataclasses.replace(result, baseline=diff(old, target, force=True))

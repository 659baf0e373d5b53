"""Saved reports: ``--save`` writes a record's JSON, ``jitmagic.load`` reads it back
trusting nothing; and the one door to a diff of two records or saved reports."""

from __future__ import annotations

import json
import math
import os
from typing import Any

from ..comparison import READABLE, SCHEMA, Comparison
from ..diff import Diff, comparison_only, diff
from ..ledger import Ledger, LedgerDiff, is_saved_ledger, ledger_diff
from ..lines import Lines, is_saved_lines
from ..rows import PHASES
from ..saved import files, schema
from ..stats.units import cut_to
from ..sweep import SCHEMA as SWEEP_SCHEMA
from ..sweep import SWEEP_READABLE, Sweep

MAX_BYTES = files.MAX_BYTES
#: Reading a report's records stops after this many seconds (a sweep of 100 values: 0.1 s).
MAX_READ_S = 10.0


def save(c: Comparison | Sweep | Lines | Ledger, path: str | os.PathLike) -> None:
    """Write ``c.to_dict()`` as JSON (non-finite numbers as ``null``), whole or not at all."""
    data = json.dumps(_finite(c.to_dict()), indent=1, allow_nan=False)
    files.write_text(path, data)


def load(path: str | os.PathLike) -> Comparison | Sweep | Lines | Ledger:
    """Read a report written by :func:`save`; ``ReportSchemaError`` naming the file else."""
    name = os.fsdecode(os.fspath(path))
    try:
        raw = files.read_bytes(files.expand(path), MAX_BYTES)
    except ValueError as exc:  # not a regular file, too large, a ~user with no such user
        raise schema.ReportSchemaError(str(exc)) from None
    try:
        text = raw.decode("utf-8-sig")
        data = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError too
        raise schema.ReportSchemaError(f"{name} is not a jitmagic report: it is not JSON "
                                f"({_short(exc)})") from None
    try:
        clean = schema.printable_tree(data) if schema.needs_printable(text) else data
        with schema.time_limit(MAX_READ_S):
            if is_saved_lines(data):
                return Lines.from_dict(clean)
            if is_saved_ledger(data):
                return Ledger.from_dict(clean)
            _check_schema(data)
            sweep = data.get("schema") in SWEEP_READABLE or data.get("sweep") is not None
            result = (Sweep if sweep else Comparison).from_dict(clean)
        _check_statistics(result)
        return result
    except schema.ReportSchemaError as exc:
        raise schema.ReportSchemaError(f"{name}: {exc}") from None
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError,
            OverflowError) as exc:  # a check this version lacks: still the report's fault
        raise schema.ReportSchemaError(f"{name}: not a report this jitmagic reads "
                                f"({type(exc).__name__}: {_short(exc)})") from None


def _check_schema(data: Any) -> None:
    """A schema this jitmagic does not read, said plainly (a newer jitmagic's, or else)."""
    given = data.get("schema") if isinstance(data, dict) else None
    if given in (*READABLE, *SWEEP_READABLE):
        return
    versions = ", ".join("/" + r.rsplit("/", 1)[1] for r in READABLE)
    sweeps = ", ".join("/" + r.rsplit("/", 1)[1] for r in SWEEP_READABLE)
    reads = (f"this jitmagic writes {SCHEMA!r} and reads {versions} (sweeps: writes "
             f"{SWEEP_SCHEMA!r} and reads {sweeps})")
    if schema.newer(given, SCHEMA) or schema.newer(given, SWEEP_SCHEMA):
        raise schema.ReportSchemaError(f"written by a newer jitmagic (schema {given!r}): "
                                       f"{reads}; upgrade jitmagic to read it")
    if given is None:  # no schema at all: some other JSON
        raise schema.ReportSchemaError("not a jitmagic report (it has no \"schema\" field): "
                                       "give a file that --save or jitmagic.save wrote")
    raise schema.ReportSchemaError(f"cannot read a report with schema {_describe(given)}: "
                                   f"{reads}")


def _describe(value: Any) -> str:
    """``value`` as a message shows it: a string clipped, a container by its type."""
    if isinstance(value, str):
        return repr(schema.clipped(value))
    if value is None or isinstance(value, bool | int | float):
        return schema.clipped(repr(value))
    return f"a {type(value).__name__}"


def _check_statistics(result: Comparison | Sweep) -> None:
    """Derive every phase's verdict once: samples no clock could give fail here."""
    points = result.points if isinstance(result, Sweep) else (result,)
    for i, point in enumerate(points):
        for phase in PHASES:
            try:
                point.difference(phase)
            except (OverflowError, ValueError, ZeroDivisionError):
                at = f"points[{i}]." if isinstance(result, Sweep) else ""
                raise schema.ReportSchemaError(
                    f"{at}variants.*.samples.{phase}: the samples are too far apart to be "
                    "compared (times from different clocks?)") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows (write null for 'not measured')")


def _finite(x: Any) -> Any:
    """``x`` with every NaN or infinity replaced by ``None`` (JSON's null)."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite(v) for v in x]
    return x


def _short(exc: BaseException) -> str:
    """What ``exc`` says, cut to 200 characters (a decoder can quote the whole file)."""
    return cut_to(str(exc), 200)


def loaded(r: Any) -> Any:
    """``r`` itself, or the record saved at the path ``r``."""
    return load(r) if isinstance(r, str | os.PathLike) else r


def as_comparison(r: Any) -> Comparison:
    """``r`` itself, or the comparison saved at the path ``r``."""
    return comparison_only(loaded(r))


def diff_any(old: Any, new: Any, *, force: bool = False) -> Diff | LedgerDiff:
    """``jitmagic.diff``: two ledgers give their ``LedgerDiff``, two comparisons their ``Diff``."""
    old, new = loaded(old), loaded(new)
    if isinstance(old, Ledger) and isinstance(new, Ledger):
        return ledger_diff(old, new)
    if isinstance(old, Ledger) or isinstance(new, Ledger):
        raise schema.ReportSchemaError("diff compares two ledgers or two comparisons, not a "
                                       "ledger with a comparison")
    return diff(old, new, force=force)

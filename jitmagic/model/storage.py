"""Saved reports: ``--save`` writes a result's JSON, ``jitmagic.load`` reads it back.

A loaded report is the same :class:`~jitmagic.result.Comparison` the magic
returned: it displays the same chart and tables without re-running anything,
and its ``to_dict()`` equals what was saved.
"""

from __future__ import annotations

import json
import os

from .comparison import Comparison, ReportSchemaError


def save(c: Comparison, path: str | os.PathLike) -> None:
    """Write ``c.to_dict()`` as JSON (``null`` for numbers that were not measured)."""
    with open(path, "w") as f:
        json.dump(c.to_dict(), f, indent=1, allow_nan=False)


def load(path: str | os.PathLike) -> Comparison:
    """Read a report written by ``--save`` (magic or command) or :func:`save`.

    Raises ``ReportSchemaError`` (naming the schema found) for a file that is not
    a report this version reads.
    """
    with open(path) as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as exc:
            raise ReportSchemaError(f"{os.fspath(path)} is not a jitmagic report: it is not "
                                    f"JSON ({exc})") from None
    try:
        return Comparison.from_dict(data)
    except ReportSchemaError as exc:
        raise ReportSchemaError(f"{os.fspath(path)}: {exc}") from None
    except (KeyError, TypeError, AttributeError) as exc:
        raise ReportSchemaError(f"{os.fspath(path)} says schema {data.get('schema')!r} but "
                                f"is not a complete report (missing or malformed {exc})") from None

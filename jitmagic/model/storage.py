"""Saved reports: ``--save`` writes a result's JSON, ``jitmagic.load`` reads it back.

A loaded report is the same record the magic returned (a
:class:`~jitmagic.model.comparison.Comparison`, a :class:`~jitmagic.model.sweep.Sweep`,
or the :class:`~jitmagic.model.lines.Lines` table ``jitmagic.lines`` returns):
it displays the same chart and tables without re-running
anything, and its ``to_dict()`` equals what was saved.

Loading trusts nothing: every decoding failure, whatever raised it, becomes a
``ReportSchemaError`` that names the file (and the field). Saving never leaves a
half-written file: the whole JSON text is built first, written beside the
target and moved over it in one step.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from .comparison import READABLE, Comparison, ReportSchemaError
from .lines import Lines, checked_lines, is_saved_lines
from .sweep import SCHEMA as SWEEP_SCHEMA
from .sweep import Sweep

#: Files larger than this are refused unread: a report is kilobytes, a sweep a few megabytes.
MAX_BYTES = 50 * 1024 * 1024


def check_save_path(path: str | os.PathLike) -> Path:
    """``path`` as an absolute path a report can be saved to (``~`` expanded).

    Called when the options are parsed, before anything is measured (the cell may
    change the working directory). ``ValueError`` for a directory, a folder that
    does not exist, or one this process cannot write to.
    """
    target = Path(path).expanduser().absolute()
    if target.is_dir():
        raise ValueError(f"cannot save to {target}: it is a folder; give a file name, "
                         f"e.g. {target / 'report.json'}")
    folder = target.parent
    if not folder.is_dir():
        raise ValueError(f"cannot save to {target}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"cannot save to {target}: the folder {folder} is not writable")
    return target


def save(c: Comparison | Sweep | Lines, path: str | os.PathLike) -> None:
    """Write ``c.to_dict()`` as JSON (``null`` for numbers that were not measured or not finite).

    The file is replaced whole or not at all: a failure while building the text
    leaves an existing file as it was.
    """
    data = json.dumps(_finite(c.to_dict()), indent=1, allow_nan=False)
    target = Path(os.path.realpath(Path(path).expanduser()))  # a symlink's target, not the link
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def load(path: str | os.PathLike) -> Comparison | Sweep | Lines:
    """Read a report written by ``--save`` (magic or command) or :func:`save`.

    Raises ``ReportSchemaError`` (naming the file and the schema or field at fault)
    for anything that is not a report this version reads.
    """
    name = os.fspath(path)
    if os.path.isdir(path):
        raise ReportSchemaError(f"{name} is a folder, not a report: give the path of a .json "
                                "file written by --save or jitmagic.save")
    if not os.path.exists(path):
        raise FileNotFoundError(f"no report at {name}: no such file")
    if os.path.getsize(path) > MAX_BYTES:
        raise ReportSchemaError(f"{name} is {os.path.getsize(path) / 2**20:.0f} MB: larger than "
                                f"any jitmagic report ({MAX_BYTES // 2**20} MB at most); not read")
    with open(path, "rb") as f:
        raw = f.read(MAX_BYTES + 1)
    try:
        data = json.loads(raw.decode("utf-8-sig"), parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError too
        raise ReportSchemaError(f"{name} is not a jitmagic report: it is not JSON "
                                f"({_short(exc)})") from None
    try:
        if is_saved_lines(data):
            return checked_lines(data, "lines")
        if isinstance(data, dict) and (data.get("schema") == SWEEP_SCHEMA or (
                data.get("schema") in READABLE and data.get("sweep") is not None)):
            return Sweep.from_dict(data)
        return Comparison.from_dict(data)
    except ReportSchemaError as exc:
        raise ReportSchemaError(f"{name}: {exc}") from None
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError,
            OverflowError) as exc:  # a check this version lacks: still the report's fault
        raise ReportSchemaError(f"{name}: not a report this jitmagic reads "
                                f"({type(exc).__name__}: {_short(exc)})") from None


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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _short(exc: BaseException, width: int = 200) -> str:
    text = str(exc)
    return text if len(text) <= width else text[:width - 1] + "…"

"""Where the front ends write reports: checked before anything is measured, and
written without a traceback when the disk says no.

A path is made absolute when the options are read (``~`` expanded): the cell
or script may change the working folder before the report is written.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ..errors import CannotWriteError
from ..model.storage import check_save_path


def checked_path(path: str | os.PathLike | None, option: str) -> str | None:
    """``path`` absolute, ``~`` expanded, after checking a report can be written there
    (``None`` stays ``None``); ``CannotWriteError`` naming ``option`` if not."""
    if path is None:
        return None
    try:
        return os.fspath(check_save_path(path))
    except (OSError, ValueError) as exc:
        raise CannotWriteError(f"{option} {path}: {exc}") from None


def write_report(write: Callable[[str], object], path: str, option: str) -> None:
    """``write(path)``, with a failure (disk full, folder removed meanwhile) turned
    into ``CannotWriteError`` naming ``option``."""
    try:
        write(path)
    except (OSError, ValueError) as exc:
        raise CannotWriteError(f"cannot write {option} {path}: {exc}") from None

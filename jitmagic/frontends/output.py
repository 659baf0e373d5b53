"""Where the front ends write reports: checked before anything is measured, and
written without a traceback when the disk says no.

A path is made absolute when the options are read (``~`` expanded): the cell
or script may change the working folder before the report is written.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ..errors import CannotWriteError

try:  # the records' own check, where this version has it
    from ..model.storage import check_save_path
except ImportError:  # pragma: no cover - the fallback until model/storage.py has it
    def check_save_path(path: str | os.PathLike) -> None:
        """Raise ``ValueError`` saying why ``path`` cannot be written as a report file."""
        path = os.fspath(path)
        folder = os.path.dirname(path) or "."
        if os.path.isdir(path):
            raise ValueError("it is a folder: give a file name in it, e.g. "
                             f"{os.path.join(path, 'report.json')}")
        if not os.path.isdir(folder):
            raise ValueError(f"the folder {folder} does not exist: create it first, or give "
                             "a path in an existing folder")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise ValueError(f"the folder {folder} is not writable: give a path in a "
                             "folder you can write to")
        if os.path.exists(path) and not os.access(path, os.W_OK):
            raise ValueError("the file exists and is read-only: give another path")


def checked_path(path: str | os.PathLike | None, option: str) -> str | None:
    """``path`` absolute, ``~`` expanded, after checking a report can be written there
    (``None`` stays ``None``); ``CannotWriteError`` naming ``option`` if not."""
    if path is None:
        return None
    full = os.path.abspath(os.path.expanduser(os.fspath(path)))
    try:
        check_save_path(full)
    except (OSError, ValueError) as exc:
        raise CannotWriteError(f"cannot write {option} {path}: {exc}") from None
    return full


def write_report(write: Callable[[str], object], path: str, option: str) -> None:
    """``write(path)``, with a failure (disk full, folder removed meanwhile) turned
    into ``CannotWriteError`` naming ``option``."""
    try:
        write(path)
    except (OSError, ValueError) as exc:
        raise CannotWriteError(f"cannot write {option} {path}: {exc}") from None

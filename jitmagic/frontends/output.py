"""Where the front ends write reports: checked before anything is measured, and
written without a traceback when the disk says no.

A path is made absolute when the options are read (``~`` and ``~user`` expanded):
the cell or script may change the working folder before the report is written.
Only a regular file, or a new one, is written (:mod:`jitmagic.model.saved.files`): a
FIFO, a device (``/dev/null``, ``/dev/stdout``), a socket or a folder is refused
up front, naming the path as it was given.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ..errors import CannotWriteError
from ..errors import InputError
from ..model.saved.files import check_target

#: The quotes a shell would take off a word (IPython leaves them on a magic's arguments).
QUOTES = ("'", '"')


def unquoted(value: str | None) -> str | None:
    """``value`` without the one pair of quotes around it (``"my report.json"``), as a
    shell would read it; anything else as it is."""
    if value and len(value) >= 2 and value[0] == value[-1] and value[0] in QUOTES:
        return value[1:-1]
    return value


def checked_path(path: str | os.PathLike | None, option: str) -> str | None:
    """``path`` absolute, ``~`` expanded, after checking a report can be written there
    (``None`` stays ``None``); ``CannotWriteError`` naming ``option`` if not."""
    if path is None:
        return None
    try:
        return os.fspath(check_target(path))
    except (OSError, ValueError) as exc:
        raise CannotWriteError(f"{option} {os.fspath(path)}: {exc}") from None


def distinct(paths: dict[str, str | None]) -> None:
    """``InputError`` where two of ``paths`` (the script, ``--save``, ``--html``,
    ``--baseline``) name the same file: a report would overwrite the other one, the
    baseline or the script itself."""
    seen: dict[str, str] = {}
    for option, path in paths.items():
        if path is None:
            continue
        real = os.path.realpath(os.path.expanduser(path))
        if real in seen:
            raise InputError(f"{seen[real]} and {option} name the same file, {path}: give "
                             "each its own file, e.g. --save report.json --html report.html")
        seen[real] = option


def write_report(write: Callable[[str], object], path: str, option: str) -> None:
    """``write(path)``, with a failure (disk full, folder removed meanwhile) turned
    into ``CannotWriteError`` naming ``option``."""
    try:
        write(path)
    except (OSError, ValueError) as exc:
        raise CannotWriteError(f"cannot write {option} {path}: {_reason(exc)}") from None


def _reason(exc: OSError | ValueError) -> str:
    """Why a write failed (``[Errno 28] No space left on device``), without a file name:
    the message names the target already, and never a temporary file."""
    if isinstance(exc, OSError) and exc.strerror:
        return str(OSError(exc.errno, exc.strerror))
    return str(exc)


#: The file each option writes, by its ending: ``--html page.json`` wrote JSON.
ENDINGS = {"--save": ".json", "--html": ".html", "--trace": ".json"}


def check_endings(paths: dict[str, str | None], named: str = "report") -> None:
    """``InputError`` where a path given to ``--save`` or ``--html`` does not end as the
    file it writes does (checked before the run: a ledger or a measurement made is never
    lost to it). The watch and the comparison's command refuse alike, each example
    ``named`` for what it writes ("report", "ledger")."""
    for option, path in paths.items():
        ending = ENDINGS.get(option)
        if path is not None and ending and not path.lower().endswith(ending):
            raise InputError(f"{option} writes a{'n HTML page' if ending == '.html' else ' JSON'}"
                             f" file: give it a path ending in {ending} (got {path!r}), e.g. "
                             f"{option} {named}{ending}")

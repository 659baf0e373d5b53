"""Where the front ends write reports: checked before anything is measured, and written without a
traceback."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..errors import CannotWriteError
from ..errors import InputError
from ..model.saved.files import check_target

#: The quotes a shell would take off a word (IPython leaves them on a magic's arguments).
QUOTES = ("'", '"')


def unquoted(value: str | None) -> str | None:
    """``value`` without one pair of quotes around it, as a shell reads it."""
    if value and len(value) >= 2 and value[0] == value[-1] and value[0] in QUOTES:
        return value[1:-1]
    return value


def checked_path(path: str | os.PathLike | None, option: str) -> str | None:
    """``path`` absolute, once a report can be written there; else ``CannotWriteError``."""
    if path is None:
        return None
    try:
        return os.fspath(check_target(path))
    except (OSError, ValueError) as exc:
        raise CannotWriteError(f"{option} {os.fspath(path)}: {exc}") from None


def checked_reports(args: Any, script: str | None = None) -> None:
    """``--save``, ``--html`` and ``--trace`` checked writable, and no two reports one file."""
    args.save, args.html = checked_path(args.save, "--save"), checked_path(args.html, "--html")
    args.trace = checked_path(args.trace, "--trace")
    distinct({"the script": script, "--save": args.save, "--html": args.html,
              "--trace": args.trace})
    distinct({"--baseline": args.baseline, "--html": args.html})


def distinct(paths: dict[str, str | None]) -> None:
    """``InputError`` where two of ``paths`` name one file (a report would overwrite the other)."""
    seen: dict[str, str] = {}
    for option, path in paths.items():
        if path is None:
            continue
        real = os.path.realpath(os.path.expanduser(path))
        if real in seen:
            raise InputError(f"{seen[real]} and {option} name the same file, {path}: give "
                             "each its own file, e.g. --save report.json --html report.html")
        seen[real] = option


def write_report(write: Callable[[str], object], path: str, option: str) -> bool:
    """``write(path)``, then True; a failure (disk full, folder gone) a ``CannotWriteError``."""
    try:
        write(path)
    except (OSError, ValueError) as exc:
        raise CannotWriteError(f"cannot write {option} {path}: {_reason(exc)}") from None
    return True


def _reason(exc: OSError | ValueError) -> str:
    """Why a write failed (``[Errno 28] No space left on device``), with no file name."""
    if isinstance(exc, OSError) and exc.strerror:
        return str(OSError(exc.errno, exc.strerror))
    return str(exc)


#: The file each option writes, by its ending: ``--html page.json`` wrote JSON.
ENDINGS = {"--save": ".json", "--html": ".html", "--trace": ".json"}


def check_endings(paths: dict[str, str | None], named: str = "report") -> None:
    """``InputError`` where a ``--save``/``--html`` path does not end as its file."""
    for option, path in paths.items():
        ending = ENDINGS.get(option)
        if path is not None and ending and not path.lower().endswith(ending):
            raise InputError(f"{option} writes a{'n HTML page' if ending == '.html' else ' JSON'}"
                             f" file: give it a path ending in {ending} (got {path!r}), e.g. "
                             f"{option} {named}{ending}")

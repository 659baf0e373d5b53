"""Folders of jitmagic's own in the temp folder, removed on every way out (Ctrl-C too); each holds
a :data:`MARK` so that the next one made removes those of processes now gone."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil

from ..interrupts import interrupts_held

#: The file inside each scratch folder that says it is jitmagic's, naming the process.
MARK = ".jitmagic-scratch"


class ScratchFolderError(OSError):
    """The scratch folder could not be made; the message says where, why, and what to do."""

    def __init__(self, kind: str, exc: OSError) -> None:
        where = tempfile.tempdir or os.environ.get("TMPDIR") or "the temp folder"
        super().__init__(
            f"jitmagic could not make its scratch folder for the {kind} in {where!r} "
            f"({type(exc).__name__}: {exc}): start Python with TMPDIR set to a folder you "
            f"can write to (in a running kernel: `import tempfile; tempfile.tempdir = "
            f"'/tmp'`), then run it again")


@contextlib.contextmanager
def scratch_folder(kind: str) -> Iterator[Path]:
    """A new folder ``jitmagic-<kind>-<pid>-*``, removed after the block however it ends."""
    folder: Path | None = None
    try:
        with interrupts_held():  # made and marked whole: a Ctrl-C comes after
            folder = _made(kind)
        yield folder
    finally:
        if folder is not None:
            with interrupts_held():
                shutil.rmtree(folder, ignore_errors=True)


#: What each scratch folder is for, as the error names it.
_FOR = {"cache": "second start's cache", "xla": "profiled XLA compile",
        "child": "child process's files"}


def _made(kind: str) -> Path:
    """A new marked folder, after removing those a killed process left."""
    folder: Path | None = None
    try:
        remove_left_behind(kind)
        folder = Path(tempfile.mkdtemp(prefix=f"jitmagic-{kind}-{os.getpid()}-"))
        (folder / MARK).write_text(str(os.getpid()))
    except OSError as exc:  # gettempdir's FileNotFoundError: no usable temp folder
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise ScratchFolderError(_FOR.get(kind, kind), exc) from None
    return folder


def remove_left_behind(kind: str) -> list[Path]:
    """Remove (and return) the ``jitmagic-<kind>-*`` folders a process now gone made."""
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"jitmagic-{kind}-*-*"):
        pid = _maker(folder)
        if pid is not None and pid != os.getpid() and not _running(pid):
            with interrupts_held():
                shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _maker(folder: Path) -> int | None:
    """The process that made ``folder``; None where it is not this user's scratch folder."""
    try:
        if folder.is_symlink() or folder.stat().st_uid != os.getuid():
            return None
        pid = int((folder / MARK).read_text())
    except (OSError, ValueError):
        return None
    return pid if folder.name.split("-")[2:3] == [str(pid)] else None


def _running(pid: int) -> bool:
    """Whether a process ``pid`` runs (one of another user's counts; a zombie, ended and
    not yet reaped, as of a killed command's child where no init reaps it, does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:  # AccessDenied: it exists, another user's
        return True

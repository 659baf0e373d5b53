"""The files reports go to and come from: regular files only, written whole or not at all,
read at most :data:`MAX_BYTES` and never blocking; every error names the target."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

#: Files larger than this are refused unread: a report is kilobytes, a sweep a few megabytes.
MAX_BYTES = 64 * 1024 * 1024

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def expand(path: str | os.PathLike) -> str:
    """``path`` with a leading ``~`` or ``~user`` expanded; ``ValueError`` where it cannot be."""
    text = os.fsdecode(os.fspath(path))
    if not text.startswith("~"):
        return text
    expanded = os.path.expanduser(text)
    if expanded.startswith("~"):
        user = text[1:].split(os.sep, 1)[0]
        who = f"no user named {user!r}" if user else "no home folder (HOME is not set)"
        raise ValueError(f"cannot expand {text.split(os.sep, 1)[0]} in {text}: there is "
                         f"{who}; write the folder in full, e.g. /home/{user or 'me'}/report.json")
    return expanded


def kind_of(mode: int) -> str | None:
    """What a file of this ``st_mode`` is, when it is not a regular file (None if it is)."""
    return next((name for test, name in _KINDS if test(mode)), None)


def check_target(path: str | os.PathLike) -> Path:
    """``path`` as an absolute path a report can be written to; ``ValueError`` naming it else."""
    target = Path(expand(path)).absolute()
    _check_kind(target)
    real = Path(os.path.realpath(target))
    _check_not_special(target, real)
    if real.exists() and not os.access(real, os.W_OK):
        raise ValueError(f"cannot save to {target}: the file is read-only; give another name "
                         "or make it writable")
    folder = real.parent
    if not folder.is_dir():
        raise ValueError(f"cannot save to {target}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"cannot save to {target}: the folder {folder} is not writable")
    return target


#: Folders of the system's own files (``/dev/stdout`` can be a regular file).
SPECIAL = (Path("/dev"), Path("/proc"), Path("/sys"))


def _check_not_special(target: Path, real: Path) -> None:
    """``ValueError`` for a path in (or through) ``/dev``, ``/proc`` or ``/sys``."""
    for p in (target, real):
        if any(p == folder or folder in p.parents for folder in SPECIAL):
            raise ValueError(f"cannot save to {target}: it is a system path ({p.parts[1]}), "
                             "not a regular file; give the path of a file, e.g. report.json "
                             "(the command prints the report itself)")


def _check_kind(target: Path) -> None:
    """``ValueError`` unless ``target`` (a symlink's target) is a regular file or absent."""
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ValueError(f"cannot save to {target}: {exc.strerror}") from None
    kind = kind_of(mode)
    if kind == "a folder":
        raise ValueError(f"cannot save to {target}: it is a folder; give a file name, "
                         f"e.g. {target / 'report.json'}")
    if kind:
        raise ValueError(f"cannot save to {target}: it is {kind}, not a regular file; give "
                         "the path of a file, e.g. report.json (a report is never written "
                         "to a pipe or a device)")


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (in place where it has other hard links)."""
    target = check_target(path)
    real = os.path.realpath(target)
    data = text.encode("utf-8")
    try:
        old = os.stat(real)
    except FileNotFoundError:
        old = None
    try:
        if old is not None and old.st_nlink > 1:
            _write_in_place(real, data, old)
        else:
            _replace(real, data, old)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(target)) from None


def _replace(real: str, data: bytes, old: os.stat_result | None) -> None:
    """Write beside ``real``, then move over it: readers see the old file or the new one."""
    folder, name = os.path.split(real)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if old is None:
            mask = os.umask(0)  # the only way to read it is to set it
            os.umask(mask)
            os.chmod(tmp, 0o666 & ~mask)
        else:
            os.chmod(tmp, stat.S_IMODE(old.st_mode))
            with contextlib.suppress(OSError):  # only root may give a file away
                os.chown(tmp, old.st_uid, old.st_gid)
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_in_place(real: str, data: bytes, old: os.stat_result) -> None:
    """Overwrite the file every hard link shares; refuse if it is no longer ``old``."""
    fd = os.open(real, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "wb") as f:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (old.st_dev, old.st_ino) or not stat.S_ISREG(now.st_mode):
            raise OSError(errno.ESTALE, "the file changed while it was being saved")
        _reserve(fd, len(data))
        f.write(data)
        f.truncate(len(data))
        f.flush()
        os.fsync(fd)


def _reserve(fd: int, size: int) -> None:
    """Room for ``size`` bytes before the old text is overwritten: a full disk fails here."""
    try:
        os.posix_fallocate(fd, 0, max(size, 1))
    except AttributeError:  # not on this platform
        pass
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            raise


def read_bytes(path: str | os.PathLike, limit: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit``; ``ValueError`` else."""
    name = os.fsdecode(os.fspath(path))
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, f"no report at {name}: no such file",
                                name) from None
    _check_readable_kind(name, mode)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        _check_readable_kind(name, st.st_mode)  # it could have changed since the stat
        if st.st_size > limit:
            raise ValueError(_too_large(name, st.st_size, limit))
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(_too_large(name, len(data), limit))
    return data


def _check_readable_kind(name: str, mode: int) -> None:
    kind = kind_of(mode)
    if kind == "a folder":
        raise ValueError(f"{name} is a folder, not a report: give the path of a .json "
                         "file written by --save or jitmagic.save")
    if kind:
        raise ValueError(f"{name} is {kind}, not a report: only a regular file written by "
                         "--save or jitmagic.save is read")


def _too_large(name: str, size: int, limit: int) -> str:
    return (f"{name} is {_amount(size)}: larger than any jitmagic report "
            f"({_amount(limit)} at most, {limit:,} bytes); not read")


def _amount(size: int) -> str:
    """``65 MiB`` for whole mebibytes, else the bytes (never rounded to the limit's own)."""
    return f"{size // 2**20} MiB" if size and size % 2**20 == 0 else f"{size:,} bytes"

"""A Python environment per JAX release, for ``--jax 0.9.0,0.10.2``: made once (``uv``, else venv
and pip) in the user's cache folder; one without its :data:`READY` file is made again."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..model.reports.releases import NotInstalled

#: The release that is the user's own Python and JAX.
CURRENT = "current"
#: The oldest JAX jitmagic runs under (its measurement runs in the release's Python).
OLDEST = "0.7.0"
#: What each environment holds besides jax and jaxlib (numpy comes with them).
PACKAGES = ("psutil",)
#: The file an environment holds once its install has finished.
READY = "jitmagic-ready"
#: Seconds an install may take before it is given up.
INSTALL_S = 900.0


@dataclass(frozen=True)
class Environment:
    """A release's Python: its interpreter and folder (None: this process's own)."""

    release: str
    python: str | None = None
    folder: str | None = None


def installed_version() -> str | None:
    """The JAX release of this process's Python, read without importing jax."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("jax")
    except PackageNotFoundError:
        return None


def cache_root() -> Path:
    """Where the environments live: ``$XDG_CACHE_HOME/jitmagic``, else ``~/.cache/jitmagic``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "jitmagic"


def folder_of(release: str) -> Path:
    """Where ``release``'s environment lives (made or not)."""
    return cache_root() / f"jax-{release}"


def ready(release: str) -> bool:
    """Whether ``release`` needs no install: the user's own, or its environment is made."""
    return release in (CURRENT, installed_version()) or (folder_of(release) / READY).exists()


def environment(release: str) -> Environment | NotInstalled:
    """The environment of ``release``: the user's own, else the cached one (made first)."""
    if release in (CURRENT, installed_version()):
        return Environment(release)
    folder = folder_of(release)
    python = folder / "bin" / "python"
    if not ready(release):
        reason = _make(folder, release)
        if reason is not None:
            shutil.rmtree(folder, ignore_errors=True)
            return NotInstalled(release, reason)
        (folder / READY).write_text(release + "\n")
    return Environment(release, str(python), str(folder))


def _make(folder: Path, release: str) -> str | None:
    """Make ``folder`` an environment holding ``release``; None, or why it failed."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    wanted = [f"jax=={release}", f"jaxlib=={release}", *PACKAGES]
    python = str(folder / "bin" / "python")
    uv = shutil.which("uv")
    steps = ([[uv, "venv", "--quiet", "--python", sys.executable, str(folder)],
              [uv, "pip", "install", "--quiet", "--python", python, *wanted]] if uv else
             [[sys.executable, "-m", "venv", str(folder)],
              [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
               *wanted]])
    return next((reason for step in steps if (reason := _ran(step)) is not None), None)


def _ran(argv: list[str]) -> str | None:
    """Run one install step; None, or the installer's last error line (else last output line)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=INSTALL_S,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"the install took more than {INSTALL_S:g} s"
    except OSError as exc:
        return f"{argv[0]} could not start ({exc.strerror})"
    if done.returncode == 0:
        return None
    lines = [ln.strip() for ln in (done.stderr + done.stdout).splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.lower().startswith(("error", "cause", "×", "╰"))]
    return (errors or lines or [f"exit status {done.returncode}"])[-1]


def served(low: str, high: str) -> list[str] | str:
    """The releases from ``low`` to ``high`` whose jax and jaxlib the index serves, or why not."""
    high = installed_version() or high if high == CURRENT else high
    listed = []
    for package in ("jax", "jaxlib"):
        argv = [sys.executable, "-m", "pip", "index", "versions", package]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=INSTALL_S,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"`{' '.join(argv[2:])}` could not run ({exc})"
        found = re.search(r"^Available versions: (.*)$", done.stdout, re.MULTILINE)
        if found is None:
            return (done.stderr.strip().splitlines() or [f"`{' '.join(argv[2:])}` listed none"]
                    )[-1]
        listed.append(set(found[1].split(", ")))
    key = _numbers(low), _numbers(high)
    return sorted((v for v in listed[0] & listed[1] if key[0] <= _numbers(v) <= key[1]),
                  key=_numbers)


def too_old(release: str) -> bool:
    """Whether ``release`` is older than :data:`OLDEST`."""
    return release != CURRENT and _numbers(release) < _numbers(OLDEST)


def in_order(low: str, high: str) -> bool:
    """Whether ``low`` is not newer than ``high`` (``current`` is the newest)."""
    return high == CURRENT or _numbers(low) <= _numbers(high)


def _numbers(version: str) -> tuple[int, ...]:
    """``0.9.0.1`` → (0, 9, 0, 1); a pre-release (``0.9.0rc1``) sorts after every release."""
    return tuple(int(x) if x.isdigit() else 1 << 30 for x in version.split("."))

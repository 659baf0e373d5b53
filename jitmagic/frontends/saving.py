"""Reports shown and written to files: the one stop rule of the front ends (:class:`Showing`:
Ctrl-C never loses a finished result), ``jitmagic.save``, and the ``--save``/``--html``/``--trace``
files of the front ends, checked before anything is measured and written without a traceback."""

from __future__ import annotations

import argparse
import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CannotWriteError, InputError
from ..measure.sampling.stops import Checkpoint, StageInterrupted
from ..model.advice import Advice
from ..model.attribution import Attribution
from ..model.comparison import Comparison
from ..model.ledger import Ledger
from ..model.lines import Lines
from ..model.reports import storage
from ..model.saved import files
from ..model.sweep import Sweep
from ..render.bundle import html_document, stopped_note
from ..render.ledger import html_document as ledger_document
from ..render.releases.trace import trace_json

#: What a second Ctrl-C while a finished measurement is shown or saved says.
ABANDONED_SHOWING = ("a second Ctrl-C: showing the result was abandoned (the measurement "
                     "had finished; its text table is above)")


@dataclass
class Showing:
    """While :meth:`active`, a first Ctrl-C stops the part running and leaves out the optional
    ones; a second one raises :data:`ABANDONED_SHOWING`."""

    check: Checkpoint = field(
        default_factory=lambda: Checkpoint(abandon_message=ABANDONED_SHOWING))
    #: The parts a Ctrl-C stopped or left out, in order (the front end says so).
    stopped: list[str] = field(default_factory=list)

    @classmethod
    def after(cls, pressed: float | None) -> Showing:
        """Showing after a Ctrl-C at ``pressed`` (None: none) held since the measurement."""
        return cls(check=Checkpoint(abandon_message=ABANDONED_SHOWING,
                                    interrupted=pressed is not None, pressed_at=pressed))

    @contextmanager
    def active(self) -> Iterator[Showing]:
        with self.check.catching_interrupts(), self.check.mode(python=False):
            yield self

    def part(self, name: str, make: Callable[[], Any], instead: Callable[[], Any] | None = None,
             optional: bool = False) -> Any:
        """``make()``; where Ctrl-C stops it, ``name`` is noted and ``instead()`` made."""
        if not (optional and self.check.interrupted):
            try:
                with self.check.mode(python=True):
                    return make()
            except StageInterrupted:
                pass
        self.stopped.append(name)
        return None if instead is None else instead()


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
        return os.fspath(files.check_target(path))
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
    except (OSError, ValueError) as exc:  # why, with no file name: [Errno 28] No space left...
        why = OSError(exc.errno, exc.strerror) if isinstance(exc, OSError) and exc.strerror else exc
        raise CannotWriteError(f"cannot write {option} {path}: {why}") from None
    return True


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


#: The records saved only within a comparison: (the option that measures each, its field).
SAVED_WITHIN = {Advice: ("advise", "advice"), Attribution: ("attribute", "attribution")}
#: What each extension writes.
FORMATS = {".json": "the JSON report (jitmagic.load reads it back)",
           ".html": "a self-contained HTML page (opens offline)"}


def save(result: Comparison | Sweep | Lines | Ledger | Advice | Attribution,
         path: str | os.PathLike) -> None:
    """Write ``result`` to ``path``: JSON for ``.json``, an HTML page for ``.html``."""
    if isinstance(result, Advice | Attribution):
        (option, field), kind = SAVED_WITHIN[type(result)], type(result).__name__
        raise InputError(f"a {kind} is saved within the comparison that measured it, which "
                         f"`jitmagic.load` reads back whole: write `result = jitmagic.compare("
                         f"fn, *args, {option}=True)`, then `jitmagic.save(result, "
                         f"{os.fspath(path)!r})`; the loaded report's `.{field}` is this {kind}.")
    suffix = Path(os.fsdecode(os.fspath(path))).suffix.lower()
    if suffix not in FORMATS:
        said = f"ends in {suffix!r}" if suffix else "has no extension"
        choices = "; ".join(f"`{ext}` for {what}" for ext, what in FORMATS.items())
        raise InputError(f"jitmagic.save chooses the format by the file's extension, and "
                         f"{os.fspath(path)!r} {said}: write {choices}.")
    if suffix == ".json":
        storage.save(result, path)
    elif isinstance(result, Ledger):
        files.write_text(path, ledger_document(result))
    elif isinstance(result, Lines):
        raise InputError("a jitmagic.lines table saves as .json only; its HTML shows in a "
                         "notebook (the table's own display), or save the comparison made "
                         "with --lines as .html.")
    else:
        files.write_text(path, html_document(result))


def html_page(result: Comparison | Sweep | Ledger, showing: Showing) -> str:
    """The HTML report; without its charts (and saying so) where Ctrl-C stopped drawing them."""
    page = ledger_document if isinstance(result, Ledger) else html_document
    return showing.part("the HTML report's charts", lambda: page(result),  # type: ignore[arg-type]
                        lambda: page(result, plot=False,  # type: ignore[arg-type]
                                     note=stopped_note(["the HTML report's charts"])))


def wrote(option: str, path: str) -> str:
    html = " (open it in a browser; works offline)" if option == "--html" else ""
    return f"wrote {path}{html}"


def write_outputs(result: Comparison | Sweep | Ledger, args: argparse.Namespace,
                  showing: Showing | None = None, begun: list[str] | None = None,
                  said: Callable[[str, str], str] = wrote) -> tuple[list[str], list[str]]:
    """Write the ``--save``, ``--html`` and ``--trace`` reports, printing nothing: (a line per
    report written, why each other was not)."""
    showing = showing or Showing()
    begun = [] if begun is None else begun
    written, failures = [], []
    for option, path in (("--save", args.save), ("--html", args.html),
                         ("--trace", getattr(args, "trace", None))):
        if not path:
            continue
        begun.append(option)
        write = _writer(option, result, showing)
        try:
            done = showing.part(option, functools.partial(write_report, write, path, option))
        except CannotWriteError as exc:
            failures.append(str(exc))
            continue
        if done:
            written.append(said(option, path))
        else:
            failures.append(not_written(option, path))
    return written, failures


def not_written(option: str, path: str) -> str:
    return (f"{option} {path}: not written: interrupted by Ctrl-C (a file there before is "
            "as it was)")


def _writer(option: str, result: Comparison | Sweep | Ledger,
            showing: Showing) -> Callable[[str], object]:
    """What writes ``option``'s report (the HTML page made first; ``--trace`` never a ledger)."""
    if option == "--save":
        return functools.partial(storage.save, result)
    if option == "--html":
        return functools.partial(files.write_text, text=html_page(result, showing))
    assert not isinstance(result, Ledger)
    return lambda p: files.write_text(p, trace_json(result))

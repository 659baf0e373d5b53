"""``jitmagic.save``: a report written in the format its file name asks for.

``.json`` is the report itself (``jitmagic.load`` reads it back, a diff compares it);
``.html`` is the page the magic shows, self-contained (its charts embedded, nothing
fetched from a network), for a notebook report or a CI artefact. Any other name is
refused with a sentence, never written in a format it does not say.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError
from ..measure.sampling.stops import Showing
from ..model.comparison import Comparison
from ..model.lines import Lines
from ..model.saved import files, storage
from ..model.sweep import Sweep
from ..render.bundle import html_document, stopped_note

#: What each extension writes.
FORMATS = {".json": "the JSON report (jitmagic.load reads it back)",
           ".html": "a self-contained HTML page (opens offline)"}


def save(result: Comparison | Sweep | Lines, path: str | os.PathLike) -> None:
    """Write ``result`` to ``path``: JSON for ``.json``, an HTML page for ``.html``.

    The file is replaced whole or not at all, and only a regular file (or a new one)
    is written (:mod:`jitmagic.model.saved.files`)."""
    suffix = Path(os.fsdecode(os.fspath(path))).suffix.lower()
    if suffix not in FORMATS:
        said = f"ends in {suffix!r}" if suffix else "has no extension"
        choices = "; ".join(f"`{ext}` for {what}" for ext, what in FORMATS.items())
        raise InputError(f"jitmagic.save chooses the format by the file's extension, and "
                         f"{os.fspath(path)!r} {said}: write {choices}.")
    if suffix == ".json":
        storage.save(result, path)
    elif isinstance(result, Lines):
        raise InputError("a jitmagic.lines table saves as .json only; its HTML shows in a "
                         "notebook (the table's own display), or save the comparison made "
                         "with --lines as .html.")
    else:
        files.write_text(path, html_document(result))


def html_page(result: Comparison | Sweep, showing: Showing) -> str:
    """The HTML report (the command's and the magic's ``--html``); without its charts
    where Ctrl-C stopped drawing them, and saying so."""
    return showing.part("the HTML report's charts", lambda: html_document(result),
                        lambda: html_document(result, plot=False, note=stopped_note(
                            ["the HTML report's charts"])))

"""Progress in a notebook: one display updated in place, then turned into the result (or emptied),
so a saved notebook keeps the result and no progress; elsewhere stderr."""

from __future__ import annotations

from typing import Any

from ..model.progress import Progress
from ..options import Options
from .stderr_progress import StderrProgress


class NotebookProgress:
    """One display, created on the first event, updated in place after."""

    def __init__(self) -> None:
        self.handle: Any = None

    def __call__(self, p: Progress) -> None:
        self.line(p.line())

    def line(self, text: str) -> None:
        """Show ``text``: in the display made at the first call (``%%jitwatch``'s live line)."""
        data = {"text/plain": text}
        if self.handle is None:
            from IPython.display import display  # the command never needs IPython

            self.handle = display(data, raw=True, display_id=True)
        else:
            self.handle.update(data, raw=True)

    def close(self, finished: bool = True) -> None:
        """Empty the display (until the result takes it): the progress is not kept."""
        if self.handle is not None:
            self.handle.update({"text/plain": ""}, raw=True)

    def show(self, data: dict[str, str]) -> bool:
        if self.handle is None:
            return False
        self.handle.update(data, raw=True)
        return True


def progress_for(options: Options, shell: Any = None) -> NotebookProgress | StderrProgress | None:
    if options.quiet:
        return None
    if getattr(shell, "kernel", None) is not None:
        return NotebookProgress()
    return StderrProgress()

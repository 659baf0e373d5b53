"""The sentences of what the measuring notes (:mod:`jitmagic.model.notes`): one renderer
per kind of note, registered for its type, so ``str(note)`` (and a record's ``warnings``
or ``notes``) says it. Each sentence is word for word what the measuring layer wrote
before notes were facts, so a report reads as it did. The renderers live beside the
kinds they say: a comparison's warnings, a variant's notes, the parts' notes, the
cell's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...model.notes import Note
from ...model.shown import register
from . import cell
from . import comparison
from . import effects
from . import parts
from . import variants
from .variants import NO_CALL as NO_CALL

#: Each kind of note's renderer, by its type.
SAID: dict[type[Note], Callable[[Any], str]] = {**comparison.SAID, **variants.SAID,
                                                **parts.SAID, **cell.SAID, **effects.SAID}


def register_notes() -> None:
    """Register each kind's renderer as its ``text`` (``str(note)``)."""
    for note_type, said in SAID.items():
        register("text", note_type, said)

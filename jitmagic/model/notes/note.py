"""The note record, the kinds by name, and how notes are saved, read and said
(:mod:`jitmagic.model.notes` says what a note is; its kinds live beside this module)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from typing import ClassVar
from typing import TypeVar

from ..saved.schema import REQUIRED
from ..saved.schema import Field
from ..saved.schema import Kind
from ..saved.schema import fail
from ..saved.schema import fields
from ..saved.schema import flag
from ..saved.schema import integer
from ..saved.schema import items
from ..saved.schema import number_or_nan
from ..saved.schema import obj
from ..saved.schema import optional
from ..saved.schema import text
from ..shown import Shown


@dataclass(frozen=True)
class Note(Shown):
    """One fact the measuring noted; its ``kind`` names it in a saved report."""

    kind: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        """The note as a report saves it: its kind, then its fields (tuples as lists)."""
        return {"kind": self.kind, **{f.name: _json(getattr(self, f.name))
                                      for f in dataclasses.fields(self)}}


#: A note as a record holds it: a fact, or the sentence an earlier version saved.
Noted = str | Note
#: Every kind of note by its name, for reading a report (filled by :func:`kind`).
KINDS: dict[str, type[Note]] = {}

N = TypeVar("N", bound=type[Note])


def kind(name: str) -> Callable[[N], N]:
    """Class decorator: the note type saved as ``name`` (each name once)."""
    def registered(cls: N) -> N:
        if name in KINDS:
            raise ValueError(f"two kinds of note named {name!r}")
        cls.kind = name
        KINDS[name] = cls
        return cls
    return registered


def read_fact(value: Any, where: str) -> Note:
    """A note held inside another (why a helper stays inline): a fact, never a sentence."""
    got = read_noted(obj(value, where), where)
    assert isinstance(got, Note)  # an object reads as a fact
    return got


#: How each field type of a note is read back from a report (a field that is itself a
#: note, ``Note``, is saved as its dict).
_READERS: dict[str, Kind] = {
    "str": text, "float": number_or_nan, "bool": flag, "int": integer,
    "tuple[str, ...]": items(text), "tuple[int, ...]": items(integer),
    "str | None": optional(text), "int | None": optional(integer),
    "tuple[tuple[int, ...], ...]": items(items(integer)),
    "Note": read_fact, "Note | None": optional(read_fact),
    "tuple[Note, ...]": items(read_fact),
}


def _json(value: Any) -> Any:
    """``value`` as JSON holds it: a tuple (of tuples) as a list (of lists), a note held
    in a note as its dict."""
    if isinstance(value, Note):
        return value.to_dict()
    return [_json(v) for v in value] if isinstance(value, tuple) else value


def saved_note(note: Noted) -> Any:
    """``note`` as a report saves it: a fact as its dict, a sentence as it is."""
    return note if isinstance(note, str) else note.to_dict()


def saved(notes: Iterable[Noted]) -> list[Any]:
    """``notes`` as a report saves them (:func:`saved_note`)."""
    return [saved_note(n) for n in notes]


def read_noted(value: Any, where: str) -> Noted:
    """A note read from a report: a plain string is a sentence an earlier version saved
    (kept as it was); an object is a fact of a kind in :data:`KINDS`."""
    if isinstance(value, str):
        return text(value, where)
    d = obj(value, where)
    name = d.get("kind")
    found = KINDS.get(name) if isinstance(name, str) else None
    if found is None:
        fail(f"{where}.kind", "a kind of note", name)
    table: tuple[Field, ...] = tuple(
        (f.name, f.name, _READERS[str(f.type)], REQUIRED) for f in dataclasses.fields(found))
    return found(**fields(d, table, where))


def read_notes(value: Any, where: str) -> tuple[Noted, ...]:
    """A list of notes read from a report (:func:`read_noted`, each checked)."""
    return tuple(items(read_noted)(value, where))


def mentions(note: Noted, helper: str) -> bool:
    """Whether ``note`` is about ``helper``: a sentence naming it in backquotes, or a
    fact whose ``helper`` it is."""
    if isinstance(note, str):
        return f"`{helper}`" in note
    return getattr(note, "helper", None) == helper


def said(notes: Iterable[Noted]) -> tuple[str, ...]:
    """Each note's sentence (``str``: made by its registered renderer)."""
    return tuple(str(n) for n in notes)


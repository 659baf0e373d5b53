"""The note record, its kinds by name, and how notes are saved, read, checked and said
(:mod:`jitmagic.model.notes` says what a note is; its families live beside this module)."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from typing import TYPE_CHECKING
from typing import Any
from typing import ClassVar
from typing import NamedTuple
from typing import Self

from ..saved import schema
from ..saved.schema import fail
from ..shown import Shown

#: The texts a field may hold where the sentences look it up in a table of their own
#: (``"why:hook"``): a report whose note holds another is refused as it loads.
KEYS: dict[str, tuple[str, ...]] = {
    "part": (),  # the names of jitmagic.model.parts.PARTS, which fills it
    "hook": ("not_asked", "no_tool_id", "no_monitoring"),
    "structure": ("shape", "node"),
    "rule": ("custom_vjp", "custom_jvp"),
    # what another thread changed (``left_as_is``): the rows of jitmagic.cell.effects
    "row": ("figures", "listeners", "filters", "logging", "rc", "np.seterr",
            "np.set_printoptions", "decimal", "random", "sys.setrecursionlimit",
            "sys.setswitchinterval", "sys.set_int_max_str_digits", "os.umask", "signals",
            "environ", "cwd", "sys_list", "hooks", "config", "module", "own", "global"),
}


class Field(NamedTuple):
    """One field of a kind of note, from its spec ``name:type``: ``type`` is ``str``,
    ``int``, ``float``, ``bool``, ``note`` (a note held in the note), ``shape`` (a tuple
    of ints) or a name in :data:`KEYS`; ``*`` after it: a tuple of them, ``?``: or None.
    After those, ``=``: read side by side with the note's other ``=`` fields (of one
    length); ``+``: says what changed (one ``+`` field at least is non-empty)."""

    name: str
    read: schema.Kind
    parallel: bool
    telling: bool


def _field(spec: str) -> Field:
    name, _, kind = spec.partition(":")
    marks = kind.lstrip("abcdefghijklmnopqrstuvwxyz_")
    base = kind[:len(kind) - len(marks)]
    read = _TYPES.get(base) or _key(base)
    read = schema.items(read) if "*" in marks else read
    return Field(name, schema.optional(read) if "?" in marks else read, "=" in marks, "+" in marks)


def _key(name: str) -> schema.Kind:
    """A text that is one of :data:`KEYS` ``[name]`` (looked up as a report is read)."""
    if name not in KEYS:
        raise ValueError(f"no type of note field named {name!r}")
    return lambda value, where: schema.one_of(*KEYS[name])(value, where)


class Note(Shown):
    """One fact the measuring noted: its ``kind`` and the fields its family's
    :attr:`KINDS` row names, in that order (``Warned("waited", 1.25)``, or by name).
    Each subclass is a family of kinds; the sentence of each kind is a row of
    :data:`jitmagic.render.notes.TEMPLATES` (``str(note)``)."""

    #: This family's kinds: each kind's name and its fields' specs (:class:`Field`).
    KINDS: ClassVar[dict[str, str]] = {}
    #: Of a kind whose tuples' lengths its other fields set: those lengths, by field.
    LENGTHS: ClassVar[dict[str, Callable[[dict[str, Any]], dict[str, int]]]] = {}
    kind: str

    if TYPE_CHECKING:
        def __getattr__(self, name: str) -> Any: ...

    def __init_subclass__(cls) -> None:
        for name, spec in cls.KINDS.items():
            if name in FAMILY:
                raise ValueError(f"two kinds of note named {name!r}")
            FAMILY[name], FIELDS[name] = cls, tuple(map(_field, spec.split()))

    def __init__(self, kind: str, *values: Any, **named: Any) -> None:
        if FAMILY.get(kind) is not type(self):
            raise TypeError(f"{kind!r} is no kind of {type(self).__name__} note")
        names = [f.name for f in FIELDS[kind]]
        given = dict(zip(names, values, strict=False)) | named
        if len(given) != len(values) + len(named) or sorted(given) != sorted(names):
            raise TypeError(f"{type(self).__name__}({kind!r}, ...) takes "
                            f"{', '.join(names) or 'no field'}; got {len(values)} values and "
                            f"{sorted(named)}")
        self.__dict__.update(kind=kind, **{n: given[n] for n in names})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a note is a fact: {name} cannot be set")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash(tuple(vars(self).values()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(map(repr, vars(self).values()))})"

    def facts(self) -> dict[str, Any]:
        """The note's fields by name (its kind apart)."""
        return {k: v for k, v in vars(self).items() if k != "kind"}

    def replace(self, **changed: Any) -> Self:
        """The same note with the fields ``changed``."""
        return type(self)(self.kind, **(self.facts() | changed))

    def to_dict(self) -> dict[str, Any]:
        """The note as a report saves it: its kind, then its fields (tuples as lists)."""
        return {k: schema.encode(v) for k, v in vars(self).items()}


#: A note as a record holds it: a fact, or the sentence an earlier version saved.
Noted = str | Note
#: Each kind of note's family, and its fields, by the kind's name.
FAMILY: dict[str, type[Note]] = {}
FIELDS: dict[str, tuple[Field, ...]] = {}


def read_fact(value: Any, where: str) -> Note:
    """A note held inside another (why a helper stays inline): a fact, never a sentence."""
    got = read_noted(schema.obj(value, where), where)
    assert isinstance(got, Note)  # an object reads as a fact
    return got


#: How each type a field's spec names is read back from a report.
_TYPES: dict[str, schema.Kind] = {
    "str": schema.text, "float": schema.number_or_nan, "bool": schema.flag,
    "int": schema.integer, "shape": schema.items(schema.integer), "note": read_fact}


def saved_note(note: Noted) -> Any:
    """``note`` as a report saves it: a fact as its dict, a sentence as it is."""
    return note if isinstance(note, str) else note.to_dict()


def saved(notes: Iterable[Noted]) -> list[Any]:
    """``notes`` as a report saves them (:func:`saved_note`)."""
    return [saved_note(n) for n in notes]


def read_noted(value: Any, where: str) -> Noted:
    """A note read from a report: a plain string is a sentence an earlier version saved
    (kept as it was); an object is a fact of a kind in :data:`FAMILY`, its fields
    checked as its sentence reads them (:func:`_said_whole`)."""
    if isinstance(value, str):
        return schema.text(value, where)
    d = schema.obj(value, where)
    name = d.get("kind")
    if not isinstance(name, str) or name not in FAMILY:
        fail(f"{where}.kind", "a kind of note", name)
    table = tuple((f.name, f.name, f.read, schema.REQUIRED) for f in FIELDS[name])
    got = schema.fields(d, table, where)
    _said_whole(name, got, where)
    return FAMILY[name](name, **got)


def _said_whole(kind: str, got: dict[str, Any], where: str) -> None:
    """Refuse a note its sentence cannot say (what no report jitmagic wrote holds):
    tuples read side by side of different lengths, a tuple of another length than its
    family's :attr:`~Note.LENGTHS` ask, or no field that says what changed."""
    lengths = {f.name: len(got[f.name]) for f in FIELDS[kind] if f.parallel}
    if len(set(lengths.values())) > 1:
        raise schema.ReportSchemaError(f"{where}: {' and '.join(lengths)} are read side by "
                                       f"side, so they must be of one length; got "
                                       f"{list(lengths.values())}")
    for name, length in FAMILY[kind].LENGTHS.get(kind, lambda _: {})(got).items():
        if len(got[name]) != length:
            raise schema.ReportSchemaError(f"{where}.{name}: expected {length} items (as the "
                                    f"note's other fields say), got {len(got[name])}")
    telling = [f.name for f in FIELDS[kind] if f.telling]
    if telling and not any(got[n] for n in telling):
        raise schema.ReportSchemaError(f"{where}: a {kind!r} note says what changed, but "
                                f"{' and '.join(telling)} say nothing")


def read_notes(value: Any, where: str) -> tuple[Noted, ...]:
    """A list of notes read from a report (:func:`read_noted`, each checked)."""
    return tuple(schema.items(read_noted)(value, where))


def mentions(note: Noted, helper: str) -> bool:
    """Whether ``note`` is about ``helper``: a sentence naming it in backquotes, or a
    fact whose ``helper`` it is."""
    if isinstance(note, str):
        return f"`{helper}`" in note
    return getattr(note, "helper", None) == helper


def said(notes: Iterable[Noted]) -> tuple[str, ...]:
    """Each note's sentence (``str``: its row of the templates)."""
    return tuple(str(n) for n in notes)

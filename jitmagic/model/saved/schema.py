"""Reading a report someone else wrote: every field checked against a *kind*, a function
``(value, where) -> value`` that raises :class:`ReportSchemaError` naming the field."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
import re
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, NoReturn, Self

Kind = Callable[[Any, str], Any]

#: Counts above this are refused: a loop count of 10**4000 would overflow any total.
MAX_COUNT = 10**15
#: No measurement runs longer than this (about 30 years): a larger number is not seconds.
MAX_SECONDS = 1e9
#: ``fields``' default for a key that must be present.
REQUIRED = object()
#: Messages quote at most this many characters of a string from a report.
MAX_QUOTED = 80
#: No list in a report holds more items than this (its statistics would take seconds).
MAX_LIST = 10_000
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("deadline",
                                                                        default=None)

#: What a terminal would act on rather than show: C0 controls but newline and tab, DEL
#: and C1, the bidirectional overrides and isolates, and lone surrogates (no encoder
#: writes them).
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
UNPRINTABLE = re.compile(f"[{_CONTROLS}]")
#: The same, and the line breaks: a value shown on one line must not print a line of its
#: own (a fake ``Gate held: ...``).
UNPRINTABLE_IN_A_LINE = re.compile(f"[{_CONTROLS}\n\u2028\u2029]")


class ReportSchemaError(ValueError):
    """A saved report this version cannot read: wrong schema, or a field of the wrong kind."""


def fail(where: str, expected: str, got: Any) -> NoReturn:
    raise ReportSchemaError(f"{where}: expected {expected}, got {_show(got)}")


def newer(given: Any, newest: str) -> bool:
    """Whether ``given`` is a later version of the schema ``newest`` (a newer jitmagic's)."""
    kind, _, version = newest.rpartition("/")
    found = re.fullmatch(rf"{re.escape(kind)}/(\d{{1,9}})", given) if isinstance(given, str) \
        else None
    return found is not None and int(found[1]) > int(version)


def printable(s: str, lines: bool = False) -> str:
    """``s`` with every :data:`UNPRINTABLE_IN_A_LINE` character (``lines``: newlines kept)
    written as its escape (``\\x1b``)."""
    found = UNPRINTABLE if lines else UNPRINTABLE_IN_A_LINE
    if not found.search(s):
        return s
    return found.sub(lambda m: m[0].encode("unicode_escape", "backslashreplace")
                           .decode("ascii"), s)


#: The JSON escapes (``\\u001b``) of :data:`UNPRINTABLE` characters.
_ESCAPED = re.compile(r"\\u(00[01]|007f|008|009|202[a-e]|206[6-9]|d[89a-f])", re.IGNORECASE)


def needs_printable(json_text: str) -> bool:
    """Whether a JSON text may decode to a string :func:`printable` would change."""
    return bool(UNPRINTABLE.search(json_text) or _ESCAPED.search(json_text))


def printable_tree(value: Any) -> Any:
    """A decoded JSON document with every string in it, keys too, made :func:`printable`."""
    if isinstance(value, str):
        return printable(value, lines=True)  # each shown as one line where it is shown
    if isinstance(value, list):
        return [printable_tree(x) for x in value]
    if isinstance(value, dict):
        return {printable(k) if isinstance(k, str) else k: printable_tree(v)
                for k, v in value.items()}
    return value


def clipped(s: str, width: int = MAX_QUOTED) -> str:
    """``s``, or its first ``width`` characters and how many more there were."""
    return s if len(s) <= width else f"{s[:width]}… ({len(s):,} characters)"


def _show(value: Any) -> str:
    """A short description of a bad value (a 5,000-digit int has no repr)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of about {int(value.bit_length() * 0.30103)} digits"
    text = repr(value) if isinstance(value, str | int | float | bool | None) else \
        f"a {type(value).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def count(value: Any, where: str) -> int:
    """A non-negative int (not a bool), at most :data:`MAX_COUNT`."""
    if type(value) is not int or not 0 <= value <= MAX_COUNT:
        fail(where, f"a count (an integer from 0 to {MAX_COUNT})", value)
    return value


def integer(value: Any, where: str) -> int:
    """An int (not a bool) of at most :data:`MAX_COUNT` in size, either sign."""
    if type(value) is not int or abs(value) > MAX_COUNT:
        fail(where, "an integer", value)
    return value


def number(value: Any, where: str) -> float:
    """A finite number (int or float, not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        fail(where, "a number", value)
    try:
        x = float(value)
    except OverflowError:
        fail(where, "a finite number", value)
    if not math.isfinite(x):
        fail(where, "a finite number", value)
    return x


def seconds(value: Any, where: str, positive: bool = False) -> float:
    """A finite number of seconds, at most :data:`MAX_SECONDS`: non-negative, or above zero
    where ``positive`` (one that others are divided by); never subnormal (``5e-324``: no
    clock measures one, and dividing by one overflows)."""
    x = number(value, where)
    if positive and not 0 < x <= MAX_SECONDS:
        fail(where, f"seconds above zero, at most {MAX_SECONDS:g}", value)
    if not 0 <= x <= MAX_SECONDS:
        fail(where, f"seconds from 0 to {MAX_SECONDS:g}", value)
    if 0 < abs(x) < sys.float_info.min:
        fail(where, "seconds a clock could measure (not a subnormal number)", value)
    return x


def positive_seconds(value: Any, where: str) -> float:
    return seconds(value, where, positive=True)


def number_or_nan(value: Any, where: str) -> float:
    """A finite number, or null for "not measured" (kept as NaN)."""
    return math.nan if value is None else number(value, where)


def text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        fail(where, "a string", value)
    return value


def flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        fail(where, "true or false", value)
    return value


def scalar(value: Any, where: str) -> Any:
    """A JSON scalar: a string, a bool, null, an integer in range or a finite number."""
    if value is None or isinstance(value, str | bool):
        return value
    return integer(value, where) if isinstance(value, int) else number(value, where)


def one_of(*allowed: str) -> Kind:
    """One of the strings ``allowed``."""
    def check(value: Any, where: str) -> str:
        if value not in allowed:
            fail(where, " or ".join(map(repr, allowed)), value)
        return value
    return check


def optional(kind: Kind) -> Kind:
    """``kind`` or null (kept as None)."""
    return lambda value, where: None if value is None else kind(value, where)


def items(kind: Kind, limit: int = MAX_LIST) -> Kind:
    """A list of at most ``limit`` items, every one ``kind``; kept as a tuple."""
    def check(value: Any, where: str) -> tuple:
        if not isinstance(value, list | tuple):
            fail(where, "a list", value)
        if len(value) > limit:
            raise ReportSchemaError(f"{where}: expected at most {limit:,} items, got "
                                    f"{len(value):,}")
        return tuple(kind(x, f"{where}[{i}]") for i, x in enumerate(value))
    return check


def fixed(*kinds: Kind, named: str = "") -> Kind:
    """A list of exactly ``len(kinds)`` items, each its own kind (``named`` in messages)."""
    def check(value: Any, where: str) -> tuple:
        if not isinstance(value, list | tuple) or len(value) != len(kinds):
            fail(where, named or f"a list of {len(kinds)} items", value)
        pairs = enumerate(zip(kinds, value, strict=True))
        return tuple(kind(x, f"{where}[{i}]") for i, (kind, x) in pairs)
    return check


def mapping(kind: Kind) -> Kind:
    """An object with string keys whose every value is ``kind``; kept as a dict."""
    def check(value: Any, where: str) -> dict[str, Any]:
        obj(value, where)
        return {k: kind(v, f"{where}.{k}") for k, v in value.items()}
    return check


def obj(value: Any, where: str) -> dict[str, Any]:
    """A JSON object (a dict with string keys)."""
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        fail(where, "an object", value)
    return value


def json_value(value: Any, where: str, depth: int = 4) -> Any:
    """Free-form data (``env``): scalars, and lists and objects of them, at most ``depth`` deep."""
    if isinstance(value, list | tuple | dict) and depth <= 0:
        fail(where, "data nested at most 4 deep", "deeper nesting")
    if isinstance(value, list | tuple):
        return [json_value(x, f"{where}[{i}]", depth - 1) for i, x in enumerate(value)]
    if isinstance(value, dict):
        return {k: json_value(v, f"{where}.{k}", depth - 1) for k, v in obj(value, where).items()}
    return scalar(value, where)


Field = tuple[str, str, Kind | None, Any]


def same(kind: Kind | None, default: Any, *keys: str) -> tuple[Field, ...]:
    """Rows of ``keys``, each saved under its attribute's own name, of one kind and default."""
    return tuple((key, key, kind, default) for key in keys)


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Within this block, :func:`fields` fails once ``seconds`` have passed."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _check_time(where: str) -> None:
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline:
        raise ReportSchemaError(f"{where or 'the report'}: reading it took too long (a report "
                                "this large is not one jitmagic wrote); not read")


def fields(d: Any, table: tuple[Field, ...], where: str) -> dict[str, Any]:
    """``{attribute: decoded value}`` for each ``(key, attribute, kind, default)`` row (kind
    None: written only)."""
    obj(d, where)
    _check_time(where)
    out = {}
    for key, attr, kind, default in table:
        at = f"{where}.{key}" if where else key
        if kind is None:
            continue
        if key in d:
            out[attr] = kind(d[key], at)
        elif default is REQUIRED:
            raise ReportSchemaError(f"{at}: missing")
        else:
            out[attr] = default
    return out


def encode(value: Any) -> Any:
    """A record's value as JSON writes it (NaN as null, records by ``to_dict``/``to_list``)."""
    if isinstance(value, tuple | list):
        return [encode(x) for x in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return value.to_list() if hasattr(value, "to_list") else value


def facts(record: Any, *names: str) -> dict[str, Any]:
    """``record``'s attributes ``names`` as JSON writes them (a record never read back)."""
    return {name: encode(getattr(record, name)) for name in names}


def written(record: Any) -> dict[str, Any]:
    """``record``'s :attr:`Saved.FIELDS`, as :meth:`Saved.to_dict` writes them."""
    return {key: value for key, attr, _, default in record.FIELDS
            if (value := encode(getattr(record, attr))) != encode(default)
            or key not in record.SPARSE}


_AS_DEFAULT = object()


def saved(kind: Kind, default: Any = REQUIRED, key: str = "", missing: Any = _AS_DEFAULT,
          factory: Callable[[], Any] | None = None) -> Any:
    """A dataclass field of a :class:`Saved` record, saved under ``key`` (else its name) and
    read by ``kind``; ``missing``: what a report without it reads as, where not ``default``
    (or a new ``factory()``, a dict's default ``{}``)."""
    row = (key, kind, default if missing is _AS_DEFAULT else missing)
    if factory or isinstance(default, dict):
        return dataclasses.field(default_factory=factory or dict, metadata={"saved": row})
    if default is REQUIRED:
        return dataclasses.field(metadata={"saved": row})
    return dataclasses.field(default=default, metadata={"saved": row})


class Saved:
    """A record saved as its :attr:`FIELDS` table says (:attr:`SPARSE`: only off default):
    its base's rows, its own :func:`saved` fields' in order, then those its class body writes."""

    __slots__ = ()
    FIELDS: ClassVar[tuple[Field, ...]] = ()
    WHERE: ClassVar[str] = ""
    SPARSE: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls) -> None:
        own = [(f.metadata["saved"], n) for n, f in vars(cls).items()
               if isinstance(f, dataclasses.Field) and "saved" in f.metadata]
        if own:
            base = cls.__mro__[1]
            cls.FIELDS = (*(base.FIELDS if issubclass(base, Saved) else ()),
                          *((key or n, n, kind, missing) for (key, kind, missing), n in own),
                          *vars(cls).get("FIELDS", ()))

    def to_dict(self) -> dict[str, Any]:
        return written(self)

    @classmethod
    def from_dict(cls, d: Any, where: str = "") -> Self:
        """The record saved as ``d``; ``ReportSchemaError`` naming the first bad field."""
        return cls(**fields(d, cls.FIELDS, where or cls.WHERE))

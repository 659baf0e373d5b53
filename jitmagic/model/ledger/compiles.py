"""One compile of a watched run and why it happened: JAX's reason sorted into the kinds
a user can act on (:data:`KINDS`), each :class:`Compile` with JAX's own seconds for its
stages, and the compiles past those kept, only counted (:class:`Omitted`).

A saved ledger is read through the schema's ``Field`` tables
(:func:`~jitmagic.model.saved.schema.fields`): one row per field, its kind and default.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from typing import ClassVar
from typing import Self
from typing import cast

from ..saved import schema
from ..saved.schema import REQUIRED
from ..saved.schema import Field
from ..saved.schema import clipped
from ..saved.schema import fail
from ..saved.schema import fields

#: Characters of JAX's explanation kept per compile (a pytree's reason can be megabytes).
MAX_TEXT = 2000

# What a compile was made for: JAX's reason, sorted into the kinds a user can act on.
FIRST = "first"                  # the function's first compile here: its warm-up
WEAK_TYPE = "weak type"          # an argument's weak type became strong (or back)
SHAPE = "shape"                  # an argument's shape changed
DTYPE = "dtype"                  # an argument's dtype changed
SHARDING = "sharding"            # an argument's sharding or devices changed, not its type
STATIC = "static value"          # a static argument's value changed
NEW_FUNCTION = "new function"    # the same function made anew (a jit or lambda in a loop)
PYTREE = "pytree"                # the arguments' pytree structure changed
KEYWORD = "keyword"              # a keyword argument passed on one call, left out on another
CONTEXT = "context"              # a config value or context manager changed
EAGER = "eager op"               # an eager jnp/lax call outside jit, on new shapes or dtypes
UNEXPLAINED = "no reason"        # compiled again, and JAX gave no reason
OTHER = "other"                  # JAX gave a reason of another kind (its text is kept)

KINDS = (FIRST, WEAK_TYPE, SHAPE, DTYPE, STATIC, NEW_FUNCTION, PYTREE, CONTEXT, EAGER,
         UNEXPLAINED, OTHER, SHARDING, KEYWORD)
#: The kinds that are compiling *again*: every kind but the first compile.
AGAIN = tuple(k for k in KINDS if k != FIRST)

STAGES = ("trace_s", "lower_s", "compile_s")


#: Other differences kept per compile, beside the first (JAX names every one).
MAX_ALSO = 16
#: Misses JAX explains before the watch turns its explanations off (JAX compares each
#: miss with every earlier one, so explaining grows slower as misses add up).
MAX_EXPLAINED = 300


class Noted(StrEnum):
    """What the watch itself knows of a compile JAX gave no reason for (saved by value;
    its words are :mod:`jitmagic.render.ledger`'s)."""

    #: After :data:`MAX_EXPLAINED` misses the watch asks JAX for no more reasons.
    NOT_EXPLAINED = "not explained"
    #: A user's jit compiled again on the trace JAX had cached: other devices or sharding.
    REUSED_TRACE = "reused trace"
    #: JAX had never seen the function object, though one of its name compiled before.
    CLEARED_OR_NEW = "cleared or new"
    #: It compiled before, then jitmagic's own measuring (a ``jitmagic.compare()`` in the
    #: run: cold samples) cleared JAX's caches: its next compile counts against no gate.
    CLEARED_BY_JITMAGIC = "cleared by jitmagic"


class Saved:
    """A record of the ledger saved as its fields, tuples as JSON's lists
    (:meth:`to_dict`), and read back through its ``Field`` table (:attr:`FIELDS`)."""

    __slots__ = ()
    FIELDS: ClassVar[tuple[Field, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        return as_json(dataclasses.asdict(cast(Any, self)))

    @classmethod
    def from_dict(cls, d: Any, where: str) -> Self:
        return cls(**fields(d, cls.FIELDS, where))


def as_json(value: Any) -> Any:
    """``value`` with every tuple in it a list, as JSON reads it back."""
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    return [as_json(v) for v in value] if isinstance(value, list | tuple) else value


def _kind(value: Any, where: str) -> str:
    if value not in KINDS:
        fail(where, f"one of {', '.join(KINDS)}", value)
    return str(value)


def text(value: Any, where: str) -> str:
    """A string, clipped to :data:`MAX_TEXT` (a report from someone else may hold more)."""
    return clipped(schema.text(value, where), MAX_TEXT)


#: A string or null, clipped (:func:`text`).
maybe_text = schema.optional(text)
#: Seconds or null (a stage JAX fired no event for).
maybe_seconds = schema.optional(schema.seconds)


def seconds_or_zero(value: Any, where: str) -> float:
    """Seconds, null read as 0 (a total of none)."""
    return 0.0 if value is None else schema.seconds(value, where)


@dataclass(frozen=True, slots=True)
class Change(Saved):
    """One difference JAX named between a compile's arguments and the earlier compile's:
    its :data:`KINDS` kind, the argument (``lr``, a pytree path), its value before and
    after."""

    kind: str
    argument: str | None = None
    before: str | None = None
    after: str | None = None


@dataclass(frozen=True, slots=True)
class Reason(Saved):
    """Why one compile happened: its :data:`KINDS` kind, the argument JAX named (``lr``,
    ``[0][1]``), its value before and after, the other differences JAX named beside it,
    and JAX's own words (clipped)."""

    kind: str
    argument: str | None = None
    before: str | None = None
    after: str | None = None
    #: How many other arguments differed as well (``also``'s, and past :data:`MAX_ALSO`).
    more: int = 0
    text: str = ""
    #: The other differences JAX named, in its order (at most :data:`MAX_ALSO`).
    also: tuple[Change, ...] = ()
    #: What the watch knows where JAX said nothing (None: nothing).
    noted: Noted | None = None


@dataclass(frozen=True, slots=True)
class Compile(Saved):
    """One trace (and the lowering and XLA compile that followed it) of one function.

    A stage's seconds are JAX's own event for it (wall time); None where JAX fired no
    event for that stage (a trace that was never lowered, a lowering served from its
    cache)."""

    function: str
    reason: Reason
    #: ``file:line`` where the function was defined, as JAX says (None: not said).
    defined_at: str | None = None
    #: ``file:line`` of the user's code that made the call, and that line's text.
    call_site: str | None = None
    call_text: str | None = None
    thread: str = "MainThread"
    #: Whether it counts as the run's: on the thread that ran the watched code, or on one
    #: started while it ran (a thread running before is shown apart).
    in_run: bool = True
    #: Whether it was an eager operation (a ``jnp``/``lax`` call outside any jit).
    eager: bool = False
    trace_s: float | None = None
    lower_s: float | None = None
    compile_s: float | None = None
    #: Seconds from the start of the watch to the start of this compile's first event.
    at_s: float = 0.0

    @property
    def seconds(self) -> float:
        """Trace, lowering and XLA compile together: what a cache hit would have saved."""
        return sum(getattr(self, s) or 0.0 for s in STAGES)

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.function, self.defined_at)


@dataclass(frozen=True, slots=True)
class Omitted(Saved):
    """The compiles of one function past :data:`~jitmagic.model.ledger.MAX_KEPT`: only counted."""

    function: str
    count: int
    seconds: float
    again: int
    again_seconds: float = 0.0


def _also(value: Any, where: str) -> tuple[Change, ...]:
    """The other differences JAX named, at most :data:`MAX_ALSO` of them kept."""
    listed = schema.items(schema.obj)(value, where)[:MAX_ALSO]
    return tuple(Change.from_dict(a, f"{where}[{i}]") for i, a in enumerate(listed))


def _reason(value: Any, where: str) -> Reason:
    return Reason.from_dict(value, where)


CHANGE_FIELDS: tuple[Field, ...] = (
    ("kind", "kind", _kind, REQUIRED),
    ("argument", "argument", maybe_text, None),
    ("before", "before", maybe_text, None),
    ("after", "after", maybe_text, None),
)
REASON_FIELDS: tuple[Field, ...] = (
    *CHANGE_FIELDS,
    ("more", "more", schema.count, 0),
    ("text", "text", lambda v, w: maybe_text(v, w) or "", ""),
    ("also", "also", _also, ()),
    ("noted", "noted", schema.optional(lambda v, w: Noted(schema.one_of(*Noted)(v, w))), None),
)
COMPILE_FIELDS: tuple[Field, ...] = (
    ("function", "function", text, REQUIRED),
    ("reason", "reason", _reason, REQUIRED),
    ("defined_at", "defined_at", maybe_text, None),
    ("call_site", "call_site", maybe_text, None),
    ("call_text", "call_text", maybe_text, None),
    ("thread", "thread", text, "MainThread"),
    ("in_run", "in_run", schema.flag, True),
    ("eager", "eager", schema.flag, False),
    *((stage, stage, maybe_seconds, None) for stage in STAGES),
    ("at_s", "at_s", seconds_or_zero, 0.0),
)
OMITTED_FIELDS: tuple[Field, ...] = (
    ("function", "function", text, REQUIRED),
    ("count", "count", schema.count, REQUIRED),
    ("seconds", "seconds", seconds_or_zero, 0.0),
    ("again", "again", schema.count, 0),
    ("again_seconds", "again_seconds", seconds_or_zero, 0.0),
)
Change.FIELDS, Reason.FIELDS = CHANGE_FIELDS, REASON_FIELDS
Compile.FIELDS, Omitted.FIELDS = COMPILE_FIELDS, OMITTED_FIELDS

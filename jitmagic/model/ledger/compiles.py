"""One compile of a watched run and why: JAX's reason sorted into :data:`KINDS`, and its
stages' seconds; compiles past those kept are counted (:class:`Omitted`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..rows import STAGE_PHASES as STAGES
from ..saved import schema
from ..saved.schema import fail

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
#: Other differences kept per compile, beside the first (JAX names every one).
MAX_ALSO = 16
#: Misses JAX explains before the watch turns its (costly) explanations off.
MAX_EXPLAINED = 300


class Noted(StrEnum):
    """What the watch itself knows of a compile JAX gave no reason for (saved by value)."""

    #: After :data:`MAX_EXPLAINED` misses the watch asks JAX for no more reasons.
    NOT_EXPLAINED = "not explained"
    #: A user's jit compiled again on the trace JAX had cached: other devices or sharding.
    REUSED_TRACE = "reused trace"
    #: JAX had never seen the function object, though one of its name compiled before.
    CLEARED_OR_NEW = "cleared or new"
    #: jitmagic's own measuring cleared JAX's caches: the next compile counts against no gate.
    CLEARED_BY_JITMAGIC = "cleared by jitmagic"


def _kind(value: Any, where: str) -> str:
    if value not in KINDS:
        fail(where, f"one of {', '.join(KINDS)}", value)
    return str(value)


def text(value: Any, where: str) -> str:
    """A string, clipped to :data:`MAX_TEXT` (a report from someone else may hold more)."""
    return schema.clipped(schema.text(value, where), MAX_TEXT)


maybe_text = schema.optional(text)
#: Seconds or null (a stage JAX fired no event for).
maybe_seconds = schema.optional(schema.seconds)


def seconds_or_zero(value: Any, where: str) -> float:
    """Seconds, null read as 0 (a total of none)."""
    return 0.0 if value is None else schema.seconds(value, where)


def first_kept(read: Any, most: int) -> schema.Kind:
    """A list of objects, each ``read``, only the first ``most`` kept."""
    def check(value: Any, where: str) -> tuple:
        listed = schema.items(schema.obj)(value, where)[:most]
        return tuple(read(v, f"{where}[{i}]") for i, v in enumerate(listed))
    return check


@dataclass(frozen=True, slots=True)
class Change(schema.Saved):
    """One difference JAX named between a compile's arguments and the earlier compile's."""

    kind: str = schema.saved(_kind)
    argument: str | None = schema.saved(maybe_text, None)
    before: str | None = schema.saved(maybe_text, None)
    after: str | None = schema.saved(maybe_text, None)


@dataclass(frozen=True, slots=True)
class Reason(Change):
    """Why one compile happened (its :class:`Change`), the other differences JAX named, and
    JAX's words."""

    #: How many other arguments differed as well (``also``'s, and past :data:`MAX_ALSO`).
    more: int = schema.saved(schema.count, 0)
    text: str = schema.saved(lambda v, w: maybe_text(v, w) or "", "")
    also: tuple[Change, ...] = schema.saved(first_kept(Change.from_dict, MAX_ALSO), ())
    #: What the watch knows where JAX said nothing (None: nothing).
    noted: Noted | None = schema.saved(
        schema.optional(lambda v, w: Noted(schema.one_of(*Noted)(v, w))), None)


@dataclass(frozen=True, slots=True)
class Compile(schema.Saved):
    """One trace, lowering and XLA compile of one function (a stage's None: no JAX event)."""

    function: str = schema.saved(text)
    reason: Reason = schema.saved(Reason.from_dict)
    #: ``file:line`` where the function was defined, as JAX says (None: not said).
    defined_at: str | None = schema.saved(maybe_text, None)
    #: ``file:line`` of the user's code that made the call, and that line's text.
    call_site: str | None = schema.saved(maybe_text, None)
    call_text: str | None = schema.saved(maybe_text, None)
    thread: str = schema.saved(text, "MainThread")
    #: Whether it counts as the run's: on its thread or one started while it ran.
    in_run: bool = schema.saved(schema.flag, True)
    eager: bool = schema.saved(schema.flag, False)  # an eager ``jnp``/``lax`` call outside any jit
    trace_s: float | None = None
    lower_s: float | None = None
    compile_s: float | None = None
    at_s: float = 0.0  # from the start of the watch to this compile's first event

    FIELDS = (*schema.same(maybe_seconds, None, *STAGES), ("at_s", "at_s", seconds_or_zero, 0.0))

    @property
    def seconds(self) -> float:
        """Trace, lowering and XLA compile together: what a cache hit would have saved."""
        return sum(getattr(self, s) or 0.0 for s in STAGES)

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.function, self.defined_at)


@dataclass(frozen=True, slots=True)
class Omitted(schema.Saved):
    """The compiles of one function past :data:`~jitmagic.model.ledger.MAX_KEPT`: only counted."""

    function: str = schema.saved(text)
    count: int = schema.saved(schema.count)
    seconds: float = schema.saved(seconds_or_zero, missing=0.0)
    again: int = schema.saved(schema.count, missing=0)
    again_seconds: float = schema.saved(seconds_or_zero, 0.0)

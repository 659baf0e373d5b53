"""The second-start record (``--cache``): per variant, first calls with JAX's persistent
cache off (*no-cache*), writing it (*cold*) and reading it (*warm*), pair by pair."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, get_args

from ..notes import Noted, read_notes, said_in
from ..rows import STAGE_PHASES as STAGES
from ..rows import VARIANTS
from ..saved import schema
from ..saved.schema import fail
from ..stats.rule import Difference, difference, json_number, median
from ..stats.verdicts import ROUNDS_ENDED
from ..stats.witness import FIRST_CALL, WAIT, Clock, clock_for, cpu_key, on

#: JAX's default ``jax_persistent_cache_min_compile_time_secs``.
DEFAULT_MIN_COMPILE_S = 1.0


@dataclass(frozen=True)
class Start(schema.Saved):
    """One first call, JAX's cache hits and misses in it, and its stages (None: no event)."""

    seconds: float = schema.saved(schema.seconds)
    #: The process's CPU seconds in the same interval, and how long its threads waited for a CPU.
    cpu_s: float | None = schema.saved(schema.optional(schema.seconds), None)
    wait_s: float | None = schema.saved(schema.optional(schema.seconds), None)
    hits: int = schema.saved(schema.count, 0)
    misses: int = schema.saved(schema.count, 0)
    trace_s: float | None = None
    lower_s: float | None = None
    compile_s: float | None = None  # on a hit: about the time to read the entry

    WHERE = "start"
    FIELDS = (*schema.same(schema.optional(schema.seconds), None, *STAGES),)


Starts = tuple[Start, ...]


def samples(starts: Starts) -> dict[str, list[float]]:
    """Starts as a row's samples are kept, for the one rule and its clock."""
    out = {FIRST_CALL: [s.seconds for s in starts]}
    for key, got in ((cpu_key(FIRST_CALL), [s.cpu_s for s in starts]),
                     (WAIT, [s.wait_s for s in starts])):
        if got and all(x is not None for x in got):
            out[key] = [x for x in got if x is not None]
    return out


def _clock(a: Starts, b: Starts) -> Clock:
    """The clock two sets of starts are compared on (CPU time on a busy machine)."""
    return clock_for([samples(a), samples(b)])


def _first_calls(a: Starts, b: Starts, ready: bool = True) -> Difference:
    """``b``'s first calls against ``a``'s by the one rule (not measured unless ``ready``)."""
    if not ready:
        return difference([], [])
    clock = _clock(a, b)
    return difference(on(samples(a), FIRST_CALL, clock), on(samples(b), FIRST_CALL, clock))


def stage_median(starts: Starts, stage: str) -> float | None:
    """The median of ``stage`` over the starts where JAX's event came (None: in none)."""
    got = [x for x in (getattr(s, stage) for s in starts) if x is not None]
    return median(got) if got else None


@dataclass(frozen=True)
class CacheRow(schema.Saved):
    """One variant's no-cache, cold and warm starts (0.5 and older: no no-cache)."""

    name: str
    cold: Starts = ()
    warm: Starts = ()
    error: str | None = None  # the user's code failed: why (its frames only)
    no_cache: Starts = schema.saved(schema.items(Start.from_dict), ())

    #: "read" and "saved_s" are written, derived again when read.
    FIELDS = (("cold", "cold", schema.items(Start.from_dict), ()),
              ("warm", "warm", schema.items(Start.from_dict), ()),
              ("error", "error", schema.optional(schema.text), None),
              ("read", "read", None, None),
              ("saved_s", "saved_s", None, None))

    @property
    def read(self) -> bool:
        """Whether the warm starts read the cache: every one saw a cache hit."""
        return bool(self.warm) and all(s.hits for s in self.warm)

    @property
    def unread(self) -> int:
        """How many warm starts saw no cache hit."""
        return sum(not s.hits for s in self.warm)

    @property
    def baseline(self) -> Starts:
        """What a warm cache's saving is judged against: the no-cache starts, else the cold."""
        return self.no_cache or self.cold

    def clock(self) -> Clock:
        """The clock the baseline and warm are compared on."""
        return _clock(self.baseline, self.warm)

    @property
    def difference(self) -> Difference:
        """Warm against the baseline by the one rule (not measured: the cache was not read)."""
        return _first_calls(self.baseline, self.warm, self.read)

    def writing_clock(self) -> Clock:
        """The clock the no-cache and cold starts are compared on."""
        return _clock(self.no_cache, self.cold)

    @property
    def writing(self) -> Difference:
        """The cold start (which writes the entry) against the no-cache one by the rule."""
        return _first_calls(self.no_cache, self.cold, bool(self.no_cache))

    @property
    def cold_s(self) -> float:
        """The median cold first call (wall seconds; NaN: none finished)."""
        return median([s.seconds for s in self.cold])

    @property
    def baseline_s(self) -> float:
        """The median baseline first call (wall seconds; NaN: none finished)."""
        return median([s.seconds for s in self.baseline])

    @property
    def warm_s(self) -> float | None:
        """The median warm first call (wall seconds); None where the cache was not read."""
        return median([s.seconds for s in self.warm]) if self.read else None

    def seconds_on(self, clock: Clock) -> tuple[list[float], list[float]]:
        """(baseline, warm) first calls on ``clock`` (no warm ones where it was not read)."""
        return (on(samples(self.baseline), FIRST_CALL, clock),
                on(samples(self.warm), FIRST_CALL, clock) if self.read else [])

    def medians_on(self, clock: Clock) -> tuple[float, float]:
        """(baseline, warm) median first calls on ``clock`` (NaN: none)."""
        before, warm = self.seconds_on(clock)
        return median(before), median(warm) if self.read else math.nan

    @property
    def saved_s(self) -> float | None:
        """The seconds a warm cache saves: baseline median − warm median (None: not read)."""
        warm = self.warm_s
        return None if warm is None or math.isnan(self.baseline_s) else self.baseline_s - warm

    @property
    def share(self) -> float | None:
        """Warm over baseline median first call (None: not read)."""
        warm = self.warm_s
        return None if warm is None or not self.baseline_s else warm / self.baseline_s

    @property
    def compile_s(self) -> float | None:
        """The baseline starts' median XLA compile, JAX's own event (None: no event)."""
        return stage_median(self.baseline, "compile_s")

    def middle_warm(self) -> Start | None:
        """The warm start whose first call is the median (the lower of two; None: not read)."""
        if not self.read:
            return None
        return sorted(self.warm, key=lambda s: s.seconds)[(len(self.warm) - 1) // 2]

    def warm_python(self) -> list[float]:
        """Each warm start's trace plus lowering: what a warm cache does not save."""
        return [s.trace_s + s.lower_s for s in self.warm
                if s.trace_s is not None and s.lower_s is not None]


@dataclass(frozen=True)
class UserCache(schema.Saved):
    """The user's own persistent-cache settings, read before measuring."""

    folder_set: bool = schema.saved(schema.flag, False)  # jax_compilation_cache_dir is set
    enabled: bool = schema.saved(schema.flag, True)  # jax_enable_compilation_cache
    #: jax_persistent_cache_min_compile_time_secs and jax_persistent_cache_min_entry_size_bytes
    min_compile_s: float = schema.saved(schema.number, DEFAULT_MIN_COMPILE_S)
    min_entry_bytes: int = schema.saved(schema.integer, 0)

    WHERE = "user_cache"


def _rows(value: Any, where: str) -> dict[str, CacheRow]:
    """The rows by variant: flat, and nested where something was nested."""
    rows = schema.obj(value, where)
    for name in rows:
        if name not in VARIANTS:
            fail(f"{where}.{name}", "a row named flat or nested", name)
    return {k: CacheRow(k, **schema.fields(v, CacheRow.FIELDS, f"{where}.{k}"))
            for k, v in rows.items()}


@dataclass(frozen=True)
class SecondStart(schema.Saved):
    """A second start with a warm persistent cache, per variant: ``Comparison.second_start``."""

    rows: dict[str, CacheRow] = schema.saved(_rows)
    user: UserCache = schema.saved(UserCache.from_dict, key="user_cache", missing=UserCache(),
                                   factory=UserCache)
    #: Why measuring ended early (PARTIAL), if it did; another thread's compiles.
    stopped: str | None = schema.saved(schema.optional(schema.text), None)
    warned: tuple[Noted, ...] = schema.saved(read_notes, (), key="warnings")
    #: Each variant's median XLA compile in the comparison, with no cache.
    compile_s: dict[str, float] = schema.saved(schema.mapping(schema.seconds), {})
    rounds: int = schema.saved(schema.count, 0)
    rounds_ended: str | None = schema.saved(ROUNDS_ENDED, None)

    WHERE = "second_start"
    FIELDS = (("nesting", "nesting_said", None, None),)

    warnings = said_in("warned")

    def __getitem__(self, name: str) -> CacheRow:
        return self.rows[name]

    @property
    def nested_read(self) -> bool:
        """Whether both variants were measured and both read the cache."""
        return all(n in self.rows and self.rows[n].read for n in VARIANTS)

    def clock(self) -> Clock:
        """The clock flat and nested warm starts are compared on."""
        return clock_for([samples(self.rows[n].warm) for n in VARIANTS if n in self.rows])

    @property
    def nesting(self) -> Difference:
        """Nested warm against flat warm first calls by the one rule."""
        if not self.nested_read:
            return difference([], [])
        return _first_calls(self["flat"].warm, self["nested"].warm)

    @property
    def python_nesting(self) -> Difference:
        """Nested's warm trace and lowering against flat's by the one rule."""
        if not self.nested_read:
            return difference([], [])
        return difference(self["flat"].warm_python(), self["nested"].warm_python())

    def uncached(self) -> dict[str, float]:
        """Variant → median compile, of those too fast for the user's JAX to cache."""
        out = {}
        for name, row in self.rows.items():
            compiled = self.compile_s.get(name, row.compile_s)
            if compiled is not None and compiled < self.user.min_compile_s:
                out[name] = compiled
        return out

    @property
    def nesting_said(self) -> dict[str, Any]:
        """:attr:`nesting` as saved (written, never read back)."""
        return {"kind": self.nesting.kind, "ratio": json_number(self.nesting.ratio)}


#: What in the user's own settings keeps their JAX from caching a program.
Unset = Literal["switched off", "no folder", "too fast"]
SWITCHED_OFF, NO_FOLDER, TOO_FAST = get_args(Unset)


def cache_unset(s: SecondStart) -> list[Unset]:
    """What in the user's own settings keeps their JAX from caching this program."""
    u, out = s.user, list[Unset]()
    if not u.enabled:
        out.append(SWITCHED_OFF)
    if not u.folder_set:
        out.append(NO_FOLDER)
    if s.uncached() and any(r.read for r in s.rows.values()):
        out.append(TOO_FAST)
    return out

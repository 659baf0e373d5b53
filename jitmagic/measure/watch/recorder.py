"""The :class:`Recorder`: every trace, lowering and compile JAX makes while the user's code runs,
with JAX's reason, its seconds and the innermost user line; all is put back, Ctrl-C held."""

from __future__ import annotations

import contextlib
import linecache
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ..._compat import EAGER_DISPATCH, JIT_AHEAD, JIT_EQUATION, JitEntry, jit_entry, traced_file
from ...interrupts import interrupts_held
from ...model.ledger import MAX_KEPT, MAX_STALE, Gate, Ledger
from ...model.ledger.compiles import (
    EAGER,
    FIRST,
    MAX_EXPLAINED,
    NEW_FUNCTION,
    PYTREE,
    SHARDING,
    STATIC,
    UNEXPLAINED,
    Compile,
    Noted,
    Omitted,
    Reason,
)
from ...usercode import jax_file, user_file
from ..sampling import clocks
from ..sampling.monitor import unregister
from . import channel, stale
from .reasons import Miss, named, static_field

EVENTS = {"/jax/core/compile/jaxpr_trace_duration": "trace_s",
          "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower_s",
          "/jax/core/compile/backend_compile_duration": "compile_s"}
#: A line's text kept for the ledger (and the ``%jitcompare`` it suggests).
MAX_LINE = 200
#: Misses waiting for their trace on one thread, and traces whose reads are kept: the most.
MAX_PENDING, MAX_READS = 64, 1000


@dataclass
class _Open:
    """A compile being recorded: its stages arrive one event at a time."""

    function: str
    miss: Miss | None
    thread: threading.Thread
    call_site: str | None
    call_text: str | None
    eager: bool
    at_s: float
    explained: bool = True  # JAX still explained misses when it began
    #: A function traced for it that JAX said was made anew on its line (an eager
    #: ``lax.scan``'s body defined in a loop).
    made_anew: Miss | None = None
    inner: tuple[str, ...] = ()  # the jits traced inside its trace, not compiled apart
    defined_at: str | None = None  # :func:`_defined`
    cleared: int = 0  # jitmagic's own measurements (each clears the caches) before it
    seconds: dict[str, float] = field(default_factory=dict)


class Recorder:
    """Records compiles between :meth:`start` and :meth:`stop`; ``on_again`` hears recompiles."""

    def __init__(self, *, max_kept: int = MAX_KEPT,
                 on_again: Callable[[Compile], None] | None = None) -> None:
        self.watched = threading.current_thread()
        self.max_kept, self.on_again = max_kept, on_again
        self._open: list[_Open] = []
        self._omitted: dict[str, list[Any]] = {}
        self._pending: dict[int, list[Miss]] = {}
        self._lock = threading.Lock()
        self._undo = contextlib.ExitStack()
        self._start = self._end = 0.0
        self._before: set[threading.Thread] = set()
        self._explained = 0
        self._stopped_explaining: float | None = None
        self._live: _Decider | None = None
        self._reads: list[stale.Traced] = []
        self._cleared = 0  # jitmagic's own compiles seen: each measurement clears the caches

    def start(self) -> None:
        """Subscribe and listen; what was set is put back if this fails half way."""
        import jax

        self._before = set(threading.enumerate()) - {self.watched}
        self._live = _Decider(self.watched, self._before)
        try:
            with interrupts_held():
                self._undo.callback(channel.unsubscribe, self)
                channel.subscribe(self)
                self._undo.callback(unregister, jax.monitoring.unregister_event_duration_listener,
                                    self._on_duration)
                jax.monitoring.register_event_duration_secs_listener(self._on_duration)
        except BaseException:
            self.stop()
            raise
        self._start = clocks.wall()

    def stop(self) -> None:
        """Put back everything :meth:`start` set, last first, Ctrl-C held (again: nothing)."""
        if self._start and not self._end:
            self._end = clocks.wall()
        with interrupts_held():
            self._undo.close()

    def __enter__(self) -> Recorder:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def on_miss(self, miss: Miss) -> None:
        """A miss explained on this thread waits for its trace; enough stop JAX explaining."""
        if _measuring():
            return
        with self._lock:
            pending = self._pending.setdefault(threading.get_ident(), [])
            pending.append(miss)
            del pending[:-MAX_PENDING]
            self._explained += 1
            enough = self._explained >= MAX_EXPLAINED and self._stopped_explaining is None
        if enough:  # the user's own explanations, had they turned them on, go on
            channel.stop_explaining()

    def explanations_stopped(self) -> None:
        """The channel turned JAX's explanations off: later compiles are not explained."""
        if self._stopped_explaining is None:
            self._stopped_explaining = clocks.wall() - self._start if self._start else 0.0

    def _on_duration(self, event: str, duration_secs: float, **kw: Any) -> None:
        stage = EVENTS.get(event)
        if stage is None:
            return
        if _measuring():  # not the run's: jitmagic.compare() measuring, from cleared caches
            self._cleared += 1
            return
        name = str(kw.get("fun_name", "?"))
        if stage != "trace_s" and name.startswith("jit(") and name.endswith(")"):
            name = name[4:-1]
        if stage == "trace_s" and sys.exc_info()[0] is not None:
            with self._lock:  # a trace that raised compiles nothing: its miss goes with it
                self._miss_for(name)
            return
        with self._lock:
            thread = threading.current_thread()
            found = None if stage == "trace_s" else next(
                (c for c in reversed(self._open) if c.thread is thread
                 and c.function == name and stage not in c.seconds), None)
            if found is None and len(self._open) >= self.max_kept:
                self._tally(name, duration_secs, stage)
                return
            if found is None:
                found = self._opened(name, self._miss_for(name))
            found.seconds[stage] = duration_secs
            # a trace that reaches no XLA compile (jax.eval_shape, jax.make_jaxpr, a jit
            # traced inside another's trace) is no compile: said once XLA compiled it
            said = self._said_live(found) if stage == "compile_s" else None
        if said is not None and self.on_again is not None:
            self.on_again(said)

    def _said_live(self, opened: _Open) -> Compile | None:
        """``opened``'s record where it compiles a function of the run's again; else None."""
        if self.on_again is None or self._live is None:
            return None
        before = self._open[:next(i for i, o in enumerate(self._open) if o is opened)]
        c = self._live.decide(opened, inlined=opened.function in _inlined(before))
        again = c.reason.kind != FIRST and not c.eager and c.in_run
        return c if again else None

    def _miss_for(self, name: str) -> tuple[Miss | None, Miss | None, tuple[str, ...]]:
        """The miss logged for ``name``, the first other one made anew on its line, and the rest."""
        pending = self._pending.pop(threading.get_ident(), [])
        own = next((m for m in pending if m.function == name), None)
        anew = next((m for m in pending if m is not own and m.same_line), None)
        return own, anew, tuple(m.function for m in pending if m is not own and m is not anew)

    def _opened(self, name: str,
                misses: tuple[Miss | None, Miss | None, tuple[str, ...]]) -> _Open:
        site, text, eager, entry = _caller()
        miss, anew, inner = misses
        fun = stale.traced(entry.fun, entry.args) if entry is not None and not eager else None
        defined = _defined(miss, None if eager else entry, fun)
        if miss is not None:  # named now: the class may be gone when the run has ended
            miss = _with_field(miss)
        if entry is not None and fun is not None and (found := stale.reads(fun)):
            # compared with the values at the end of the run
            self._reads.append(stale.Traced(name, defined, stale.alive(fun), found,
                                            stale.inputs(entry.args)))
            del self._reads[:-MAX_READS]
        if site is None and miss is not None:
            site = miss.call_site
        opened = _Open(name, miss, threading.current_thread(), site, text, eager,
                       clocks.wall() - self._start, self._stopped_explaining is None,
                       made_anew=anew, inner=inner, defined_at=defined,
                       cleared=self._cleared)
        self._open.append(opened)
        return opened

    def _tally(self, name: str, secs: float, stage: str) -> None:
        """A compile past ``max_kept``: counted at its XLA compile, its seconds added."""
        if stage == "trace_s":
            self._pending.pop(threading.get_ident(), None)
        count = self._omitted.get(name)
        if count is None:  # [compiles, seconds, again, their seconds, is the last again]
            seen = any(c.function == name and "compile_s" in c.seconds for c in self._open)
            count = self._omitted[name] = [0, 0.0, 0, 0.0, seen]
        if stage == "compile_s":
            count[0] += 1
            count[2] += count[4]
            count[1] += secs
            count[3] += secs if count[4] else 0.0
            count[4] = True

    def ledger(self, *, source: str = "the cell", source_file: str | None = None,
               error: str | None = None, stopped: bool = False,
               gate: Gate | None = None) -> Ledger:
        """What was recorded, each compile's reason decided against the ones before it."""
        import jax

        with self._lock:
            opened = list(self._open)
            omitted = tuple(Omitted(name, n, s, again, again_s)
                            for name, (n, s, again, again_s, _) in self._omitted.items())
            reads = list(self._reads)
        kept = tuple(stale.stale(reads))[:MAX_STALE]
        end = self._end or clocks.wall()
        return Ledger(tuple(_decided(opened, self.watched, self._before)),
                      wall_s=end - self._start, source=source, source_file=source_file,
                      error=error, stopped=stopped, omitted=omitted, gate=gate or Gate(),
                      thread=self.watched.name, explained_until_s=self._stopped_explaining,
                      jax_version=jax.__version__, stale=kept,
                      created=time.strftime("%Y-%m-%dT%H:%M:%S%z"))


def _decided(opened: list[_Open], watched: threading.Thread,
             before: set[threading.Thread]) -> Iterator[Compile]:
    """Each recorded compile that reached an XLA compile, with its reason, in order."""
    decider = _Decider(watched, before)
    inlined: set[str] = set()
    for c in opened:
        if "compile_s" in c.seconds:
            yield decider.decide(c, inlined=c.function in inlined)
        inlined |= _inlined([c])


def _inlined(opened: list[_Open]) -> set[str]:
    """The functions these records traced with no XLA compile of their own."""
    return {name for c in opened for name in
            (*c.inner, *((c.function,) if "compile_s" not in c.seconds else ()))}


class _Decider:
    """Decides each compile's reason against the ones before it, fed in the order they began."""

    def __init__(self, watched: threading.Thread, before: set[threading.Thread]) -> None:
        self.watched, self.before = watched, before
        self.seen: dict[tuple[str, str | None], set[int | None]] = {}
        self.defined_as: dict[str, str | None] = {}  # where each name's last miss said
        self.cleared: dict[tuple[str, str | None], int] = {}  # as each key last compiled

    def decide(self, c: _Open, *, inlined: bool = False) -> Compile:
        """``c``'s record; ``inlined``: traced before with no compile (its first is a warm-up)."""
        miss = c.miss
        if miss is not None or c.defined_at is not None:
            self.defined_as[c.function] = c.defined_at
        defined = self.defined_as.get(c.function)
        key = (c.function, defined)
        traced = "trace_s" in c.seconds
        reason = _reason(miss, self.seen.get(key), c.eager, c.made_anew, traced) \
            if c.explained or miss is not None \
            else Reason(FIRST if key not in self.seen else UNEXPLAINED, noted=Noted.NOT_EXPLAINED)
        if inlined and key not in self.seen and reason.kind != FIRST:
            reason = Reason(FIRST, text=reason.text, noted=reason.noted)
        if key in self.seen and c.cleared > self.cleared[key] and not c.eager:
            reason = Reason(FIRST, text=reason.text, noted=Noted.CLEARED_BY_JITMAGIC)
        self.cleared[key] = c.cleared
        self.seen.setdefault(key, set()).add(miss.function_id if miss is not None else None)
        return Compile(c.function, reason, defined_at=defined, call_site=c.call_site,
                       call_text=c.call_text, thread=c.thread.name,
                       in_run=c.thread is self.watched or c.thread not in self.before,
                       eager=c.eager, at_s=c.at_s, **c.seconds)


def _reason(miss: Miss | None, ids_before: set[int | None] | None, eager: bool,
            made_anew: Miss | None = None, traced: bool = True) -> Reason:
    """A compile's reason, given its miss and the function's earlier compiles."""
    if miss is None:
        if ids_before is None:
            return Reason(FIRST)
        if eager and made_anew is not None:
            return Reason(NEW_FUNCTION, made_anew.function, text=made_anew.reason.text)
        if not eager and not traced:
            return Reason(SHARDING, noted=Noted.REUSED_TRACE)
        return Reason(EAGER if eager else UNEXPLAINED)
    if miss.reason.kind in (STATIC, PYTREE) or miss.reason.also:
        argument = named(miss.reason.kind, miss.reason.argument, miss.defined_at)
        return replace(miss.reason, argument=argument, also=tuple(
            replace(c, argument=named(c.kind, c.argument, miss.defined_at))
            for c in miss.reason.also))
    if miss.reason.kind != FIRST or ids_before is None:
        return miss.reason
    if miss.function_id not in ids_before or miss.same_line:  # another object, or a line
        return Reason(NEW_FUNCTION, text=miss.reason.text)  # that makes one on each pass
    return Reason(UNEXPLAINED, noted=Noted.CLEARED_OR_NEW)


def _with_field(miss: Miss) -> Miss:
    """``miss`` with its static value named by the Equinox field, while its class is loaded."""
    field_ = static_field(miss.reason.before, miss.reason.after) \
        if miss.reason.kind == STATIC else None
    if field_ is None:
        return miss
    return replace(miss, reason=replace(miss.reason, argument=field_[0], before=field_[1],
                                        after=field_[2]))


#: jitmagic's measuring code, less the watch's own and the child-process runner.
_MEASURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")
_NOT_MEASURING = (os.path.join(os.path.dirname(os.path.abspath(__file__)), ""),
                  os.path.join(_MEASURE, "children", ""))


def _measuring() -> bool:
    """Whether jitmagic's own measuring is on this stack: its compiles are not the run's."""
    names = (f.f_code.co_filename for f, _ in traceback.walk_stack(sys._getframe(2)))
    return any(n.startswith(_MEASURE) and not n.startswith(_NOT_MEASURING) for n in names)


def _caller() -> tuple[str | None, str | None, bool, JitEntry | None]:
    """(``file:line`` and text of the innermost user frame, whether eager, the jit's entry)."""
    frame = sys._getframe(2)
    site = text = None
    entry = jit_entry(frame)
    eager = _jax_made(entry) if entry is not None else jax_file(traced_file(frame))
    while frame is not None:
        code = frame.f_code
        if entry is None and code.co_name == EAGER_DISPATCH[1] \
                and code.co_filename.endswith(EAGER_DISPATCH[0]):
            eager = True  # (a JAX that names its jit's entries otherwise)
        if user_file(code.co_filename):  # eager only where dispatch is inside the call
            site = f"{code.co_filename}:{frame.f_lineno}"
            text = linecache.getline(code.co_filename, frame.f_lineno).strip()[:MAX_LINE]
            break
        frame = frame.f_back  # type: ignore[assignment]
    return site, text or None, eager, entry


def _defined(miss: Miss | None, entry: JitEntry | None, fun: Any) -> str | None:
    """Where a jit's function was defined: JAX's place, else the user's function's."""
    said = miss.defined_at if miss is not None else None
    if fun is not None and not user_file((said or "").rpartition(":")[0]):
        return stale.place(fun)
    return said or (stale.place(entry.fun) if entry is not None else None)


def _jax_made(entry: JitEntry) -> bool:
    """Whether JAX made the jit (an eager op), by who made it, not by the traced file."""
    if entry.kind in JIT_AHEAD or entry.of_a_jit:  # the user's .lower(), a jit of a jit
        return False
    if entry.source is None or not jax_file(entry.source):  # the user's function, or a
        return False  # library's (flax's model.apply) under the user's jit
    if entry.kind == JIT_EQUATION:  # an eager grad or vmap of a jit: whose jit it was
        return True
    # JAX calling its own jit, or the user calling one JAX decorated (jnp.linalg.solve);
    # the user's own jax.jit of a JAX function is neither
    return entry.caller is None or jax_file(entry.caller) or entry.jax_decorated

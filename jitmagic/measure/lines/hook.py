"""The hook ``--lines`` traces under: hits and Python time per user line, calls per user function,
by ``sys.monitoring`` (:class:`MonitoringHook`) or, when asked for, ``sys.settrace``."""

from __future__ import annotations

import sys
import types
from collections import Counter
from collections.abc import Callable
from typing import Any

from ...model.notes import Parts
from ..sampling import clocks

#: ``is_user(code, frame_globals)``: whether a code object is the user's.
IsUser = Callable[[types.CodeType, dict], bool]

#: ``make_hook`` kinds.
HOOKS = ("auto", "monitoring", "settrace", "none")


class Tally:
    """Hits, seconds and calls per line and code object; a frame's state is ``[line,
    start, an outer frame holds that line (time counted once), the line it yielded on]``."""

    def __init__(self) -> None:
        self.hits: Counter = Counter()
        self.seconds: Counter = Counter()
        self.calls: Counter = Counter()
        self._held: Counter = Counter()

    @staticmethod
    def new_state() -> list[Any]:
        return [None, 0.0, False, None]

    def line(self, state: list[Any], key: tuple[str, int], now: float) -> None:
        """The frame whose ``state`` this is moved on to line ``key``."""
        self.close(state, now)
        state[0], state[1] = key, now
        self.hits[key] += 1
        state[2] = self._held[key] > 0
        self._held[key] += 1

    def close(self, state: list[Any], now: float) -> None:
        """The frame's current line ended (a new line, a return, a yield)."""
        key = state[0]
        if key is not None:
            if not state[2]:
                self.seconds[key] += now - state[1]
            self._held[key] -= 1
            state[0] = None


class SettraceHook:
    """Per-line counts from ``sys.settrace``, chained to the tracer set before."""

    def __init__(self, is_user: IsUser):
        self.is_user, self.tally = is_user, Tally()
        self._previous: Any = None

    def run(self, fn: Callable[[], Any]) -> Any:
        """Call ``fn`` under the hook; whatever tracer was there before is put back."""
        self._previous = sys.gettrace()
        sys.settrace(self._on_call)
        try:
            return fn()
        finally:
            sys.settrace(self._previous)

    def _on_call(self, frame: types.FrameType, event: str, arg: Any) -> Callable | None:
        theirs = self._previous(frame, event, arg) if self._previous is not None else None
        if frame.f_trace is not None and getattr(frame.f_trace, "jitmagic_state", None):
            return frame.f_trace  # a generator resumed: keep its tracer and state
        if not self.is_user(frame.f_code, frame.f_globals):
            return theirs
        self.tally.calls[frame.f_code] += 1
        return self._frame_tracer(frame.f_code.co_filename, theirs)

    def _frame_tracer(self, file: str, theirs: Callable | None) -> Callable:
        tally, clock = self.tally, clocks.wall
        state = tally.new_state()
        chained = [theirs]

        def tracer(frame: types.FrameType, event: str, arg: Any) -> Callable:
            now = clock()
            if event == "line":
                tally.line(state, (file, frame.f_lineno), now)
            elif event == "return":
                tally.close(state, now)
            if chained[0] is not None:
                chained[0] = chained[0](frame, event, arg)
            return tracer

        tracer.jitmagic_state = state  # type: ignore[attr-defined]
        return tracer


class MonitoringHook:
    """Per-line counts from ``sys.monitoring`` (3.12+), local events on user code only."""

    def __init__(self, is_user: IsUser, tool: int):
        self.is_user, self.tool, self.tally = is_user, tool, Tally()
        self._frames: dict[types.FrameType, list[Any]] = {}
        self._local: set[types.CodeType] = set()

    def run(self, fn: Callable[[], Any]) -> Any:
        mon = sys.monitoring  # type: ignore[attr-defined]
        ev = mon.events
        mon.use_tool_id(self.tool, "jitmagic --lines")
        callbacks = {ev.PY_START: self._start, ev.LINE: self._line, ev.PY_RETURN: self._end,
                     ev.PY_YIELD: self._yield, ev.PY_RESUME: self._resume,
                     ev.PY_UNWIND: self._end}
        try:
            for event, callback in callbacks.items():
                mon.register_callback(self.tool, event, callback)
            mon.set_events(self.tool, ev.PY_START | ev.PY_UNWIND)
            return fn()
        finally:
            mon.set_events(self.tool, 0)
            for code in self._local:
                mon.set_local_events(self.tool, code, 0)
            for event in callbacks:
                mon.register_callback(self.tool, event, None)
            mon.free_tool_id(self.tool)
            mon.restart_events()  # what DISABLE switched off, for whoever takes the id next

    def _start(self, code: types.CodeType, offset: int) -> Any:
        frame = sys._getframe(1)
        if not self.is_user(code, frame.f_globals):
            return sys.monitoring.DISABLE  # type: ignore[attr-defined]
        if code not in self._local:
            ev = sys.monitoring.events  # type: ignore[attr-defined]
            sys.monitoring.set_local_events(  # type: ignore[attr-defined]
                self.tool, code, ev.LINE | ev.PY_RETURN | ev.PY_YIELD | ev.PY_RESUME)
            self._local.add(code)
        self.tally.calls[code] += 1
        self._frames[frame] = self.tally.new_state()
        return None

    def _state(self) -> list[Any]:
        frame = sys._getframe(2)
        state = self._frames.get(frame)
        if state is None:
            state = self._frames[frame] = self.tally.new_state()
        return state

    def _line(self, code: types.CodeType, line: int) -> None:
        self.tally.line(self._state(), (code.co_filename, line), clocks.wall())

    def _yield(self, code: types.CodeType, offset: int, value: Any) -> None:
        state = self._state()
        state[3] = state[0]
        self.tally.close(state, clocks.wall())

    def _resume(self, code: types.CodeType, offset: int) -> None:
        state = self._state()
        if state[3] is not None:  # one pass more of the line it yielded on
            self.tally.line(state, state[3], clocks.wall())

    def _end(self, code: types.CodeType, offset: int, value: Any) -> None:
        """A return or an unwind (``value``: the result or the exception)."""
        state = self._frames.pop(sys._getframe(1), None)
        if state is not None:
            self.tally.close(state, clocks.wall())


Hook = SettraceHook | MonitoringHook


def free_tool_id() -> int | None:
    """A ``sys.monitoring`` tool id no one holds (the profiler's first), or None."""
    mon = getattr(sys, "monitoring", None)
    return None if mon is None else next(
        (t for t in (mon.PROFILER_ID, 3, 4) if mon.get_tool(t) is None), None)


def why_no_hook(kind: str) -> Parts:
    """The note of a table without a hook: not asked, no free tool id, no monitoring."""
    why = "not_asked" if kind == "none" else \
        "no_tool_id" if hasattr(sys, "monitoring") else "no_monitoring"
    return Parts("no_line_hook", why, f"{sys.version_info.major}.{sys.version_info.minor}")


def make_hook(is_user: IsUser, kind: str = "auto") -> Hook | None:
    """The hook of ``kind`` (``auto``: ``sys.monitoring`` where a tool id is free)."""
    if kind not in HOOKS:
        raise ValueError(f"hook {kind!r}: expected one of {', '.join(HOOKS)}")
    if kind == "none":
        return None
    tool = free_tool_id() if kind != "settrace" else None
    if tool is not None:
        return MonitoringHook(is_user, tool)
    return SettraceHook(is_user) if kind != "auto" else None

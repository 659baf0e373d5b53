"""The ``sys.settrace`` hook ``--lines`` runs one extra trace under: how often each user
line ran, and the Python time spent on it."""

from __future__ import annotations

import sys
import time
import types
from collections import Counter
from collections.abc import Callable
from typing import Any

from .conditions import paused_gc
from .line_counts import UserCode


class LineHook:
    """A ``sys.settrace`` hook that counts line events and Python time per user line.

    Time runs from one line event to the next in the same frame (callees'
    time included, as in ``%lprun``), and includes the hook's own overhead.
    """

    def __init__(self, user: UserCode):
        self.user = user
        self.hits: Counter = Counter()
        self.seconds: Counter = Counter()
        self.calls: Counter = Counter()
        self.held: Counter = Counter()  # frames now on each line: time is counted once

    def run(self, fn: Callable[[], Any]) -> Any:
        """Call ``fn`` under the hook; whatever hook was there before is put back."""
        previous = sys.gettrace()
        sys.settrace(self._on_call)
        try:
            with paused_gc():
                return fn()
        finally:
            sys.settrace(previous)

    def _on_call(self, frame: types.FrameType, event: str, arg: Any) -> Callable | None:
        if frame.f_trace is not None:  # a generator resumed: keep its tracer and state
            return frame.f_trace
        if not self.user.is_user(frame.f_code, frame.f_globals):
            return None
        self.calls[frame.f_code] += 1
        return self._frame_tracer(frame.f_code.co_filename)

    def _frame_tracer(self, file: str) -> Callable:
        hits, seconds, held, clock = self.hits, self.seconds, self.held, time.perf_counter
        # [line key, when it started, whether an outer frame already holds that line]
        state: list[Any] = [None, 0.0, False]

        def tracer(frame: types.FrameType, event: str, arg: Any) -> Callable:
            now = clock()
            if state[0] is not None and event in ("line", "return"):
                if not state[2]:  # a generator on its caller's line: counted once
                    seconds[state[0]] += now - state[1]
                held[state[0]] -= 1
                state[0] = None  # after a return (or a yield) no line runs here
            if event == "line":
                key = state[0] = (file, frame.f_lineno)
                hits[key] += 1
                state[2] = held[key] > 0
                held[key] += 1
            state[1] = now
            return tracer

        return tracer

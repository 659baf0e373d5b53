"""Ctrl-C held while jitmagic puts something of the user's back: the one hold that every
put-back uses (helpers' bindings, JAX's cache settings, the profiler, the listeners, the
scratch folders), so that no number of presses leaves anything half way.

A low-level module (the standard library only): the measuring parts import it, and so
can anything above them.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from contextlib import ExitStack
from contextlib import contextmanager
from typing import Any


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Within, a SIGINT is only noted; after, each one noted goes to the SIGINT handler
    there was before, in order. Nothing is held off the main thread (no Python signal
    handler runs there), nor where that handler is not Python's (``SIG_DFL``, ``SIG_IGN``,
    one set outside Python). Nested holds hand their presses to the outer one."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main else None
    noted: list[Any] = []
    if not callable(previous):
        yield
        return
    signal.signal(signal.SIGINT, lambda signum, frame: noted.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        raised: BaseException | None = None
        for frame in noted:  # every press counts (a measurement's second one abandons it)
            try:
                previous(signal.SIGINT, frame)
            except BaseException as exc:  # noqa: BLE001 (raised below: the last one wins)
                raised = exc
        if raised is not None:
            raise raised


@contextmanager
def exits_held(*managers: AbstractContextManager[Any]) -> Iterator[list[Any]]:
    """Each of ``managers`` entered in order (their values, in a list), and exited in
    reverse with interrupts held (:func:`interrupts_held`), whatever ends the block: what
    each puts back is put back whole, and a Ctrl-C pressed meanwhile comes after it. The
    entering is held too, so that a manager that has begun to change something is always
    exited."""
    stack = ExitStack()
    try:
        with interrupts_held():
            values = [stack.enter_context(m) for m in managers]
        yield values
    except BaseException:
        with interrupts_held():
            if not stack.__exit__(*sys.exc_info()):
                raise
    else:
        with interrupts_held():
            stack.close()

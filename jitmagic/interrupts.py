"""Ctrl-C held while jitmagic puts something of the user's back: the one mechanism every hold uses
(:class:`CtrlCHeld`; :func:`interrupts_held` over a block), so that no number of presses leaves
anything half way; and held while JAX is first imported (:func:`held_while_importing`).
Standard library only."""

from __future__ import annotations

import importlib.abc
import importlib.util
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from contextlib import ExitStack
from contextlib import contextmanager
from typing import Any


class CtrlCHeld:
    """Ctrl-C as usual from :meth:`install` until :meth:`hold`, then noted (``pressed``) and not
    raised until :meth:`release`. The handler is set once, before the measurement, on the main
    thread only and over a handler set from Python; an ignored or default SIGINT is left as it is.
    ``visible``: whether :meth:`current` finds it (a block's own hold is not)."""

    def __init__(self, visible: bool = True) -> None:
        #: When each Ctrl-C held came (``time.monotonic()``).
        self.pressed: list[float] = []
        #: The frame each held Ctrl-C came in, for :meth:`replay`.
        self._frames: list[Any] = []
        self._previous: Any = None
        self._installed = self._holding = False
        self._visible = visible

    @property
    def installed(self) -> bool:
        return self._installed

    def install(self) -> None:
        """Set the handler, which hands each Ctrl-C on to the one there was until :meth:`hold`."""
        if self._installed or threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGINT)
        if callable(previous):  # not ignored, not the default, set from Python
            self._previous, self._installed = previous, True
            signal.signal(signal.SIGINT, self._handle)

    @staticmethod
    def current() -> CtrlCHeld | None:
        """The visible one whose handler is SIGINT's now (a caller's), under any block's own
        holds."""
        held = getattr(signal.getsignal(signal.SIGINT), "__self__", None)
        while isinstance(held, CtrlCHeld) and not held._visible:
            held = getattr(held._previous, "__self__", None)
        return held if isinstance(held, CtrlCHeld) else None

    def _handle(self, signum: int, frame: Any) -> None:
        if self._holding:
            self.pressed.append(time.monotonic())
            self._frames.append(frame)
        else:
            self._previous(signum, frame)

    def hold(self) -> None:
        self._holding = True

    def release(self) -> None:
        """The handler there was is back (what was pressed meanwhile stays noted)."""
        if self._installed:
            self._installed = self._holding = False
            signal.signal(signal.SIGINT, self._previous)

    def replay(self) -> None:
        """Each Ctrl-C noted goes to the handler there was, in order (after :meth:`release`); what
        a handler raises is raised after all are handed on, the last one winning."""
        raised: BaseException | None = None
        frames, self._frames = self._frames, []
        for frame in frames:
            try:
                self._previous(signal.SIGINT, frame)
            except BaseException as exc:  # noqa: BLE001 (raised below: the last one wins)
                raised = exc
        if raised is not None:
            raise raised

    @property
    def last(self) -> float | None:
        return self.pressed[-1] if self.pressed else None

    def twice(self, within_s: float) -> bool:
        """Whether two of the Ctrl-C held came within ``within_s`` seconds of each other."""
        return any(b - a < within_s for a, b in zip(self.pressed, self.pressed[1:],
                                                    strict=False))


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Within, a SIGINT is only noted; after, each one goes to the handler there was, in order.
    Nothing is held off the main thread or over a handler not Python's; nested holds hand their
    presses to the outer one."""
    held = CtrlCHeld(visible=False)
    held.install()
    held.hold()
    if not held.installed:
        yield
        return
    try:
        yield
    finally:
        held.release()
        held.replay()


@contextmanager
def exits_held(*managers: AbstractContextManager[Any]) -> Iterator[list[Any]]:
    """Each of ``managers`` entered in order (their values, in a list) and exited in reverse,
    entering and exiting with interrupts held, whatever ends the block."""
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


def held_while_importing(name: str) -> None:
    """Ctrl-C held while module ``name`` is first imported, then handed on (JAX's import collects
    often, and a Ctrl-C raised in its gc callback is dropped by Python): a finder first on
    ``sys.meta_path``, gone once it found ``name``, wraps the loader the other finders give."""
    if name not in sys.modules:
        sys.meta_path.insert(0, _HeldFinder(name))


class _HeldFinder(importlib.abc.MetaPathFinder):
    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != self.name:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _HeldLoader(spec.loader)
        return spec


class _HeldLoader(importlib.abc.Loader):
    """The module's own loader, its ``exec_module`` run with interrupts held."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        with interrupts_held():
            self.loader.exec_module(module)

"""Ctrl-C held while jitmagic puts something of the user's back, the one mechanism every hold uses,
and while JAX is first imported. Standard library only."""

from __future__ import annotations

import importlib.abc
import importlib.util
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Any


class CtrlCHeld:
    """Ctrl-C as usual from :meth:`install` until :meth:`hold`, then only noted until
    :meth:`release` (main thread only, over a handler set from Python)."""

    def __init__(self, visible: bool = True) -> None:
        #: When each Ctrl-C held came (``time.monotonic()``).
        self.pressed: list[float] = []
        #: The frame each held Ctrl-C came in, for :meth:`replay`.
        self._frames: list[Any] = []
        self._previous: Any = None
        #: Whether its handler is SIGINT's (set by :meth:`install`, not yet released).
        self.installed = self._holding = False
        self._visible = visible

    def install(self) -> None:
        """Set the handler, which hands each Ctrl-C on to the one there was until :meth:`hold`."""
        if self.installed or threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGINT)
        if callable(previous):  # not ignored, not the default, set from Python
            self._previous, self.installed = previous, True
            signal.signal(signal.SIGINT, self._handle)

    @staticmethod
    def current() -> CtrlCHeld | None:
        """The visible hold whose handler is SIGINT's now, under any block's own."""
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
        if self.installed:
            self.installed = self._holding = False
            signal.signal(signal.SIGINT, self._previous)

    def replay(self) -> None:
        """Each Ctrl-C noted goes to the handler there was, in order; the last raise wins."""
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
    """Within, a SIGINT is only noted; after, each goes to the handler there was, in order."""
    held = CtrlCHeld(visible=False)
    held.install()
    held.hold()
    try:
        yield
    finally:  # where it could not install (another thread), nothing was noted
        held.release()
        held.replay()


@contextmanager
def exits_held(*managers: AbstractContextManager[Any]) -> Iterator[list[Any]]:
    """``managers`` entered in order and exited in reverse, all with interrupts held."""
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
    """Ctrl-C held while module ``name`` is first imported (Python drops one raised in a gc
    callback)."""
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

"""The fallback way to find helpers, for a trace that raises: one trace under a
``sys.setprofile`` hook that counts user calls from user frames and reads their bindings."""

from __future__ import annotations

import _lsprof
import os
import sys
import types
import warnings
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any

import jax

from ...usercode import PACKAGE_DIR
from ..calls.arguments import holds_arrays
from .bindings import Binding
from .found import Discovery
from .found import Found
from .found import UserFunctions
from .found import code_of
from .found import global_bindings
from .found import helper_name
from .found import unique_names
from .live_objects import own_sourceless


class ProfileHook:
    """Counts calls of user code made from user code, and finds their bindings."""

    def __init__(self, extra_names: Iterable[str] = (),
                 own: Iterable[types.CodeType] = ()):
        self.is_user = UserFunctions(extra_names, own)
        self.found: dict[types.CodeType, Found] = {}
        self.searched: set[tuple[types.CodeType, int]] = set()
        self.sites: set[tuple] = set()
        self.stop: types.FrameType | None = None
        self.entry_module: str | None = None

    def __call__(self, frame: types.FrameType, event: str, arg: Any) -> None:
        if event == "call" and self.is_user(frame.f_code):
            self._record(frame, frame.f_code)

    def _record(self, frame: types.FrameType, code: types.CodeType) -> None:
        caller = self._user_caller(frame)
        if caller is None:  # the entry itself
            self.entry_module = self.entry_module or frame.f_globals.get("__name__")
            return
        found = self.found.get(code)
        if found is None:
            name = helper_name(code, frame.f_globals.get("__name__"), self.entry_module)
            found = self.found[code] = Found(name, code)
            if code.co_argcount and code.co_varnames[0] == "self":
                this = frame.f_locals.get("self")
                found.self_type, found.self_holds_arrays = type(this), holds_arrays(this)
        first = not found.call_sites
        site = (code, self._site(caller))
        if site not in self.sites:
            self.sites.add(site)
            found.call_sites += 1
        key = (code, id(caller.f_globals))
        if key not in self.searched:
            self.searched.add(key)
            found.bind(find_bindings(code, frame, caller), first)

    def _site(self, caller: types.FrameType | None) -> tuple:
        """The call site: the user frames from ``caller`` out, at their positions."""
        out = []
        while caller is not None:
            out.append((caller.f_code, _position(caller)))
            caller = self._user_caller(caller)
        return tuple(out)

    def _user_caller(self, frame: types.FrameType) -> types.FrameType | None:
        f = frame.f_back
        while f is not None and f is not self.stop:
            if self.is_user(f.f_code):
                return f
            f = f.f_back
        return None


def _position(frame: types.FrameType) -> Any:
    positions = list(frame.f_code.co_positions())
    return positions[frame.f_lasti // 2] if frame.f_lasti // 2 < len(positions) else None


def find_bindings(code: types.CodeType, frame: types.FrameType,
                  caller: types.FrameType) -> list[Binding]:
    """Where ``caller`` looks up the function running ``code`` in ``frame``."""
    klass = _method_class(code, frame)
    if klass is not None:
        return [Binding(klass, code.co_name)]
    keys = [k for k, v in list(caller.f_globals.items()) if code_of(v) is code]
    return global_bindings(code, caller.f_code, caller.f_globals, keys, frame.f_globals)


def _method_class(code: types.CodeType, frame: types.FrameType) -> type | None:
    """The class whose attribute holds ``code`` where it runs as a method of its first argument."""
    if not code.co_argcount:
        return None
    first = frame.f_locals.get(code.co_varnames[0])
    if first is None or isinstance(first, type):
        return None
    for klass in type(first).__mro__:
        if code_of(vars(klass).get(code.co_name)) is code:
            return klass
    return None


def profiled_discovery(fn: Callable, args: tuple, kwargs: dict[str, Any],
                       jit_options: dict[str, Any], extra_names: Iterable[str] = ()
                       ) -> Discovery:
    """Trace ``fn`` once under the hook; the user's exception is in ``Discovery.error``."""
    recorder = ProfileHook(extra_names, own_sourceless(fn))
    recorder.stop = sys._getframe()
    previous = sys.getprofile()
    jax.clear_caches()
    error, jaxpr = None, None
    sys.setprofile(recorder)
    try:
        jaxpr = jax.jit(fn, **jit_options).trace(*args, **kwargs).jaxpr
    except Exception as exc:  # the user's code: the caller decides what it means
        error = exc
    finally:
        restore_profiler(previous, fn)
        jax.clear_caches()
    return Discovery(unique_names(recorder.found.values()), error, jaxpr, profiled=True)


def restore_profiler(previous: Any, fn: Callable) -> None:
    """Put back the profiler that ran before: a C-level one by ``enable()``, a
    function as it was, any other left off with a warning."""
    if isinstance(previous, _lsprof.Profiler) or (
            previous is not None and not callable(previous)
            and callable(getattr(previous, "enable", None))):
        sys.setprofile(None)
        previous.enable()
    elif previous is None or callable(previous):
        sys.setprofile(previous)
    else:
        sys.setprofile(None)
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
        warnings.warn(f"jitmagic: the profiler that was running ({type(previous).__name__}) "
                      f"cannot be put back after tracing `{name}`: it is off now; start it "
                      "again", RuntimeWarning, stacklevel=_outside_jitmagic())


def _outside_jitmagic() -> int:
    """The ``stacklevel`` of the nearest caller outside jitmagic."""
    level = 2
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            PACKAGE_DIR):
        level, frame = level + 1, frame.f_back
    return level

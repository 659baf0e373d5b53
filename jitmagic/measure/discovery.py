"""Which of the user's functions a trace really calls, and where each one is bound.

One trace of the entry, from cleared caches, runs under ``sys.setprofile``.
Every call of *user code* is counted: code whose file is a notebook cell, a
``%%jitcompare`` cell, or a real file outside the interpreter's standard
library and site-packages (a local ``mylayers.py``), jitmagic excluded. A
call only counts as a helper when another user frame sits above it: the
entry itself is not its own helper. Names looked up in a code object prove
nothing (``jnp.sin`` puts ``sin`` there); a call that happens does.

For each helper the recorder also notes where its callers find it, so that a
variant can rebind it there for the duration of a trace:

* a method: the class in ``type(self).__mro__`` whose ``__dict__`` holds it;
* a function: the name bound to it in the nearest user caller's globals (a
  cell's scratch namespace, a module), else its own module's global of the
  same name (``L.dense`` looks it up there).

The hook returns at once for code that is not the user's (decided once per
code object), and any profiler that was active is put back afterwards.
"""

from __future__ import annotations

import _lsprof
import functools
import inspect
import os
import sys
import types
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import jax

from ..usercode import PACKAGE_DIR, sourceless, user_file
from .arrays import holds_arrays
from .bindings import Binding

_SKIP_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_NOT_FUNCTIONS = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<module>"})


@dataclass
class Found:
    """A user function the trace called from user code: its calls and where it is bound."""

    name: str
    code: types.CodeType
    calls: int = 0
    bindings: list[Binding] = field(default_factory=list)
    #: The class of ``self`` where it ran as a method (for saying why it stays inline).
    self_type: type | None = None
    #: Whether that ``self`` held arrays without being a pytree (jit cannot take it).
    self_holds_arrays: bool = False


class Recorder:
    """The profile hook: counts calls of user code made from user code, finds bindings."""

    def __init__(self, extra_names: Iterable[str] = ()):
        self.extra = set(extra_names)
        self.is_user: dict[types.CodeType, bool] = {}
        self.found: dict[types.CodeType, Found] = {}
        self.searched: set[tuple[types.CodeType, int]] = set()
        self.stop: types.FrameType | None = None
        self.entry_module: str | None = None

    def __call__(self, frame: types.FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        user = self.is_user.get(code)
        if user is None:
            user = self.is_user[code] = self._judge(code)
        if user:
            self._record(frame, code)

    def _judge(self, code: types.CodeType) -> bool:
        if code.co_flags & _SKIP_FLAGS:
            return False
        name = code.co_name
        if name.startswith("__") and name.endswith("__") and name != "__call__":
            return False
        if name in _NOT_FUNCTIONS:  # comprehensions, module bodies: part of their caller
            return False
        if code.co_qualname in self.extra or name in self.extra:  # named by --nest: code
            return user_file(code.co_filename) or sourceless(code.co_filename)  # no file too
        return user_file(code.co_filename)

    def _record(self, frame: types.FrameType, code: types.CodeType) -> None:
        caller = self._user_caller(frame)
        if caller is None:  # the entry itself
            self.entry_module = self.entry_module or frame.f_globals.get("__name__")
            return
        found = self.found.get(code)
        if found is None:
            found = self.found[code] = Found(self._name(frame, code), code)
            if code.co_argcount and code.co_varnames[0] == "self":
                this = frame.f_locals.get("self")
                found.self_type, found.self_holds_arrays = type(this), holds_arrays(this)
        found.calls += 1
        key = (code, id(caller.f_globals))
        if key not in self.searched:
            self.searched.add(key)
            for b in find_bindings(code, frame, caller):
                if b not in found.bindings:
                    found.bindings.append(b)
            if found.calls == 1 and found.bindings:
                found.name = _as_called(found.name, code, found.bindings[0])

    def _user_caller(self, frame: types.FrameType) -> types.FrameType | None:
        f = frame.f_back
        while f is not None and f is not self.stop:
            user = self.is_user.get(f.f_code)
            if user is None:
                user = self.is_user[f.f_code] = self._judge(f.f_code)
            if user:
                return f
            f = f.f_back
        return None

    def _name(self, frame: types.FrameType, code: types.CodeType) -> str:
        """``f``, ``Block.__call__``, ``mylayers.dense``: a function defined inside
        another is named from its innermost ``<locals>`` on, as its callers see it."""
        qualname = code.co_qualname.rsplit("<locals>.", 1)[-1]
        module = frame.f_globals.get("__name__")
        if module in (self.entry_module, "__main__", None):
            return qualname
        return f"{module.rsplit('.', 1)[-1]}.{qualname}"


def _as_called(name: str, code: types.CodeType, binding: Binding) -> str:
    """A function bound to a global under another name (``f = lambda x: ...``,
    ``step = jax.jit(plain)``) is named as its callers write it."""
    qualname = code.co_qualname.rsplit("<locals>.", 1)[-1]
    if isinstance(binding.owner, dict) and binding.key != code.co_name:
        return name[: len(name) - len(qualname)] + binding.key
    return name


def find_bindings(code: types.CodeType, frame: types.FrameType,
                  caller: types.FrameType) -> list[Binding]:
    """Where ``caller`` looks up the function running ``code`` in ``frame``."""
    klass = _method_class(code, frame)
    if klass is not None:
        return [Binding(klass, code.co_name)]
    found = [Binding(caller.f_globals, k) for k, v in list(caller.f_globals.items())
             if code_of(v) is code]
    written = names_written(caller.f_code)
    named = [b for b in found if b.key in written]
    found = named or found  # the names the caller writes, where it writes one
    own = frame.f_globals
    if not found and code_of(own.get(code.co_name)) is code:
        found.append(Binding(own, code.co_name))
    return found


@functools.lru_cache(maxsize=4096)
def names_written(code: types.CodeType) -> frozenset[str]:
    """The global names ``code`` looks up, its generator expressions' and comprehensions'
    included (``sum(jf(x) for _ in r)`` writes ``jf`` in the ``<genexpr>``'s code)."""
    inner = (names_written(c) for c in code.co_consts if isinstance(c, types.CodeType)
             and c.co_name in _NOT_FUNCTIONS)
    return frozenset(code.co_names).union(*inner)


def _method_class(code: types.CodeType, frame: types.FrameType) -> type | None:
    """The class whose attribute holds ``code`` when it runs as a method of its first argument."""
    if not code.co_argcount:
        return None
    first = frame.f_locals.get(code.co_varnames[0])
    if first is None or isinstance(first, type):
        return None
    for klass in type(first).__mro__:
        if code_of(vars(klass).get(code.co_name)) is code:
            return klass
    return None


def code_of(value: Any) -> types.CodeType | None:
    """The code object behind a function, a method descriptor, or a JAX wrapper of one."""
    for _ in range(6):
        if isinstance(value, types.FunctionType) and _checkpointed(value):
            # ``@jax.checkpoint``: the global holds JAX's wrapper (functools.wraps set it)
            value = value.__wrapped__  # type: ignore[attr-defined]
            continue
        if isinstance(value, types.FunctionType):
            return value.__code__
        if isinstance(value, staticmethod | classmethod):
            value = value.__func__
            continue
        if value is None or isinstance(value, types.ModuleType | type) or not callable(value):
            return None
        inner = getattr(value, "__wrapped__", None)
        value = inner if inner is not None else getattr(value, "fun", None)
    return None


def _checkpointed(fn: types.FunctionType) -> bool:
    """Whether ``fn`` is the wrapper ``jax.checkpoint`` returns (its closure holds JAX's
    ``fun_remat``): nesting it jits the checkpointed function where the name binds it."""
    return getattr(fn, "__wrapped__", None) is not None and any(
        getattr(getattr(c, "cell_contents", None), "__name__", "") == "fun_remat"
        for c in fn.__closure__ or ())


@dataclass
class Discovery:
    """What one profiled trace found: helpers by name, in order of first call."""

    helpers: dict[str, Found]
    error: BaseException | None = None


def discover(fn: Callable, args: tuple, kwargs: dict[str, Any], jit_options: dict[str, Any],
             extra_names: Iterable[str] = ()) -> Discovery:
    """Trace ``jax.jit(fn, **jit_options)`` once from cleared caches, recording user calls.

    An exception from the user's code is returned in ``Discovery.error``, not raised.
    """
    recorder = Recorder(extra_names)
    recorder.stop = sys._getframe()
    previous = sys.getprofile()
    jax.clear_caches()
    error = None
    sys.setprofile(recorder)
    try:
        jax.jit(fn, **jit_options).trace(*args, **kwargs)
    except Exception as exc:  # the user's code: the caller decides what it means
        error = exc
    finally:
        restore_profiler(previous, fn)
        jax.clear_caches()
    return Discovery(_unique_names(recorder.found.values()), error)


def restore_profiler(previous: Any, fn: Callable) -> None:
    """Put back the profiler ``sys.getprofile()`` returned before the trace of ``fn``.

    A ``cProfile.Profile`` (``%prun``, ``python -m cProfile``) is a C-level profiler:
    ``sys.getprofile()`` returns the object itself, which is not callable, so
    ``sys.setprofile`` cannot reinstall it; its ``enable()`` does, keeping the stats it
    collected and its ``subcalls``/``builtins`` settings. A Python-level profile
    function is set again as it was. Another C-level profiler that offers neither is
    left off, with a warning (better than one that raises on the next call).
    """
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
    """The ``stacklevel`` of the nearest caller outside jitmagic (a warning names it)."""
    level = 2
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            PACKAGE_DIR):
        level, frame = level + 1, frame.f_back
    return level


def _unique_names(found: Iterable[Found]) -> dict[str, Found]:
    out: dict[str, Found] = {}
    for f in found:
        name, n = f.name, 1
        while name in out:
            n += 1
            name = f"{f.name}#{n}"
        f.name = name
        out[name] = f
    return out

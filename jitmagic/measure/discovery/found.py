"""What discovery finds about a helper, and the rules on code objects its ways share."""

from __future__ import annotations

import contextlib
import functools
import gc
import inspect
import itertools
import sys
import types
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ...model.notes import Note
from ...model.saved.schema import printable
from ...usercode import sourceless, user_file, users_namespace
from .bindings import Binding

_SKIP_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
#: Code that is part of its caller: comprehensions, generator expressions, module bodies.
NOT_FUNCTIONS = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<module>"})


@dataclass
class Found:
    """A user function the trace called from user code: its calls and where it is bound."""

    name: str
    code: types.CodeType
    call_sites: int = 0  # in the program (:mod:`.call_graph`), not its Python calls
    bindings: list[Binding] = field(default_factory=list)
    self_type: type | None = None  # where it ran as a method: its ``self``'s class
    self_holds_arrays: bool = False  # that ``self`` holds arrays without being a pytree
    #: Whether a ``self`` was made before the call (not a clone linen's ``apply`` made).
    self_made_before: bool = False
    kernel: bool = False  # it runs only as a kernel's body (inside ``pallas_call``)
    held_by: str | None = None  # the library primitive that alone shows it, running it
    rules_only: Note | None = None  # why a custom_vjp/jvp whose rules alone built stays inline

    def bind(self, bindings: Iterable[Binding], first: bool) -> None:
        """Add the ``bindings`` not yet known; its ``first`` caller's name it as written there."""
        for b in bindings:
            if b not in self.bindings:
                self.bindings.append(b)
        if first and self.bindings:
            self.name = as_called(self.name, self.code, self.bindings[0])


@dataclass
class Discovery:
    """What the discovery trace found: helpers by name, its ``jaxpr``, how many traces."""

    helpers: dict[str, Found]
    error: BaseException | None = None
    jaxpr: Any = None
    traces: int = 1
    profiled: bool = False


class UserFunctions:
    """Which code objects are the user's functions (``extra``, ``own``: without a file)."""

    def __init__(self, extra: Iterable[str] = (), own: Iterable[types.CodeType] = ()):
        self.extra = set(extra)
        self.own = frozenset(own)
        self.known: dict[types.CodeType, bool] = {}

    def __call__(self, code: types.CodeType) -> bool:
        if code not in self.known:
            self.known[code] = self._judge(code)
        return self.known[code]

    def _judge(self, code: types.CodeType) -> bool:
        name = code.co_name
        if code.co_flags & _SKIP_FLAGS or name in NOT_FUNCTIONS or (
                name.startswith("__") and name.endswith("__") and name != "__call__"):
            return False
        if code in self.own:
            return True
        if code.co_qualname in self.extra or name in self.extra:
            return user_file(code.co_filename) or sourceless(code.co_filename)
        return user_file(code.co_filename)


def entry_namespace(entry: types.FunctionType | None) -> dict[str, Any] | None:
    """The globals of an entry that has no file of its own (``python -c``, ``exec``)."""
    ok = entry is not None and sourceless(entry.__code__.co_filename)
    return entry.__globals__ if ok and entry is not None else None


def sourceless_codes(entry: types.FunctionType | None) -> frozenset[types.CodeType]:
    """The user's code compiled from a string in ``entry``'s namespace and the user's modules."""
    if entry is None:
        return frozenset()
    own = entry_namespace(entry)
    namespaces = [vars(m) for m in list(sys.modules.values())
                  if isinstance(file := getattr(m, "__file__", None), str) and user_file(file)]
    if users_namespace(entry.__globals__, own):
        namespaces.append(entry.__globals__)
    return frozenset(c for namespace in {id(n): n for n in namespaces}.values()
                     for code in _sourceless_in(namespace) for c in (code, *defined_in(code)))


def defined_in(code: types.CodeType) -> Iterator[types.CodeType]:
    """The code objects defined inside ``code``, at any depth."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from defined_in(const)


def _sourceless_in(namespace: dict[str, Any]) -> list[types.CodeType]:
    """The string-compiled code of the functions and own classes' methods in ``namespace``."""
    values = list(namespace.values())
    functions = [v for v in values if isinstance(v, types.FunctionType)]
    for value in values:
        if isinstance(value, type) and value.__module__ == namespace.get("__name__"):
            functions += [f for v in list(vars(value).values()) if (f := function_of(v))]
    return [f.__code__ for f in functions if f.__globals__ is namespace
            and sourceless(f.__code__.co_filename)]


def user_frames(traceback: Any, is_user: Callable[[types.CodeType], bool],
                stop: types.CodeType | None) -> tuple[list[tuple[types.CodeType, int]], bool]:
    """User frames on a traceback, innermost first, up to ``stop``'s, and whether they got there."""
    frames = []
    codes, offsets = traceback.raw_frames() if traceback is not None else ([], [])
    for code, offset in zip(codes, offsets, strict=True):
        if is_user(code):
            frames.append((code, offset))
        if code is stop:
            return frames, True
    return frames, False


def helper_name(code: types.CodeType, module: str | None, entry_module: str | None) -> str:
    """``f``, ``Block.__call__``, ``mylayers.dense`` (a module other than the entry's)."""
    qualname = printable(code.co_qualname.rsplit("<locals>.", 1)[-1])
    if module in (entry_module, "__main__", None):
        return qualname
    return f"{printable(module.rsplit('.', 1)[-1])}.{qualname}"


def as_called(name: str, code: types.CodeType, binding: Binding) -> str:
    """A function bound to a global under another name, named as its callers write it."""
    qualname = code.co_qualname.rsplit("<locals>.", 1)[-1]
    if isinstance(binding.owner, dict) and binding.key != code.co_name:
        return name[: len(name) - len(qualname)] + binding.key
    return name


def global_bindings(code: types.CodeType, caller: types.CodeType,
                    namespace: dict[str, Any] | None, keys: list[str],
                    own: dict[str, Any] | None) -> list[Binding]:
    """The ``keys`` of ``namespace`` holding ``code``, else its module's global of its name."""
    found = [Binding(namespace, k) for k in keys]
    found = [b for b in found if b.key in names_written(caller)] or found
    if not found and own is not None and code_of(own.get(code.co_name)) is code:
        found.append(Binding(own, code.co_name))
    return found


def unique_names(found: Iterable[Found]) -> dict[str, Found]:
    """The helpers by name, a second one of the same name called ``name#2``."""
    out: dict[str, Found] = {}
    for f in found:
        name, n = f.name, 1
        while name in out:
            n += 1
            name = f"{f.name}#{n}"
        f.name = name
        out[name] = f
    return out


@functools.lru_cache(maxsize=4096)
def names_written(code: types.CodeType) -> frozenset[str]:
    """The global names ``code`` looks up, its comprehensions' included."""
    inner = (names_written(c) for c in code.co_consts if isinstance(c, types.CodeType)
             and c.co_name in NOT_FUNCTIONS)
    return frozenset(code.co_names).union(*inner)


def code_of(value: Any) -> types.CodeType | None:
    """The code behind a function, a method descriptor, or a JAX wrapper of one."""
    fn = function_of(value)
    return fn.__code__ if fn is not None else None


def function_of(value: Any) -> types.FunctionType | None:
    """The function behind a function, a method descriptor, or a JAX wrapper of one."""
    for _ in range(6):
        if isinstance(value, types.FunctionType) and _checkpointed(value):
            # ``@jax.checkpoint``: the global holds JAX's wrapper (functools.wraps set it)
            value = value.__wrapped__  # type: ignore[attr-defined]
            continue
        if isinstance(value, types.FunctionType):
            return value
        if isinstance(value, staticmethod | classmethod):
            value = value.__func__
            continue
        if value is None or isinstance(value, types.ModuleType | type) or not callable(value):
            return None
        inner = getattr(value, "__wrapped__", None)
        value = inner if inner is not None else getattr(value, "fun", None)
    return None


def innermost(value: Any) -> types.FunctionType | None:
    """The function under every wrapper of ``value`` (``__wrapped__``, ``__func__``, ``func``)."""
    found = None
    for _ in range(8):
        if isinstance(value, types.FunctionType):
            found = value
        value = value.func if isinstance(value, functools.partial) else \
            getattr(value, "__wrapped__", None) or getattr(value, "__func__", None)
        if value is None:
            break
    return found


def _checkpointed(fn: types.FunctionType) -> bool:
    """Whether ``fn`` is ``jax.checkpoint``'s wrapper (its closure holds ``fun_remat``)."""
    return getattr(fn, "__wrapped__", None) is not None and any(
        getattr(getattr(c, "cell_contents", None), "__name__", "") == "fun_remat"
        for c in fn.__closure__ or ())


def closure_values(fn: types.FunctionType) -> list[Any]:
    """What ``fn``'s closure holds, its empty cells left out."""
    out = []
    for cell in fn.__closure__ or ():
        with contextlib.suppress(ValueError):  # an empty cell
            out.append(cell.cell_contents)
    return out


def held_values(obj: Any, most: int | None = None) -> list[Any]:
    """What an object holds, for the walks over objects (at most ``most`` of a container's)."""
    if isinstance(obj, functools.partial):
        return [obj.func, *obj.args, *obj.keywords.values()]
    if isinstance(obj, types.FunctionType):
        return [*closure_values(obj), *(obj.__defaults__ or ())]
    if isinstance(obj, types.MethodType):
        return [obj.__func__, obj.__self__]
    if isinstance(obj, dict):
        obj = obj.values()
    elif not isinstance(obj, list | tuple | set | frozenset):
        try:
            obj = object.__getattribute__(obj, "__dict__")
        except Exception:  # noqa: BLE001 (no __dict__, or a class that refuses it)
            return []
        obj = obj.values() if isinstance(obj, dict) else ()  # a class's is a proxy
    return list(itertools.islice(obj, most))


#: jitmagic's copies of helpers (:mod:`~jitmagic.measure.variants.trampoline`): never the user's.
COPIES: weakref.WeakSet[types.FunctionType] = weakref.WeakSet()


def functions_of(code: types.CodeType) -> list[types.FunctionType]:
    """The live function objects whose code is ``code``, jitmagic's copies left out."""
    return functions_of_all([code])[code]


def functions_of_all(codes: Iterable[types.CodeType]
                     ) -> dict[types.CodeType, list[types.FunctionType]]:
    """:func:`functions_of` each of ``codes``, from one scan of the heap."""
    wanted = list(dict.fromkeys(codes))
    out: dict[types.CodeType, list[types.FunctionType]] = {c: [] for c in wanted}
    if not wanted:
        return out
    for f in gc.get_referrers(*wanted):
        if isinstance(f, types.FunctionType) and f.__code__ in out and f not in COPIES:
            out[f.__code__].append(f)
    return out

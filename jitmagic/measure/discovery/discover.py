"""Which of the user's functions a trace really calls, and where each one is bound, from one plain
trace; a trace that raises is traced again under a ``sys.setprofile`` hook instead."""

from __future__ import annotations

import _lsprof
import contextlib
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

from ..._compat import jit_info
from ...model.notes import Inline
from ...usercode import PACKAGE_DIR
from ..calls.arguments import holds_arrays
from ..sampling.structure import distinct_jaxprs
from .bindings import Binding, swapped
from .call_graph import CallGraph, Calls, Held, _position, held_functions, kernel_bodies, read_calls
from .found import (
    Discovery,
    Found,
    UserFunctions,
    as_called,
    closure_values,
    code_of,
    function_of,
    functions_of,
    global_bindings,
    helper_name,
    names_written,
    sourceless_codes,
    unique_names,
)
from .live_objects import Live, functions_behind, user_entry


def discover(fn: Callable, args: tuple, kwargs: dict[str, Any], jit_options: dict[str, Any],
             extra_names: Iterable[str] = (), roots: Iterable[Any] = ()) -> Discovery:
    """Trace ``jax.jit(fn)`` once and read its helpers; the user's exception in ``error``."""
    here = sys._getframe().f_code
    traced, error = trace_once(fn, args, kwargs, jit_options)
    if error is not None:
        return Discovery({}, error)
    jaxpr = traced.jaxpr
    is_user = UserFunctions(extra_names, sourceless_codes(user_entry(fn)))
    graph = read_calls(jaxpr, is_user, stop=here)
    held = _add_held(graph, held_functions(jaxpr, is_user))
    live = Live((fn, args, kwargs, *roots))
    behind = [f.__code__ for f in functions_behind(fn)]
    entry = next((code for code in behind if code in graph.roots), None)
    if entry is not None:  # the user's entry function among the program's roots
        graph.adopt(entry)
    found, unseen = _helpers(graph, live, entry)
    found = without_decorated(found, live.functions.get, behind)
    entry_space = live.globals_of(entry) if entry is not None else None
    found += rules_only(custom_calls(jaxpr, is_user), graph, live.globals_of,
                        [f.code for f in found], (entry_space or {}).get("__name__"))
    kernels = kernel_bodies(jaxpr, is_user)
    for f in found:
        f.kernel, f.held_by = f.code in kernels, held.get(f.code)
    if unseen:  # methods whose `self` was made during the trace: trace again to see it
        caught = caught_selves(fn, args, kwargs, jit_options, unseen)
        for f in found:
            if f.code in unseen:
                this = caught.get(f.code)
                f.self_type = type(this) if this is not None else unseen[f.code]
                f.self_holds_arrays = holds_arrays(this)
    return Discovery(unique_names(found), None, jaxpr, traces=1 + bool(unseen))


def _add_held(graph: CallGraph, held: dict[types.CodeType, Held]) -> dict[types.CodeType, str]:
    """Add the functions only library primitives show, called by the holding user function."""
    out = {}
    for code, h in held.items():
        if code not in graph.functions and h.caller is not None:
            graph.functions[code] = Calls(h.equations, {h.caller: None})
            out[code] = h.primitive
    return out


def trace_once(fn: Callable, args: tuple, kwargs: dict[str, Any], jit_options: dict[str, Any],
               checking: bool = False) -> tuple[Any, Exception | None]:
    """(traced, None) or (None, what the user's code raised), from cleared caches."""
    jax.clear_caches()  # a warm trace cache would hide a helper's body
    filtering = jax.config.values["jax_traceback_filtering"]
    try:
        if checking:
            jax.config.update("jax_traceback_filtering", "off")
        with jax.checking_leaks() if checking else contextlib.nullcontext():
            return jax.jit(fn, **jit_options).trace(*args, **kwargs), None
    except Exception as exc:  # the user's code: the caller decides what it means
        return None, exc
    finally:
        jax.config.update("jax_traceback_filtering", filtering)
        jax.clear_caches()


def _helpers(graph: CallGraph, live: Live, entry: types.CodeType | None,
             ) -> tuple[list[Found], dict[types.CodeType, type]]:
    """The call graph's helpers, and the methods whose ``self`` no live object shows."""
    if entry is None:  # a library function as the entry: the first root stands for it
        entry = next((c for c in graph.roots if not graph.functions[c].callers), None)
    namespace = live.globals_of(entry) if entry is not None else None
    entry_module = namespace.get("__name__") if namespace else None
    live.add_globals_of(graph.functions)
    out, unseen = [], {}
    for code, calls in graph.functions.items():
        if calls.callers:
            found, klass = _found(code, calls, live, entry_module)
            if klass is not None:
                unseen[code] = klass
            out.append(found)
    return out, unseen


def _found(code: types.CodeType, calls: Calls, live: Live,
           entry_module: str | None) -> tuple[Found, type | None]:
    """The helper ``code``, and its class where its ``self`` is still to be seen."""
    own = live.globals_of(code)
    found = Found(helper_name(code, own.get("__name__") if own else None, entry_module),
                  code, calls.call_sites)
    klass = live.defining_class(code) if code.co_argcount else None
    unseen = None
    if code.co_argcount and code.co_varnames[0] == "self":
        this = _self_of(klass, live)
        if this is None:
            unseen = klass
        else:
            found.self_type, found.self_holds_arrays, found.self_made_before = this
    searched: set[int] = set()
    for i, caller in enumerate(calls.callers):
        namespace = live.globals_of(caller)
        if id(namespace) not in searched:
            searched.add(id(namespace))
            found.bind(_bindings(code, klass, caller, namespace, own, live), first=i == 0)
    return found, unseen


def _self_of(klass: type | None, live: Live) -> tuple[type | None, bool, bool] | None:
    """(``self``'s class, holds arrays, made before the call); None where no live object tells."""
    if klass is None:  # `self` of a function outside a class: nothing says what it was
        return None, False, False
    this = live.instance(klass)
    if this is not None:
        return type(this), holds_arrays(this), True
    # a module class made during the trace (linen binds clones) keeps no arrays as attributes
    if any(k.__module__.startswith(_MODULE_PACKAGES) for k in klass.__mro__):
        return klass, False, False
    return None


#: Module libraries whose instances keep their arrays where jit can take them.
_MODULE_PACKAGES = ("flax.linen", "flax.nnx", "haiku", "equinox")


def _bindings(code: types.CodeType, klass: type | None, caller: types.CodeType,
              namespace: dict[str, Any] | None, own: dict[str, Any] | None,
              live: Live) -> list[Binding]:
    """Where ``caller`` looks up ``code``: its defining class's attribute, else a global."""
    raw = vars(klass).get(code.co_name) if klass is not None else None
    if klass is not None and code_of(raw) is code \
            and not isinstance(raw, staticmethod | classmethod):
        return [Binding(klass, code.co_name)]
    keys = live.keys_holding(namespace, code) if namespace is not None else []
    return global_bindings(code, caller, namespace, keys, own)


def caught_selves(fn: Callable, args: tuple, kwargs: dict[str, Any],
                  jit_options: dict[str, Any], methods: dict[types.CodeType, type],
                  ) -> dict[types.CodeType, Any]:
    """The first ``self`` each of ``methods`` is called with in one more trace."""
    caught: dict[types.CodeType, Any] = {}
    swaps = []
    for code, klass in methods.items():
        raw = vars(klass)[code.co_name]
        swaps.append((Binding(klass, code.co_name), raw, _keeping_self(raw, code, caught)))
    with swapped(swaps):
        trace_once(fn, args, kwargs, jit_options)  # an error: the first trace passed, it stands
    return caught


def _keeping_self(raw: Any, code: types.CodeType, caught: dict[types.CodeType, Any],
                  ) -> Callable:
    """``raw`` (a class's attribute) as a method that notes its first ``self``."""

    @functools.wraps(raw)
    def keeping(self: Any, *args: Any, **kwargs: Any) -> Any:
        caught.setdefault(code, self)
        bound = raw.__get__(self, type(self)) if hasattr(raw, "__get__") else \
            functools.partial(raw, self)
        return bound(*args, **kwargs)

    return keeping


#: JAX's ``__call__`` of each custom-derivative class: on every equation its call traces.
_CALLS = {inspect.unwrap(kind.__call__).__code__: kind
          for kind in (jax.custom_vjp, jax.custom_jvp)}
#: The primitives that hold a custom function's body and rules (their equations count).
_HOLDERS = frozenset({"custom_vjp_call", "custom_jvp_call"})


@dataclass
class RuleCalls:
    """What calls of custom-derivative functions from one user function traced."""

    equations: int = 0
    #: The call sites (source positions in the caller) the equations were traced at.
    sites: set[Any] = field(default_factory=set)


def custom_calls(jaxpr: Any, is_user: Callable[[types.CodeType], bool],
                 ) -> dict[tuple[types.CodeType, type], RuleCalls]:
    """By (user caller, custom class): the equations traced under a custom_vjp/jvp's call."""
    out: dict[tuple[types.CodeType, type], RuleCalls] = {}
    for current in distinct_jaxprs(jaxpr):
        for eqn in current.eqns:
            if eqn.primitive.name in _HOLDERS or eqn.source_info.traceback is None:
                continue
            found = _caller(eqn.source_info.traceback, is_user)
            if found is not None:
                key, site = found
                calls = out.setdefault(key, RuleCalls())
                calls.equations += 1
                calls.sites.add(site)
    return out


def _caller(tb: Any, is_user: Callable[[types.CodeType], bool],
            ) -> tuple[tuple[types.CodeType, type], Any] | None:
    """((the user function, the custom class), its call site) of the innermost custom call."""
    codes, offsets = tb.raw_frames()
    for i, code in enumerate(codes):
        kind = _CALLS.get(code)
        if kind is not None:
            for outer, offset in zip(codes[i + 1:], offsets[i + 1:], strict=True):
                if is_user(outer):
                    return (outer, kind), _position(outer, offset)
            return None
    return None


def rules_only(calls: dict[tuple[types.CodeType, type], RuleCalls], graph: CallGraph,
               namespaces: Callable[[types.CodeType], dict[str, Any] | None],
               known: Iterable[types.CodeType], entry_module: str | None) -> list[Found]:
    """The custom functions whose rules built equations but whose body did not, with why."""
    out, done = [], set(known)
    for (caller, kind), traced in calls.items():
        space = namespaces(caller) or {}
        named = [(k, v) for k in sorted(names_written(caller))
                 if isinstance(v := space.get(k), kind)
                 and (c := code_of(v)) is not None and c not in graph.functions
                 and c not in done]
        for key, fn in named:
            code = code_of(fn)
            assert code is not None  # checked above
            done.add(code)
            binding = Binding(space, key)
            found = Found(helper_name(code, space.get("__name__"), entry_module), code,
                          len(traced.sites), [binding])
            found.name = as_called(found.name, code, binding)
            found.rules_only = _why(fn, caller, traced if len(named) == 1 else None)
            out.append(found)
    return out


def _why(fn: Any, caller: types.CodeType, traced: RuleCalls | None) -> Inline:
    """Why a custom function whose rules alone add equations stays inline."""
    equations = traced.equations if traced else None
    sites = len(traced.sites) if traced else 0
    kind, rules = (("custom_vjp", ("fwd", "bwd")) if isinstance(fn, jax.custom_vjp)
                   else ("custom_jvp", ("jvp",)))
    names = tuple(getattr(getattr(fn, r, None), "__name__", r) for r in rules)
    return Inline("inline_rules_only", kind, names, equations, sites, caller.co_name)


def without_decorated(found: list[Found], live_function: Callable[[types.CodeType], Any],
                      entry_codes: Iterable[types.CodeType]) -> list[Found]:
    """``found`` with each decorator's wrapper and what it wraps made one helper."""
    by_code = {f.code: f for f in found}
    entry = set(entry_codes)
    dropped: set[types.CodeType] = set()
    for f in found:
        if f.code in dropped:
            continue
        wrapped = _wrapped_by(f, by_code, live_function(f.code))
        inners = [c for c in wrapped if c not in dropped]
        if len(inners) == 1 or (inners and any(jit_info(b.original) is not None
                                               for b in f.bindings)):  # the user's jit
            dropped.add(inners[0])
            f.name = by_code[inners[0]].name
        elif len(inners) > 1:  # a shared wrapper: each function it wraps is a helper
            dropped.add(f.code)
            for code in inners:
                if code in entry:
                    dropped.add(code)
                    continue
                inner = by_code[code]
                inner.bindings += [b for b in wrapped[code] if b not in inner.bindings]
    return [f for f in found if f.code not in dropped]


def _wrapped_by(f: Found, by_code: dict[types.CodeType, Found], live: Any,
                ) -> dict[types.CodeType, list[Binding]]:
    """The found functions ``f``'s function objects wrap, by code, with ``f``'s bindings."""
    out: dict[types.CodeType, list[Binding]] = {}
    held = [(b, function_of(b.original)) for b in f.bindings]
    for binding, fn in [*held, (None, live)]:
        code = _inner_of(fn, f.code, by_code, binding.key if binding else None)
        if code is not None:
            bindings = out.setdefault(code, [])
            if binding is not None and binding not in bindings:
                bindings.append(binding)
    if out:
        for fn in functions_of(f.code):
            code = _inner_of(fn, f.code, by_code, closure=True)
            if code is not None:
                out.setdefault(code, [])
    return out


def _inner_of(fn: Any, wrapper: types.CodeType, by_code: dict[types.CodeType, Found],
              key: str | None = None, closure: bool = False) -> types.CodeType | None:
    """The found function's code ``fn`` runs: its ``__wrapped__``, else its closure's."""
    if not isinstance(fn, types.FunctionType) or fn.__code__ is not wrapper:
        return None
    inner: Any = getattr(fn, "__wrapped__", None)
    for _ in range(8):
        if not isinstance(inner, types.FunctionType):
            break
        if inner.__code__ in by_code and inner.__code__ is not wrapper:
            return inner.__code__
        inner = getattr(inner, "__wrapped__", None)
    held = {v.__code__ for v in closure_values(fn) if isinstance(v, types.FunctionType)
            and v.__code__ in by_code and v.__code__ is not wrapper}
    if len(held) != 1:
        return None
    code = held.pop()
    return code if closure or key == code.co_name else None


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
        code = frame.f_code
        if event != "call" or not self.is_user(code):
            return
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
            out.append((caller.f_code, _position(caller.f_code, caller.f_lasti)))
            caller = self._user_caller(caller)
        return tuple(out)

    def _user_caller(self, frame: types.FrameType) -> types.FrameType | None:
        f = frame.f_back
        while f is not None and f is not self.stop:
            if self.is_user(f.f_code):
                return f
            f = f.f_back
        return None


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
    first = frame.f_locals.get(code.co_varnames[0]) if code.co_argcount else None
    if first is None or isinstance(first, type):
        return None
    return next((k for k in type(first).__mro__ if code_of(vars(k).get(code.co_name)) is code),
                None)


def profiled_discovery(fn: Callable, args: tuple, kwargs: dict[str, Any],
                       jit_options: dict[str, Any], extra_names: Iterable[str] = ()
                       ) -> Discovery:
    """Trace ``fn`` once under the hook; the user's exception is in ``Discovery.error``."""
    recorder = ProfileHook(extra_names, sourceless_codes(user_entry(fn)))
    recorder.stop = sys._getframe()
    previous = sys.getprofile()
    sys.setprofile(recorder)
    try:
        traced, error = trace_once(fn, args, kwargs, jit_options)
    finally:
        restore_profiler(previous, fn)
    return Discovery(unique_names(recorder.found.values()), error,
                     traced and traced.jaxpr, profiled=True)


def restore_profiler(previous: Any, fn: Callable) -> None:
    """Put back the profiler that ran before, or leave it off with a warning where it cannot be."""
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
